"""The plan as text and as JSON, and a plan against a measured run."""
import json

import numpy as np

from mrjobs.runtime.tempdisk import size_text as _size
from mrjobs.strategies.sizing import DEFAULT_BLOCK_ENTRIES

__all__ = ["format_plan", "as_json", "format_comparison", "comparison"]


# -- printing --------------------------------------------------------------------

def _n(x):
    """A count for people: 1,234,567 below 10^10, else 1.23e+12."""
    return format(int(round(x)), ",") if x < 1e10 else "%.3g" % x




def _duration(s):
    if s < 120:
        return "%.0f s" % s
    if s < 2 * 3600:
        return "%.0f min" % (s / 60)
    if s < 3 * 86400:
        return "%.1f h" % (s / 3600)
    return "%.1f days" % (s / 86400)


def _sample_line(e, o):
    parts = []
    for f, name in zip(e["fams"], ("input", "queries")):
        s = f.s
        how = ("the whole input" if s.complete else
               "the documents hashed below a bound in all %s posting lists" % _n(s.lines)
               if o.input_format == "postings" else "%s evenly spaced lines" % _n(s.lines))
        parts.append("%s: %d file(s), %s; sample %s, %s vectors%s -> %s vectors%s" % (
            name, s.files, _size(s.total_bytes), how, _n(s.n),
            " (%d bad lines)" % s.bad if s.bad else "", _n(f.N),
            " (--vectors)" if name == "input" and o.vectors else ""))
    return parts


#: a prefix feature's group is a straggler past this many times a reduce task's share
STRAGGLER = 3.0


def _warnings(e, o):
    out = []
    if e.get("blocks_over_limit"):
        out.append("the job's default rule (blocks of at most %s entries) gives %s blocks for "
                   "this input, beyond the job's limit of %s: planned with --blocks %d; the "
                   "blocks strategy does not suit a corpus this size (--max-df, --strategy "
                   "stripes, or a part of the corpus)" % (
                       _n(DEFAULT_BLOCK_ENTRIES), _n(e["blocks_over_limit"]),
                       _n(e["blocks"]), e["blocks"]))
    if o.reducer_memory and e["memory"] > o.reducer_memory * 2 ** 20:
        out.append("a %s reducer needs about %s, more than --reducer-memory %d MB: %s" % (
            "block-pair" if o.strategy == "blocks" else "stripes", _size(e["memory"]),
            o.reducer_memory, "use more blocks (--blocks %d), --max-df or bigger reducers"
            % e["suggested_blocks"] if o.strategy == "blocks" and e["suggested_blocks"] >
            e["blocks"] else "use --max-df or bigger reducers" if o.strategy == "blocks"
            else "use --max-df"))
    # (past --top-k 4x a vector's entries, fewer blocks are the better trade)
    if (o.strategy == "blocks" and e["block_pairs"] < e["reducers"]
            and e["suggested_blocks"] > e["blocks"]):
        out.append("%d block pairs for %d reduce tasks: some reducers of the pairs step idle "
                   "(--blocks %d)" % (e["block_pairs"], e["reducers"], e["suggested_blocks"]))
    share = e.get("largest_group_share") or 0.0
    if o.strategy == "prefix" and share * e["reducers"] > STRAGGLER:
        out.append("one prefix feature's group holds %.1f%% of the pair step's products, "
                   "%.1fx a reduce task's share of %d: its reducer is the straggler (the "
                   "strategy does not split a group; a higher --threshold or --max-df "
                   "shortens it)" % (100 * share, share * e["reducers"], e["reducers"]))
    if getattr(o, "ids", None) == "any":
        out.append("--ids any: the second run that gives the ids back (its shuffle about "
                   "twice the output's) is not in this plan")
    if e.get("cut_resolution", 99) < 10:
        out.append("--max-df %d is %.2g vectors of the sample: the df-cut is decided on "
                   "features seen a few times, the kept products are uncertain (raise "
                   "--sample-lines)" % (o.max_df, e["cut_resolution"]))
    return out


