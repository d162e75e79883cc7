"""The peers end to end: what a user would write to get the job's answer from
``sparse_dot_topn`` or ``sp_matmul_rs`` on one machine.

``python -m bench.peer_scripts PEER INPUT OUTPUT [--top-k 10] [--threads 2]
[--max-df N]`` (PEER: ``sparse_dot_topn`` or ``sp_matmul_rs``) answers the
question ``python -m mrjobs.dot_products INPUT --measure cosine --top-k 10
[--max-df N]`` answers, in the same file formats, in one process:

1. **parse**: read INPUT, the job's JSON lines ``{"id": uuid, "features":
   {uuid: weight}}``, one line per vector, with :func:`json.loads` (the
   standard library's); each feature UUID gets a column number the first time
   it is seen (a dict);
2. **matrix**: build a ``scipy.sparse.csr_matrix`` (float64) with one row per
   vector, rows sorted by the vectors' UUIDs (so that a smaller row number
   is a smaller UUID), duplicate entries summed, column indices sorted;
3. **normalise**: divide each row by its Euclidean norm (cosine); with
   ``--max-df N``, then drop the columns of the features more than N
   vectors hold (the job normalises over the whole vector, then cuts);
4. **product**: ``sp_matmul_topn(X, X.T, top_n=k + 1, n_threads=2,
   sort=True)`` of the peer (the ``+ 1``: each vector is its own best match);
5. **select**: drop each row's entry with itself, clamp scores to [-1, 1],
   order each row's entries by score descending, ties by the smaller UUID,
   and keep ``k``;
6. **write**: for each vector with a neighbour, in UUID order, the line
   ``"<uuid>"\\t{"<uuid>": score, ...}`` (``json.dumps`` of the vector's id
   and of a dict in best-first order), as the job writes its output.

The peers' semantics are kept, not patched: they return at most ``k + 1``
entries a row and drop exact zeros (and sparse_dot_topn negative scores),
so a tie at the k-th place or a pair whose cosine is 0 can differ from the
job's answer; ``tests/bench/test_bench_peers.py`` checks that on a small
corpus the lines name the same neighbours as the job's, scores within 1e-9.

The seconds of each phase (wall, and the process's CPU time) go to stderr as
one JSON line, ``{"phases": {...}}``.
"""
import argparse
import json
import sys
import time

import numpy as np
import scipy.sparse as sp

TOP_K, THREADS = 10, 2


def sparse_dot_topn_product(X, top_n, threads):
    """``sparse_dot_topn.sp_matmul_topn(X, X.T, top_n, n_threads, sort=True)``."""
    from sparse_dot_topn import sp_matmul_topn

    return sp_matmul_topn(X, X.T, top_n=top_n, n_threads=threads, sort=True)


def sp_matmul_rs_product(X, top_n, threads):
    """``sp_matmul_rs.sp_matmul_topn(X, X.T, top_n, n_threads, sort=True)``."""
    from sp_matmul_rs import sp_matmul_topn

    return sp_matmul_topn(X, X.T, top_n=top_n, n_threads=threads, sort=True)


PRODUCTS = {"sparse_dot_topn": sparse_dot_topn_product, "sp_matmul_rs": sp_matmul_rs_product}


def read_vectors(path):
    """``(ids, indptr, indices, weights, feature count)`` of the JSON lines at ``path``."""
    ids, lengths, cols, weights, columns = [], [], [], [], {}
    with open(path, "rb") as f:
        for line in f:
            if not line.strip():
                continue
            rec = json.loads(line)
            feats = rec["features"]
            ids.append(rec["id"])
            lengths.append(len(feats))
            for name, w in feats.items():
                cols.append(columns.setdefault(name, len(columns)))
                weights.append(w)
    indptr = np.zeros(len(ids) + 1, np.int64)
    np.cumsum(lengths, out=indptr[1:])
    return ids, indptr, np.array(cols, np.int32), np.array(weights, np.float64), len(columns)


def normalised_matrix(ids, indptr, indices, weights, n_features, max_df=None):
    """``(ids in UUID order, X)``: rows in UUID order, unit length, the
    features more than ``max_df`` vectors hold dropped after normalising."""
    X = sp.csr_matrix((weights, indices, indptr), shape=(len(ids), n_features))
    X.sum_duplicates()  # also sorts each row's columns
    order = np.argsort(np.array(ids), kind="stable")  # lower-case hex: text order = UUID order
    X = X[order]
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.csr_matrix(sp.diags(1.0 / np.where(norms > 0, norms, 1.0)) @ X)
    if max_df is not None:
        df = np.bincount(X.indices, minlength=n_features)
        X = X[:, np.flatnonzero(df <= max_df)].tocsr()
    X.sort_indices()
    return [ids[i] for i in order], X


def top_k_rows(P, k):
    """``(rows, cols, scores)`` of each row's ``k`` best in ``P`` (a CSR
    product), itself excluded, clamped to [-1, 1], grouped by row, best first,
    ties by the smaller column (the smaller UUID)."""
    P = P.tocoo()
    off = P.row != P.col
    r, c = P.row[off].astype(np.int64), P.col[off].astype(np.int64)
    s = np.clip(P.data[off], -1.0, 1.0)
    order = np.lexsort((c, -s, r))
    r, c, s = r[order], c[order], s[order]
    keep = np.arange(r.shape[0]) - np.searchsorted(r, r) < k
    return r[keep], c[keep], s[keep]


def write_lines(path, ids, rows, cols, scores):
    """The job's output lines: ``"<uuid>"\\t{"<uuid>": score, ...}``, best first."""
    bounds = np.flatnonzero(np.diff(rows)) + 1
    starts = [0] + bounds.tolist()
    ends = bounds.tolist() + [rows.shape[0]]
    rl, cl, sl = rows.tolist(), cols.tolist(), scores.tolist()
    with open(path, "w", encoding="ascii") as f:
        for s, e in zip(starts, ends) if rl else ():
            f.write('"%s"\t%s\n' % (ids[rl[s]], json.dumps(
                {ids[c]: x for c, x in zip(cl[s:e], sl[s:e])})))


def run(peer, input_path, output_path, top_k=TOP_K, threads=THREADS, max_df=None):
    """Steps 1-6 of the module's docstring with ``peer``'s product; returns
    ``{phase: (wall s, CPU s)}``."""
    product = PRODUCTS[peer]
    phases, clock = {}, [time.perf_counter(), time.process_time()]

    def lap(name):
        t, c = time.perf_counter(), time.process_time()
        phases[name] = (t - clock[0], c - clock[1])
        clock[:] = t, c

    arrays = read_vectors(input_path)
    lap("parse")
    ids, X = normalised_matrix(*arrays, max_df=max_df)
    lap("matrix")
    P = product(X, top_k + 1, threads)
    lap("product")
    rows, cols, scores = top_k_rows(P, top_k)
    lap("select")
    write_lines(output_path, ids, rows, cols, scores)
    lap("write")
    return phases


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m bench.peer_scripts",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("peer", choices=sorted(PRODUCTS))
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--top-k", type=int, default=TOP_K)
    ap.add_argument("--threads", type=int, default=THREADS)
    ap.add_argument("--max-df", type=int)
    a = ap.parse_args(argv)
    phases = run(a.peer, a.input, a.output, a.top_k, a.threads, a.max_df)
    print(json.dumps({"phases": phases}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
