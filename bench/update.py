"""The update run against a full run: a generated 100,000-vector corpus
(``python -m mrjobs.generate``, seed 1, 50 features a vector), changed by 1%
new vectors and 0.2% removed ones, and by 10% changed ones (each removed and
added back, its features those of a fresh generated vector); cosine
``--top-k 10`` and ``--threshold 0.5``.

Yesterday's full run writes its ``--output-dir`` (not timed); then the update
(``python -m mrjobs.update``) and today's full run (``python -m
mrjobs.dot_products`` on the corpus the update wrote), both on the local
runner (2 cores) and measured as :mod:`bench.measure` measures them (wall;
CPU of the whole process tree).  Rows of issue "Tomorrow's run" with
PASS/FAIL:

* 1% new + 0.2% removed, top-10 and threshold 0.5: the update's CPU at most
  5% of the full run's, the same bytes;
* 10% changed, top-10: at most 25%, the same bytes.

The top-10 workloads run twice: from yesterday's output as the job wrote it,
and from yesterday's output with a reserve (``--reserve 5``: each row's best
15 kept, made by an update with no change from it, not timed), where a row
that loses up to 5 of its 15 is merged instead of computed again.

``python -m bench.update`` prints the table and writes
``bench/results/update.json``; ``--quick`` (or ``BENCH_QUICK=1``): 10,000
vectors.
"""
import hashlib
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import common, measure

TOP_K = 10
THRESHOLD = 0.5
#: targets: the update's CPU over the full run's
SMALL_TARGET = 0.05
LARGE_TARGET = 0.25
RUNNER = ["-r", "local", "--num-cores", "2"]
#: --reserve of the top-10 workloads' second run
RESERVE = 5


def generate(path, n, seed=1):
    subprocess.run([sys.executable, "-m", "mrjobs.generate", "--vectors", str(n), "--seed",
                    str(seed), "-o", str(path)], check=True, capture_output=True)


