"""Short documents: the job against both peers on a real corpus of short
documents (:mod:`bench.wordnet`, the 117,609 glosses of WordNet 3.0, 12.3
distinct terms each, tf-idf), cosine ``--top-k 10``, end to end from the same
JSON file; the job from its compact records too; and ``--threshold 0.5``
pruned against ``--no-prune``.

Each job run is ``python -m mrjobs.dot_products`` on the local runner (2
cores), measured as :mod:`bench.measure` measures it (wall; CPU of the whole
process tree); each peer is :mod:`bench.peer_runs`' script on 2 threads, its
lines compared with the job's (the same neighbours but for ties at the 10th
place, scores within 1e-9).  The compact records are the corpus as
``python -m mrjobs.convert --to compact`` writes them (made before the
clock starts).  Rows of issue "Real text" with PASS/FAIL:

* the job's wall and CPU at most sp_matmul_rs's (top-10 from JSON);
* from the compact records at most 0.8x the job's own time from JSON;
* ``--threshold 0.5``: pruned at least 2x faster than ``--no-prune``, the same bytes.

``python -m bench.shorttext`` prints the table and writes
``bench/results/shorttext.json``; ``--quick`` (or ``BENCH_QUICK=1``): the
first 20,000 documents; ``--passes N``: best of N runs of each (default 1).
"""
import hashlib
import sys
import tempfile
from pathlib import Path

from bench import common, hadoop, measure, wordnet
from bench.peer_runs import PEERS, compare_outputs, installed, run_peer

TOP_K = 10
THRESHOLD = 0.5
#: targets: the job's wall and CPU over sp_matmul_rs's; compact over JSON; pruning's speed-up
PEER_TARGET = 1.0
COMPACT_TARGET = 0.8
PRUNE_TARGET = 2.0


def job_run(corpus, out, tmp, args, passes=1):
    """The job on the local runner, best of ``passes``: wall, CPU, output digest."""
    cmd = [sys.executable, "-m", "mrjobs.dot_products", str(corpus), "-r", "local",
           "--num-cores", "2", "--measure", "cosine", "--local-tmp-dir", str(tmp)] + args
    runs = [measure.run_checked(cmd, out, 1.0) for _ in range(passes)]
    data = Path(out).read_bytes()
    return {"wall_s": min(m["wall_s"] for m in runs), "cpu_s": min(m["cpu_s"] for m in runs),
            "wall_s_all": [m["wall_s"] for m in runs], "lines": data.count(b"\n"),
            "sha256": hashlib.sha256(data).hexdigest(), "command": " ".join(
                ["python"] + cmd[1:])}


def compact_of(corpus, tmp):
    """The corpus's compact records, one file (:func:`bench.hadoop.convert`)."""
    path = Path(tmp) / "compact.mrs"
    hadoop.convert(corpus, path, "compact")
    return path


def rows_for(corpus, tmp, log, passes=1):
    """The runs: the job from JSON and from compact, each peer, and the
    threshold pair."""
    tmp = Path(tmp)
    rows = []
    top = ["--top-k", str(TOP_K)]
    json_out = tmp / "job-json.txt"
    for name, src, args, out in (
            ("job, JSON", corpus, top, json_out),
            ("job, compact", compact_of(corpus, tmp), top, tmp / "job-compact.txt"),
            ("job, t=%s pruned" % THRESHOLD, corpus, ["--threshold", str(THRESHOLD)],
             tmp / "job-t.txt"),
            ("job, t=%s --no-prune" % THRESHOLD, corpus, ["--threshold", str(THRESHOLD),
                                                          "--no-prune"], tmp / "job-tn.txt")):
        r = dict(job_run(src, out, tmp / "work", args, passes), name=name)
        log("%-24s wall %6.1f s  CPU %6.1f s  %d lines" % (name, r["wall_s"], r["cpu_s"],
                                                          r["lines"]))
        rows.append(r)
    for peer in PEERS:
        if not installed(peer):
            log("%s is not installed: skipped" % peer)
            continue
        out = tmp / ("%s.txt" % peer)
        r = run_peer(peer, corpus, out, passes=passes)
        r.update(name=peer, compare=compare_outputs(json_out, out))
        log("%-24s wall %6.1f s  CPU %6.1f s  lines differing %d (+%d tied at the cut)" % (
            peer, r["wall_s"], r["cpu_s"], r["compare"]["lines_differing"],
            r["compare"]["lines_tied_at_cut"]))
        rows.append(r)
    return rows


