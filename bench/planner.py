"""The planner against real runs: does ``python -m mrjobs.plan`` still say
what a run costs, within the +-30% it promises, with the committed constants?

For each corpus (generated, 50 features a vector, Zipf 1.1: 20,000 and
100,000 vectors; cosine top-10, the local runner on 2 cores) the plan and a
run of the job (``--compare``): wall and CPU seconds, peak memory, temporary
disk, bytes shuffled.  A quantity whose plan/run ratio leaves [0.7, 1.3] is a
miss, and the run exits 1 naming it: the constants
(``mrjobs/plan/calibration.json``) predate the code they model, and
``python -m mrjobs.plan --calibrate`` (the last step of ``make bench``)
refreshes them.

``python -m bench.planner`` prints the table and writes
``bench/results/planner.json``; ``--quick`` runs the 20,000-vector corpus only.
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import common

#: (vectors) of the generated corpora
CORPORA = (20000, 100000)
#: the planner's promise: plan / run within these
BAND = (0.7, 1.3)
#: the comparison's rows held to the band
CHECKED = ("wall s", "CPU s", "peak memory of a task or sort", "temporary disk",
           "shuffle bytes")


def compare(path, num_cores=2):
    """The planner's ``--compare`` rows for a cosine top-10 local run of ``path``:
    ``{quantity: (plan, run)}``."""
    out = subprocess.run([sys.executable, "-m", "mrjobs.plan", str(path), "--measure", "cosine",
                          "--top-k", "10", "--compare", "--json", "--num-cores",
                          str(num_cores)], capture_output=True, check=True, text=True)
    return {what: (plan, run) for what, plan, run in json.loads(out.stdout)["comparison"]}


def misses(rows):
    """The checked quantities whose plan/run ratio leaves :data:`BAND`."""
    return [(what, rows[what][0] / rows[what][1]) for what in CHECKED
            if rows[what][1] and not BAND[0] <= rows[what][0] / rows[what][1] <= BAND[1]]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m bench.planner", description=__doc__)
    ap.add_argument("--quick", action="store_true", help="the 20,000-vector corpus only")
    ap.add_argument("--out", default=None, help="results directory (default bench/results)")
    o = ap.parse_args(argv)
    results, missed = [], []
    with tempfile.TemporaryDirectory(prefix="mrsparse-bench-planner-") as tmp:
        for n in CORPORA[:1] if o.quick else CORPORA:
            path = Path(tmp) / ("c%d.jsonl" % n)
            subprocess.run([sys.executable, "-m", "mrjobs.generate", "--vectors", str(n),
                            "--seed", "1", "-o", str(path), "--no-progress"], check=True)
            rows = compare(path)
            results.append({"vectors": n, "rows": {k: list(v) for k, v in rows.items()},
                            "misses": misses(rows)})
            missed += ["%d vectors: %s %.2f" % (n, what, r) for what, r in misses(rows)]
            print("%d vectors (cosine top-10, local runner, 2 cores)" % n)
            for what in CHECKED:
                plan, run = rows[what]
                print("  %-32s plan/run %.2f" % (what, plan / run if run else float("nan")))
    path = common.write_results("planner", {"band": BAND, "results": results}, o.out)
    print("written to %s" % path)
    if missed:
        print("the planner misses its +-30%%: %s (refresh the constants: python -m "
              "mrjobs.plan --calibrate)" % "; ".join(missed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