def change_sets(tmp, n):
    """Yesterday's corpus and two change sets (1% new + 0.2% removed; 10%
    changed): ``{name: (add file, remove file)}``."""
    tmp = Path(tmp)
    generate(tmp / "all.jsonl", n + n // 10)
    lines = (tmp / "all.jsonl").read_text().splitlines(True)
    yesterday, fresh = lines[:n], lines[n:]
    (tmp / "yesterday.jsonl").write_text("".join(yesterday))
    ids = [json.loads(l)["id"] for l in yesterday]
    rng = random.Random(2)
    sets = {}
    removed = rng.sample(ids, n // 500)
    sets["1% new, 0.2% removed"] = (fresh[:n // 100], removed)
    changed = rng.sample(ids, n // 10)
    edits = [json.dumps({"id": i, "features": json.loads(l)["features"]}) + "\n"
             for i, l in zip(changed, fresh)]
    sets["10% changed"] = (edits, changed)
    out = {}
    for k, (name, (add, remove)) in enumerate(sets.items()):
        a, r = tmp / ("add-%d.jsonl" % k), tmp / ("remove-%d.txt" % k)
        a.write_text("".join(add))
        r.write_text("".join(i + "\n" for i in remove))
        out[name] = (a, r)
    return tmp / "yesterday.jsonl", out


def digest(directory):
    data = b"".join(p.read_bytes() for p in sorted(Path(directory).glob("part-*")))
    return hashlib.sha256(data).hexdigest(), data.count(b"\n")


def timed(cmd, tmp, name):
    m = measure.run_checked(cmd, Path(tmp) / ("%s.stdout" % name), 1.0)
    return {"wall_s": m["wall_s"], "cpu_s": m["cpu_s"], "command": " ".join(
        ["python"] + cmd[1:])}


def workload(tmp, corpus, change, args, name, log, reserve=0):
    """Yesterday's run (with ``reserve``: and its reserve made), the update,
    today's full run: a row."""
    tmp = Path(tmp)
    work = ["--local-tmp-dir", str(tmp / "work")]
    prev = tmp / ("prev-%s" % "-".join(args).replace(".", ""))
    if not prev.exists():
        timed([sys.executable, "-m", "mrjobs.dot_products", str(corpus), "-q", "-o",
               str(prev), "--measure", "cosine"] + args + RUNNER + work, tmp, "yesterday")
    if reserve:
        prev, plain = prev.with_name("%s-r%d" % (prev.name, reserve)), prev
        if not prev.exists():
            timed([sys.executable, "-m", "mrjobs.update", "--previous", str(plain), "-o",
                   str(prev), "--reserve", str(reserve), "-q"] + RUNNER + work, tmp,
                  "reserve")
    slug = "".join(c if c.isalnum() else "-" for c in name)
    out, full = tmp / ("up-" + slug), tmp / ("full-" + slug)
    add, remove = change
    up = timed([sys.executable, "-m", "mrjobs.update", "--previous", str(prev), "--add",
                str(add), "--remove", str(remove), "-o", str(out), "-q"] + RUNNER + work,
               tmp, "update")
    whole = timed([sys.executable, "-m", "mrjobs.dot_products",
                   str(out / "_corpus" / "part-*"), "-q",
                   "-o", str(full), "--measure", "cosine"] + args + RUNNER + work, tmp, "full")
    (up_sha, lines), (full_sha, _) = digest(out), digest(full)
    stats = json.loads((out / "_MANIFEST.json").read_text())["update"]
    row = {"name": name, "update_wall_s": up["wall_s"], "update_cpu_s": up["cpu_s"],
           "rows_again": stats["rows computed again"],
           "full_wall_s": whole["wall_s"], "full_cpu_s": whole["cpu_s"],
           "cpu_ratio": up["cpu_s"] / whole["cpu_s"], "lines": lines,
           "same_bytes": up_sha == full_sha, "sha256": up_sha,
           "commands": [up["command"], whole["command"]]}
    log("%-36s update CPU %6.1f s, full %6.1f s (%.1f%%); %d rows computed again; same "
        "bytes: %s" % (name, row["update_cpu_s"], row["full_cpu_s"], 100 * row["cpu_ratio"],
                       row["rows_again"], row["same_bytes"]))
    return row


def checks(rows):
    out = []
    for r in rows:
        target = LARGE_TARGET if r["name"].startswith("10%") else SMALL_TARGET
        out.append(common.check(
            "update: %s" % r["name"], "CPU <= %g%% of a full run's, the same bytes"
            % (100 * target), "%.1f%% (%.1f s vs %.1f s; the same bytes: %s)" % (
                100 * r["cpu_ratio"], r["update_cpu_s"], r["full_cpu_s"], r["same_bytes"]),
            r["cpu_ratio"] <= target and r["same_bytes"]))
    return out


def main(argv=None):
    ap = common.arg_parser("python -m bench.update", __doc__, "update.json")
    o = common.parse(ap, argv)
    log = common.logger()
    n = 10_000 if o.quick else 100_000
    with tempfile.TemporaryDirectory(prefix="mrsparse-bench-update-") as tmp:
        corpus, sets = change_sets(tmp, n)
        log("corpus: %d vectors; change sets made" % n)
        small, large = sets["1% new, 0.2% removed"], sets["10% changed"]
        top = ["--top-k", str(TOP_K)]
        kept = ", --reserve %d" % RESERVE
        rows = [workload(tmp, corpus, small, top, "1%% new, 0.2%% removed, top-%d" % TOP_K, log),
                workload(tmp, corpus, small, top, "1%% new, 0.2%% removed, top-%d%s"
                         % (TOP_K, kept), log, RESERVE),
                workload(tmp, corpus, small, ["--threshold", str(THRESHOLD)],
                         "1%% new, 0.2%% removed, t=%s" % THRESHOLD, log),
                workload(tmp, corpus, large, top, "10%% changed, top-%d" % TOP_K, log),
                workload(tmp, corpus, large, top, "10%% changed, top-%d%s" % (TOP_K, kept),
                         log, RESERVE)]
    found = checks(rows)
    common.print_table(rows, [("name", "workload"), ("update_cpu_s", "update CPU s", "{:.1f}"),
                              ("full_cpu_s", "full CPU s", "{:.1f}"),
                              ("cpu_ratio", "ratio", "{:.3f}"),
                              ("rows_again", "rows again", "{:,}"),
                              ("update_wall_s", "update wall s", "{:.1f}"),
                              ("full_wall_s", "full wall s", "{:.1f}"),
                              ("same_bytes", "same bytes")],
                       title="The update run against a full run (%d vectors, cosine)" % n)
    common.print_checks(found)
    path = common.write_results("update", {"vectors": n, "rows": rows, "checks": found}, o.out)
    print("written to %s" % path)
    return 0 if all(c["pass"] for c in found) else 1


if __name__ == "__main__":
    sys.exit(main())