def _alternative_line(e, o, alt):
    """One line: which of blocks and prefix is the cheaper for this job (by
    the planned wall time, by the bytes shuffled where no time is planned)."""
    mine = (o.strategy, e["wall_s"], sum(s["bytes"] for s in e["steps"]))
    theirs = (alt["strategy"], alt["wall_s"], alt["shuffle_bytes"])
    timed = mine[1] is not None and theirs[1] is not None
    better = theirs[1] < mine[1] if timed else theirs[2] < mine[2]
    best, other = (theirs, mine) if better else (mine, theirs)

    def text(p):
        return "%s shuffled%s" % (_size(p[2]), ", %s wall" % _duration(p[1]) if timed else "")
    return "strategy: %s is the cheaper here (%s; %s: %s)%s" % (
        best[0], text(best), other[0], text(other),
        ": pass --strategy %s to the job" % best[0] if better else "")


def format_plan(e, o):
    """The plan as text."""
    lines = ["mrsparse plan: " + s for s in _sample_line(e, o)]
    lines.append("  entries: %s (kept: %s)%s" % (
        _n(sum(f.s.lengths.sum() * f.scale for f in e["fams"])), _n(e["kept_entries"]),
        "; --max-df %d cuts %s of the %s features seen in the sample" % (
            o.max_df, _n(e["features_cut"]), _n(e["features_seen"])) if o.max_df else ""))
    lines.append("  products (multiply-adds, sum df(df-1)/2): %s" % _n(e["products"]))
    lines.append("  pairs sharing a feature: %s; with a score kept: %s" % (
        _n(e["pairs"]["pairs"]), _n(e["pairs"]["kept_pairs"])))
    if o.strategy == "blocks":
        lines.append("  blocks: %d (%s), %s block pairs; block-pair products computed: %s"
                     % (e["blocks"], "--blocks" if o.blocks else "the job's default",
                        _n(e["block_pairs"]), _n(e["products_computed"])))
        if e["df_cut_form"] is not None:
            lines.append("    --max-df in the %s form (%s)" % (e["df_cut_form"], {
                "counts": "count tables to every block pair, 3 steps",
                "join": "df and regroup steps, 5 steps"}[e["df_cut_form"]]))
        if e["suggested_blocks"] != e["blocks"] and (o.reducers or o.reducer_memory):
            lines.append("    for %d reduce tasks%s: --blocks %d" % (
                e["reducers"], " of %d MB" % o.reducer_memory if o.reducer_memory else "",
                e["suggested_blocks"]))
    if o.strategy == "prefix":
        lines.append("  prefixes: %.1f features a vector on average; %s copies of vectors, "
                     "%s entries sent to %s keys (prefix features of the sample%s); products "
                     "computed: %s (the largest group's share %.1f%%)" % (
                         e["prefix_mean"], _n(e["prefix_copies"]), _n(e["prefix_entries"]),
                         _n(e["block_pairs"]), ", %s of them split in parts" % _n(
                             e["split_features"]) if e["split_features"] else "",
                         _n(e["products_computed"]), 100 * e["largest_group_share"]))
    alt = e.get("alternative")
    if alt is not None:
        lines.append("  " + _alternative_line(e, o, alt))
    lines.append("  peak memory of a process: about %s (%s)" % (
        _size(e["peak_rss_bytes"]), ", ".join("%s %s" % (k, _size(v)) for k, v in sorted(
            e["memory_by_kind"].items(), key=lambda kv: -kv[1]))))
    if e.get("temp_disk_bytes") is not None:
        lines.append("  temporary disk (local runner): about %s at its peak, %.1fx the input%s"
                     % (_size(e["temp_disk_bytes"]),
                        e["temp_disk_bytes"] / max(e["input_bytes"], 1),
                        "; with the output, %s, staged there for stdout (--output-dir puts "
                        "it beside that directory)" % _size(e["staged_output_bytes"])
                        if e.get("staged_output_bytes") else ""))
    if e.get("prune_pays") is not None:
        lines.append("  pruning: %s (the bounds leave %.0f%% of a block pair's products "
                     "live in the sample; the job prunes a block pair at <= %.0f%%)" % (
                         "pays" if e["prune_pays"] else "does not pay: every product runs",
                         100 * e["prune_live_share"], 100 * _live_share_max()))
    by_step = all("reducers" in s for s in e["steps"])
    lines.append("  shuffle (bytes into the reducers), %s:" % (
        "reduce tasks by step" if by_step else "%d reduce tasks a step" % e["reducers"]))
    for i, s in enumerate(e["steps"]):
        lines.append("    step %d %-8s %10s  (%s records, %s entries%s)" % (
            i + 1, s["step"], _size(s["bytes"]), _n(s["records"]), _n(s["entries"]),
            "; %d reduce task%s" % (s["reducers"], "" if s["reducers"] == 1 else "s")
            if by_step else ""))
    lines.append("    total         %10s" % _size(sum(s["bytes"] for s in e["steps"])))
    lines.append("  time: " + _time_line(e, o))
    lines += ["  warning: " + w for w in _warnings(e, o)]
    return "\n".join(lines)