def checks(rows, label="short", peers=("sp_matmul_rs",), cpu=True):
    """The targets' rows: the job (top-10 from JSON) against each of ``peers``
    (wall, and with ``cpu`` CPU too, at most :data:`PEER_TARGET` x theirs),
    each peer's neighbours the job's, compact against JSON, pruning; ids
    begin with ``label``."""
    by = {r["name"]: r for r in rows}
    job, compact = by["job, JSON"], by["job, compact"]
    pruned = by["job, t=%s pruned" % THRESHOLD]
    full = by["job, t=%s --no-prune" % THRESHOLD]
    out = []
    for peer in peers:
        if peer not in by:
            continue
        w, c = job["wall_s"] / by[peer]["wall_s"], job["cpu_s"] / by[peer]["cpu_s"]
        out.append(common.check(
            "%s top-10 vs %s" % (label, peer), "the job's wall%s <= %gx %s's" % (
                " and CPU" if cpu else "", PEER_TARGET, peer),
            "wall %.2fx (%.1f s vs %.1f s), CPU %.2fx (%.1f s vs %.1f s)" % (
                w, job["wall_s"], by[peer]["wall_s"], c, job["cpu_s"], by[peer]["cpu_s"]),
            w <= PEER_TARGET and (c <= PEER_TARGET or not cpu)))
    for peer in PEERS:
        if peer in by:
            cmp = by[peer]["compare"]
            out.append(common.check(
                "%s top-10 = %s" % (label, peer), "the same neighbours (but for ties at the "
                "10th place), scores within 1e-9", "%d lines differing, %d tied at the cut, "
                "scores within %.1e" % (cmp["lines_differing"], cmp["lines_tied_at_cut"],
                                         cmp["max_rel_diff"]), cmp["scores_ok_but_ties"]))
    ratio = compact["wall_s"] / job["wall_s"]
    out.append(common.check(
        "%s compact vs JSON" % label, "from compact records <= %gx the job from JSON"
        % COMPACT_TARGET, "%.2fx (%.1f s vs %.1f s; the same bytes: %s)" % (
            ratio, compact["wall_s"], job["wall_s"], compact["sha256"] == job["sha256"]),
        ratio <= COMPACT_TARGET and compact["sha256"] == job["sha256"]))
    speed = full["wall_s"] / pruned["wall_s"]
    out.append(common.check(
        "%s t=%s pruning" % (label, THRESHOLD), "pruned >= %gx faster than --no-prune, the "
        "same bytes" % PRUNE_TARGET, "%.2fx (%.1f s vs %.1f s; the same bytes: %s)" % (
            speed, pruned["wall_s"], full["wall_s"], pruned["sha256"] == full["sha256"]),
        speed >= PRUNE_TARGET and pruned["sha256"] == full["sha256"]))
    return out


def main(argv=None):
    ap = common.arg_parser("python -m bench.shorttext", __doc__, "shorttext.json")
    ap.add_argument("--passes", type=int, default=1, help="best of N runs of each")
    o = common.parse(ap, argv)
    log = common.logger()
    corpus = wordnet.build()
    with tempfile.TemporaryDirectory(prefix="mrsparse-bench-shorttext-") as tmp:
        if o.quick:
            corpus = wordnet.first_documents(corpus, tmp)
        rows = rows_for(corpus, tmp, log, o.passes)
    return report("shorttext", rows, checks(rows), o.out,
                  "Short documents (WordNet glosses, cosine top-%d)" % TOP_K)


def report(name, rows, found, out, title, seconds="{:.1f}"):
    """The table and the targets printed, ``<name>.json`` written; the exit
    status (1 where a target is missed)."""
    common.print_table(rows, [("name", "run"), ("wall_s", "wall s", seconds),
                              ("cpu_s", "CPU s", seconds)], title=title)
    common.print_checks(found)
    path = common.write_results(name, {"rows": rows, "checks": found}, out)
    print("written to %s" % path)
    return 0 if all(c["pass"] for c in found) else 1


if __name__ == "__main__":
    sys.exit(main())
