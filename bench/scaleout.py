"""Scale out: the prefix strategy's shuffle against the blocks strategy's, on
a real corpus of short documents (:mod:`bench.wordnet`, the 117,609 glosses of
WordNet 3.0), cosine ``--threshold 0.5`` and ``0.8``; and ``--top-k 10``
(blocks alone: the prefix strategy takes only a threshold).

Each run is the job on the local runner (2 cores), its shuffle the bytes of
every step's sorted reducer input (the runner's report, as ``bench.jobs``
takes it), against the corpus's compact records (``mrjobs.convert --to
compact``).  The blocks strategy runs with ``--blocks 16``: on a cluster its
block count grows with the corpus (the planner's count for 10^7 documents on
100 reducers of 4 GB is in the table), and each vector travels once a block.
Also: the planner's bytes by step for the prefix runs against the measured
ones; the largest prefix feature's share of the pair step's products; the
planner's wall time for 10^7 documents (a sample of the corpus, ``--vectors
10000000 -r hadoop --reducers 100 --reducer-memory 4096``), both strategies.

``--cluster`` adds runs on the HDFS + YARN minicluster of the engine tests
(prefix at both thresholds, blocks at 0.5; 2 map and 2 reduce tasks a step),
Hadoop's own counters by step, and the planner's bytes (``-r hadoop
--reducers 2``) against its reduce shuffle bytes.

``python -m bench.scaleout`` prints the tables and targets and writes
``bench/results/scaleout.json``; ``--quick``: the first 20,000 documents.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import common, hadoop, measure, wordnet
from mrjobs.runtime.localsettings import REPORT_ENV

THRESHOLDS = (0.5, 0.8)
#: the blocks strategy's block count in the measured runs
BLOCKS = 16
#: targets: shuffle over the compact input; the straggler's share for 100 reducers
SHUFFLE_TARGET = 3.0
PLAN_BAND = (0.7, 1.3)
SLOTS = 100
WALL_TARGET_S = 20 * 60
#: the top-k row: k, its shuffle target over the compact input, its 10^7 plan's wall
TOP_K = 10
TOP_K_SHUFFLE_TARGET = 8.0
TOP_K_WALL_TARGET_S = 2 * 3600
CLUSTER = ["--vectors", "10000000", "-r", "hadoop", "--reducers", str(SLOTS),
           "--reducer-memory", "4096"]


def _cut(threshold):
    """The options of a row: ``--threshold T``, or ``--top-k`` for the top-k row (None)."""
    return ["--top-k", str(TOP_K)] if threshold is None else ["--threshold", str(threshold)]


def run(corpus, strategy, threshold, tmp):
    """One local run: wall, CPU, shuffle by step, the output's digest
    (``threshold`` None: the top-k row)."""
    out, work = Path(tmp) / "out.txt", Path(tmp) / ("tmp-%s-%s" % (strategy, threshold))
    report = Path(tmp) / "report.json"
    cmd = [sys.executable, "-m", "mrjobs.dot_products", str(corpus), "-r", "local",
           "--num-cores", "2", "--measure", "cosine", *_cut(threshold),
           "--strategy", strategy, "--local-tmp-dir", str(work)] + (
        ["--blocks", str(BLOCKS)] if strategy == "blocks" else [])
    os.environ[REPORT_ENV] = str(report)
    try:
        m = measure.run_checked(cmd, out, 1.0)
    finally:
        del os.environ[REPORT_ENV]
    noted = json.loads(report.read_text())
    steps = [noted["shuffle_bytes"][k] for k in sorted(noted["shuffle_bytes"], key=int)]
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    counters = measure.parse_counters(m["stderr"])
    return {"strategy": strategy, "threshold": threshold, "wall_s": m["wall_s"],
            "cpu_s": m["cpu_s"], "shuffle_by_step": steps, "shuffle_bytes": sum(steps),
            "output_sha256": digest, "output_lines": out.read_bytes().count(b"\n"),
            "counters": counters}


def plan(corpus, strategy, threshold, extra=()):
    """The planner's JSON plan for the same options."""
    cmd = [sys.executable, "-m", "mrjobs.plan", str(corpus), "--measure", "cosine",
           *_cut(threshold), "--strategy", strategy, "--json"] + list(extra)
    if strategy == "blocks" and "--vectors" not in extra:
        cmd += ["--blocks", str(BLOCKS)]
    out = subprocess.run(cmd, capture_output=True, check=True, text=True)
    return json.loads(out.stdout)["plan"]


def compact_bytes(corpus, tmp):
    """Bytes of the corpus's compact records (:func:`bench.hadoop.convert`)."""
    path = Path(tmp) / "compact.mrs"
    hadoop.convert(corpus, path, "compact")
    return path.stat().st_size