def _live_share_max():
    from mrjobs.pairs.kernel import LIVE_SHARE_MAX
    return LIVE_SHARE_MAX


def _time_line(e, o):
    cal = e.get("calibration")
    if e["seconds"] is None:
        return ("no estimate: no calibration at %s (run python -m mrjobs.plan --calibrate)"
                % o.calibration)
    machine = cal.get("machine")
    cpu = machine.get("cpu_model") if isinstance(machine, dict) else None
    date = cal.get("date")
    return ("about %s wall, %s of CPU, with %d reduce slots, each as fast as one core of %s "
            "(constants measured %s, %s)" % (_duration(e["wall_s"]), _duration(e["cpu_s"]),
                                             e["reducers"],
                                  cpu if isinstance(cpu, str) else "an unnamed machine",
                                  date[:10] if isinstance(date, str) else "on an unknown date",
                                  o.calibration))


def as_json(e):
    """The plan's numbers as a JSON-able dict."""
    out = {k: v for k, v in e.items()
           if k not in ("fams", "pairs", "calibration", "df_hat", "prefix_groups")}
    out["vectors"] = [f.N for f in e["fams"]]
    out["pairs"] = float(e["pairs"]["pairs"])
    out["kept_pairs"] = float(e["pairs"]["kept_pairs"])
    return json.loads(json.dumps(out, default=float))


def format_comparison(rows):
    out = ["%-30s %16s %16s %8s" % ("", "plan", "run", "plan/run")]
    for what, plan, real in rows:
        ratio = "%.3f" % (plan / real) if real else "-"
        show = _size if what.endswith(("bytes", "memory", "disk", "sort")) else (
            lambda x: "%.1f s" % x) if what.endswith(" s") else _n
        out.append("%-30s %16s %16s %8s" % (what, show(plan), show(real), ratio))
    return "\n".join(out)


def comparison(e, run):
    """Rows (what, plan, run) of a plan against a measured run."""
    rows = [("step %d %s bytes" % (i + 1, s["step"]), s["bytes"], b)
            for i, (s, b) in enumerate(zip(e["steps"], run["step_bytes"]))]
    rows.append(("shuffle bytes", sum(s["bytes"] for s in e["steps"]),
                 sum(run["step_bytes"])))
    w = run["work"]
    if "partial products" in w:
        rows.append(("products (partial products)", e["products"], w["partial products"]))
    if "products computed" in w:
        rows.append(("products computed", e["products_computed"], w["products computed"]))
        rows.append(("blocks", e["blocks"], _blocks_of(w.get("block pairs", 0),
                                                         len(e["fams"]) == 2)))
    if "pairs scored" in w:
        rows.append(("pairs scored", e["pairs"]["pairs"], w["pairs scored"]))
    if e["wall_s"] is not None:
        rows.append(("wall s", e["wall_s"], run["seconds"]))
        rows.append(("CPU s", e["cpu_s"], run["cpu_s"]))
    rows.append(("peak memory of a task or sort", max(
        v for k, v in e["memory_by_kind"].items() if k != "launcher"), run["peak_rss_bytes"]))
    if e.get("temp_disk_bytes") is not None:
        rows.append(("temporary disk", e["temp_disk_bytes"], run["temp_disk_bytes"]))
    return rows


def _blocks_of(pairs, queries):
    """B from the number of block pairs B(B+1)/2 (B*B under --queries)."""
    if queries:
        return int(round(np.sqrt(pairs)))
    return int(round((np.sqrt(8 * pairs + 1) - 1) / 2))
