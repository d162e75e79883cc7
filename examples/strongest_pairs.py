"""Print the strongest pairs of a corpus, computed by MRSparseDotProducts.

Usage (what ``make run`` runs)::

    python -m examples.strongest_pairs                    # bundled sample, cosine
    python -m examples.strongest_pairs CORPUS --measure dot --pairs 20 -r local

Runs the job (inline runner by default) with ``--top-k``, keeps each pair
once (both vectors list each other) and prints the best pairs with their
scores and the number of features the two vectors share.
"""
import argparse
import os
import sys
import time

from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.measures import MEASURES, get as get_measure
from mrjobs.parsing import parse_vector
from mrjobs.testing import run_job

SAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sample.jsonl")


def strongest_pairs(path, measure="cosine", pairs=10, runner="inline", extra=()):
    """Run the job and return ``[(score, a, b)]``, best first, each pair once."""
    result = run_job(MRSparseDotProducts, None,
                     ["--measure", measure, "--top-k", str(max(pairs, 1))] + list(extra),
                     runner=runner, input_paths=[path])
    best = {}
    for a, row in result.output:
        for b, s in row.items():
            key = (a, b) if a.bytes < b.bytes else (b, a)
            best[key] = s
    ranked = sorted(((s, a, b) for (a, b), s in best.items()),
                    key=lambda t: (-t[0], t[1].bytes, t[2].bytes))
    return ranked[:pairs], result.counters


def _features(path):
    feats = {}
    with open(path, "rb") as f:
        for line in f:
            try:
                parsed = parse_vector(line.rstrip(b"\r\n"))
            except ValueError:
                continue
            if parsed:
                feats[parsed[0]] = set(parsed[1].tolist())
    return feats


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m examples.strongest_pairs",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", nargs="?", default=SAMPLE, help="input file (default: the sample)")
    ap.add_argument("--measure", choices=MEASURES, default="cosine")
    ap.add_argument("--pairs", type=int, default=10, help="how many pairs to print")
    ap.add_argument("-r", "--runner", default="inline", help="mrjob runner (inline, local)")
    o = ap.parse_args(argv)
    feats = _features(o.corpus)
    extra = []
    if get_measure(o.measure).needs_n_features:
        # loglikelihood's 2 x 2 table and correlation's N: the corpus's number of
        # distinct features
        extra = ["--num-features", str(len(set().union(*feats.values())) or 1)]
    t0 = time.perf_counter()
    ranked, counters = strongest_pairs(o.corpus, o.measure, o.pairs, o.runner, extra)
    elapsed = time.perf_counter() - t0
    n = counters.get("mrsparse input", {}).get("vectors read", 0)
    print("%d strongest pairs by %s among %d vectors of %s (%s runner, %.1f s)\n"
          % (len(ranked), o.measure, n, os.path.basename(o.corpus), o.runner, elapsed))
    print("%4s  %-12s  %-36s  %-36s  %s" % ("rank", o.measure, "vector", "vector", "shared"))
    for i, (s, a, b) in enumerate(ranked, 1):
        shared = len(feats.get(a.bytes, set()) & feats.get(b.bytes, set()))
        print("%4d  %-12.6g  %s  %s  %6d" % (i, s, a, b, shared))
    return 0


if __name__ == "__main__":
    sys.exit(main())