def rows_for(corpus, t, tmp, compact, log):
    """The prefix and blocks rows of one threshold (None: the top-k row, blocks
    alone: the prefix strategy takes only a threshold)."""
    rows = []
    for strategy in ("prefix", "blocks") if t is not None else ("blocks",):
        r = run(corpus, strategy, t, tmp)
        p = plan(corpus, strategy, t, ["-r", "local", "--num-cores", "2"])
        r["plan_by_step"] = [s["bytes"] for s in p["steps"]]
        r["plan_shuffle_bytes"] = sum(r["plan_by_step"])
        r["largest_group_share"] = p.get("largest_group_share")
        r["vs_compact"] = r["shuffle_bytes"] / compact
        cluster = plan(corpus, strategy, t, CLUSTER)
        r["cluster_wall_s"], r["cluster_shuffle_bytes"] = cluster["wall_s"], sum(
            s["bytes"] for s in cluster["steps"])
        r["cluster_blocks"] = cluster.get("blocks")
        r["shuffle_mb"], r["cluster_min"] = r["shuffle_bytes"] / 1e6, r["cluster_wall_s"] / 60
        log("%s %-7s wall %6.1f s  CPU %6.1f s  shuffle %s (%.1fx compact; plan %.2f)  "
            "10^7 plan: %.0f min wall, %s" % (
                "t=%s" % t if t is not None else "top-%d" % TOP_K, strategy, r["wall_s"], r["cpu_s"], common.size_label(r["shuffle_bytes"]),
                r["vs_compact"], r["plan_shuffle_bytes"] / r["shuffle_bytes"],
                r["cluster_wall_s"] / 60, common.size_label(r["cluster_shuffle_bytes"])))
        rows.append(r)
    return rows


def checks(rows, compact):
    out = []
    for t in THRESHOLDS:
        p, b = [next(r for r in rows if r["threshold"] == t and r["strategy"] == s)
                for s in ("prefix", "blocks")]
        out.append(common.check(
            "shuffle t=%s" % t, "prefix shuffle <= %gx the compact input" % SHUFFLE_TARGET,
            "%.2fx (%s vs %s compact; blocks --blocks %d: %.1fx)" % (
                p["vs_compact"], common.size_label(p["shuffle_bytes"]),
                common.size_label(compact), BLOCKS, b["vs_compact"]),
            p["vs_compact"] <= SHUFFLE_TARGET))
        out.append(common.check(
            "output t=%s" % t, "prefix output = blocks output, byte for byte",
            "%d lines, sha256 %s / %s" % (p["output_lines"], p["output_sha256"][:12],
                                           b["output_sha256"][:12]),
            p["output_sha256"] == b["output_sha256"]))
        ratio = p["plan_shuffle_bytes"] / p["shuffle_bytes"]
        out.append(common.check(
            "plan bytes t=%s" % t, "the planner's prefix shuffle within [%g, %g] of the run"
            % PLAN_BAND, "%.2f (by step: %s)" % (ratio, ", ".join(
                "%.2f" % (a / m) if m else "-" for a, m in zip(p["plan_by_step"],
                                                               p["shuffle_by_step"]))),
            PLAN_BAND[0] <= ratio <= PLAN_BAND[1]))
        share = p["largest_group_share"] or 0.0
        out.append(common.check(
            "straggler t=%s" % t, "the largest prefix feature's products <= 3x a mean "
            "reducer's of %d" % SLOTS, "%.2fx (%.3f%% of the pair step)" % (
                share * SLOTS, 100 * share), share * SLOTS <= 3.0))
        out.append(common.check(
            "10^7 plan t=%s" % t, "prefix, 10^7 documents on %d slots: <= %d min wall"
            % (SLOTS, WALL_TARGET_S // 60), "%.1f min (blocks, %s blocks: %.1f min)" % (
                p["cluster_wall_s"] / 60, b["cluster_blocks"], b["cluster_wall_s"] / 60),
            p["cluster_wall_s"] <= WALL_TARGET_S))
    return out + top_k_checks(rows)


def top_k_checks(rows):
    """The top-k row's targets: its shuffle (blocks at the block count of a
    cluster's reducers) and its 10^7 plan."""
    r = next((r for r in rows if r["threshold"] is None), None)
    if r is None:
        return []
    return [common.check(
        "top-k %d shuffle" % TOP_K, "--top-k %d: shuffle <= %gx the compact input"
        % (TOP_K, TOP_K_SHUFFLE_TARGET), "%.2fx (%s; blocks --blocks %d: the prefix "
        "strategy needs --threshold)" % (r["vs_compact"], common.size_label(r["shuffle_bytes"]),
                                         BLOCKS), r["vs_compact"] <= TOP_K_SHUFFLE_TARGET),
        common.check(
        "top-k %d 10^7 plan" % TOP_K, "--top-k %d, 10^7 documents on %d slots: <= %d h wall"
        % (TOP_K, SLOTS, TOP_K_WALL_TARGET_S // 3600), "%.1f min (blocks, %s blocks, %s)" % (
            r["cluster_wall_s"] / 60, r["cluster_blocks"],
            common.size_label(r["cluster_shuffle_bytes"])),
        r["cluster_wall_s"] <= TOP_K_WALL_TARGET_S)]


