"""Pruning against the full product, one block pair at a time (CPU seconds).

For each corpus and threshold: the full product on the C kernels and on the
numpy path, the pruned path with its plan forced, and what the pair kernel
does by default (``mrjobs.pairs.kernel`` decides from its cost estimate, printed as
the bounds' estimated cost over the full product's).  Every run's output
pairs are checked equal.  Corpora: random halves (5,000 x 5,000, or 10,000 x
10,000 for the generated one) of the text corpora of :mod:`bench.textcorpus`
(whole documents and paragraphs) and the job benchmark's *tfidf-20k*
(generated, ~20 features a vector, weighted tf-idf).

``python -m bench.prune`` prints the table and writes ``bench/results/prune.json``.
"""
import argparse
import json
import time
from pathlib import Path

import numpy as np

import mrjobs.pairs.kernel as pairs
from bench import floor, textcorpus
from mrjobs.counters import Counters
from mrjobs.scoring import Scorer

THRESHOLDS = (0.5, 0.8)
REPEATS = 3


def _prepared(arrays):
    """The corpus's rows in UUID order, scaled to unit length (the floor's
    matrix, :func:`bench.floor.prepared_matrix`)."""
    return floor.prepared_matrix(arrays, None, "cosine")[1]


def _text(paragraphs):
    _, npz = textcorpus.build(20000, paragraphs=paragraphs)
    return _prepared(floor.load_arrays({"npz": str(npz)}))


def _generated(n=20000):
    """The job benchmark's *tfidf-20k*: vectors of ~20 features over 50,000
    (Zipf 1.0), each weight times ln(N / df)."""
    from bench.jobs import tfidf_weighted
    return _prepared(tfidf_weighted(dict(vectors=n, features_per_vector=20, vocabulary=50000,
                                         zipf=1.0, seed=3)))


def _halves(A, size):
    perm = np.random.default_rng(0).permutation(A.shape[0])
    return A[np.sort(perm[:size])], A[np.sort(perm[size:2 * size])]


def _run(X, Y, threshold, kernel, prune):
    spec = pairs.PairSpec(None, 1_000_000, prune=prune, kernel=kernel)
    best, out = float("inf"), None
    for _ in range(REPEATS):
        t = time.process_time()
        res = pairs.pair_best(X, Y, Scorer("cosine", Counters(), threshold), spec)
        got = []
        try:
            while True:
                d, g, o, s = next(res)
                if d == pairs.ROWS:
                    got.append(np.stack([g, o]).T)
        except StopIteration as stop:
            work = stop.value
        best = min(best, time.process_time() - t)
        out = np.concatenate(got) if got else np.empty((0, 2), np.int64)
    return best, work, out[np.lexsort(out.T[::-1])]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = p.parse_args(argv)
    c = pairs.KERNEL == "c"
    corpora = [("text-20k (documents)", _text(False), 5000),
               ("para-20k (paragraphs)", _text(True), 5000),
               ("tfidf-20k (generated)", _generated(), 10000)]
    rows = []
    head = ("corpus", "t", "est", "C full", "numpy full", "pruned", "default", "products")
    print("%-22s %4s %5s %8s %10s %8s %8s %10s" % head)
    for name, A, size in corpora:
        X, Y = _halves(A, size)
        est = pairs.bounds_cost_share(X, Y)  # on the C kernels, when built
        for t in THRESHOLDS:
            full_c = _run(X, Y, t, "c", "never") if c else None
            full_np = _run(X, Y, t, "numpy", "never")
            forced = _run(X, Y, t, "numpy", "always")
            default = _run(X, Y, t, "auto", "auto")
            ref = full_np[2]
            same = all(np.array_equal(r[2], ref) for r in (full_c, forced, default) if r)
            if not same:
                raise SystemExit("%s t=%s: the runs' pairs differ" % (name, t))
            w = forced[1]
            cells = w.cells_pruned
            row = {"corpus": name, "rows": X.shape[0], "cols": Y.shape[0], "threshold": t,
                   "bounds_over_product_estimate": est,
                   "c_full_s": full_c[0] if full_c else None, "numpy_full_s": full_np[0],
                   "pruned_s": forced[0], "default_s": default[0],
                   "default_pruned": default[1].cells_pruned > 0,
                   "products_full": full_np[1].products, "products_pruned": w.products,
                   "cells_pruned": cells, "pairs_out": int(ref.shape[0])}
            rows.append(row)
            print("%-22s %4.1f %5.2f %8s %10.3f %8.3f %8.3f %10s" % (
                name, t, est, "%.3f" % full_c[0] if full_c else "-", full_np[0], forced[0],
                default[0], "%.1f%%" % (100 * w.products / max(full_np[1].products, 1))))
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "prune.json").write_text(json.dumps(
        {"benchmark": "prune", "kernel": pairs.KERNEL, "repeats": REPEATS, "rows": rows},
        indent=2) + "\n")
    print("'products': products computed by the pruned path / the full product's;"
          " 'est': the bounds' estimated cost / the C product's (the default prunes when"
          " <= %.2f)" % (pairs.PLAN_SHARE_C * pairs.PLAN_SHARE_MAX))


if __name__ == "__main__":
    main()