def cluster_rows(corpus, tmp, log):
    """The runs on the HDFS + YARN minicluster (:func:`bench.hadoop.cluster_runs`)
    beside the planner's bytes for them (``-r hadoop --reducers 2``)."""
    runs = [("prefix %s" % t, ["--measure", "cosine", "--threshold", str(t),
                               "--strategy", "prefix"]) for t in THRESHOLDS]
    runs.append(("blocks %s" % THRESHOLDS[0], ["--measure", "cosine", "--threshold",
                                               str(THRESHOLDS[0]), "--blocks", str(BLOCKS)]))
    rows = hadoop.cluster_runs(corpus, runs, Path(tmp), log)
    for r in rows:
        strategy, t = r["name"].split()
        p = plan(corpus, strategy, float(t), ["-r", "hadoop", "--reducers",
                                              str(hadoop.REDUCERS)])
        r["plan_by_step"] = [x["bytes"] for x in p["steps"]]
        r["plan_vs_counters"] = sum(r["plan_by_step"]) / (r["shuffle_bytes"] or 1)
    return rows


def cluster_checks(rows, compact):
    out = []
    for r in rows:
        out.append(common.check(
            "cluster plan %s" % r["name"], "the planner's bytes within [%g, %g] of Hadoop's "
            "reduce shuffle bytes" % PLAN_BAND, "%.2f (by step: %s); %.1fx the compact input"
            % (r["plan_vs_counters"], ", ".join(
                "%.2f" % (a / m["shuffle_bytes"]) if m["shuffle_bytes"] else "-"
                for a, m in zip(r["plan_by_step"], r["by_step"])),
               (r["shuffle_bytes"] or 0) / compact),
            PLAN_BAND[0] <= r["plan_vs_counters"] <= PLAN_BAND[1]))
    a, b = rows[0], rows[-1]
    out.append(common.check("cluster output", "prefix = blocks on the cluster, byte for byte",
                            "sha256 of the sorted lines %s / %s" % (
                                a["lines_sha256"][:12], b["lines_sha256"][:12]),
                            a["lines_sha256"] == b["lines_sha256"]))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m bench.scaleout", description=__doc__)
    ap.add_argument("--quick", action="store_true", help="the first 20,000 documents")
    ap.add_argument("--out", default=None, help="results directory (default bench/results)")
    ap.add_argument("--cluster", action="store_true",
                    help="also run on the HDFS + YARN minicluster (its jars: "
                         "tests/engines/fetch-jars.sh) and check the planner against "
                         "Hadoop's counters")
    o = ap.parse_args(argv)
    log = common.logger()
    corpus = wordnet.build()
    with tempfile.TemporaryDirectory(prefix="mrsparse-bench-scaleout-") as tmp:
        if o.quick:
            corpus = wordnet.first_documents(corpus, tmp)
        compact = compact_bytes(corpus, tmp)
        log("corpus %s: %s of JSON, %s compact" % (corpus.name, common.size_label(
            corpus.stat().st_size), common.size_label(compact)))
        rows = [r for t in THRESHOLDS + (None,) for r in rows_for(corpus, t, tmp, compact, log)]
        cluster = cluster_rows(corpus, tmp, log) if o.cluster else []
    found = checks(rows, compact) + (cluster_checks(cluster, compact) if cluster else [])
    common.print_table([dict(r, threshold=r["threshold"] or "top %d" % TOP_K) for r in rows],
                       [("threshold", "t"), ("strategy", "strategy"),
                              ("wall_s", "wall s", "{:.1f}"), ("cpu_s", "CPU s", "{:.1f}"),
                              ("shuffle_mb", "shuffle MB", "{:,.1f}"),
                              ("vs_compact", "x compact", "{:.2f}"),
                              ("cluster_min", "10^7 plan: min wall", "{:,.0f}")],
                       title="Scale out (WordNet glosses, cosine)")
    if cluster:
        common.print_table([dict(r, step=i + 1, **st) for r in cluster
                            for i, st in enumerate(r["by_step"])],
                           [("name", "run"), ("step", "step"),
                            ("shuffle_bytes", "reduce shuffle bytes", "{:,}"),
                            ("spilled_records", "spilled records", "{:,}"),
                            ("cpu_ms", "CPU ms", "{:,}")],
                           title="On the HDFS + YARN minicluster (Hadoop's counters)")
    common.print_checks(found)
    path = common.write_results("scaleout", {"compact_bytes": compact, "rows": rows,
                                             "cluster": cluster, "checks": found}, o.out)
    print("written to %s" % path)
    return 0 if all(c["pass"] for c in found) else 1


if __name__ == "__main__":
    sys.exit(main())
