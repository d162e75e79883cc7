"""Single-machine references on the parsed matrix: a scipy floor and the peers
sparse_dot_topn and sp_matmul_rs.

Both run in a child process (``python -m bench.floor SPEC``) on a corpus
already in memory (generating or reading it is not timed): rows in UUID
order, normalised over the whole vector (cosine), then the cut features
dropped.  The floor is ``Xn @ Xn.T`` on one core, in row chunks of about
``CHUNK_CELLS`` cells, each densified and cut with ``numpy.partition``, then
sorted exactly (score descending, ties by smaller UUID bytes, the vector
itself excluded) as the job does.  The peers are
``sparse_dot_topn.sp_matmul_topn(Xn, Xn.T, top_n=k + 1, n_threads=2)`` and
``sp_matmul_rs.sp_matmul_topn`` with the same arguments (the product only:
the transpose and the product timed, the diagonal dropped and each row
sorted exactly afterwards, untimed; keys ``topn_*`` and ``rs_*``; a peer
that is not installed is left out).  Each is timed best of ``passes``
(fewer once ``SECONDS`` have gone by); their neighbour sets are hashed as
``bench.measure.read_output`` hashes the job's output.
"""
import hashlib
import importlib.util
import json
import sys
import time

import numpy as np
import scipy.sparse as sp

CHUNK_CELLS = 8_000_000
SECONDS = 30.0
TOPN_THREADS = 2
#: bytes of one partial product on the compact wire (float64, after combining)
BYTES_PER_PARTIAL_PRODUCT = 24.5


def _grouped_top_k(r, c, sc, k):
    """Entries sorted by row, score descending, column; cut to ``k`` a row."""
    order = np.lexsort((c, -sc, r))
    r, c, sc = r[order], c[order], sc[order]
    keep = np.arange(r.shape[0]) - np.searchsorted(r, r) < k
    return r[keep], c[keep], sc[keep]


def floor_top_k(Xn, XT, k, measure):
    """Each row's ``k`` best neighbours in ``Xn @ XT``, the row itself excluded.

    Returns
    -------
    (rows, cols, scores, products)
        Grouped by row, best first; ``products`` counts the pairs (with the
        diagonal) that scipy's product holds.
    """
    n = Xn.shape[0]
    step = max(1, CHUNK_CELLS // max(n, 1))
    out, products = [], 0
    for s in range(0, n, step):
        e = min(n, s + step)
        P = Xn[s:e] @ XT
        products += P.nnz
        d = P.toarray()
        d[d == 0] = -np.inf
        if measure == "cosine":  # the job clamps cosines to [-1, 1]
            np.clip(d, -1.0, 1.0, out=d)
        d[np.arange(e - s), np.arange(s, e)] = -np.inf
        if n > k:  # the k-th best is the k-th smallest of -d
            kth = -np.partition(-d, k - 1, axis=1)[:, k - 1]
            kth[kth == -np.inf] = np.finfo(np.float64).min
            r, c = np.nonzero(d >= kth[:, None])
        else:
            r, c = np.nonzero(d > -np.inf)
        r, c, sc = _grouped_top_k(r, c, d[r, c], k)
        out.append((r + s, c, sc))
    return tuple(np.concatenate(x) for x in zip(*out)) + (products,)


#: the peers timed on the parsed matrix: result key prefix -> module (each has
#: ``sp_matmul_topn``)
PEERS = {"topn": "sparse_dot_topn", "rs": "sp_matmul_rs"}


def peer_product(Xn, XT, k, threads=TOPN_THREADS, module="sparse_dot_topn"):
    """``module.sp_matmul_topn(Xn, XT, top_n=k + 1, n_threads=threads, sort=True)``."""
    sp_matmul_topn = importlib.import_module(module).sp_matmul_topn
    return sp_matmul_topn(Xn, XT, top_n=k + 1, n_threads=threads, sort=True)


def topn_top_k(Xn, XT, k, measure, threads=TOPN_THREADS, module="sparse_dot_topn"):
    """The same lists from ``sparse_dot_topn.sp_matmul_topn`` (or ``module``'s:
    top ``k + 1``, the diagonal dropped)."""
    return peer_lists(peer_product(Xn, XT, k, threads, module), k, measure)


def peer_lists(P, k, measure):
    """A peer's product ``P`` (top ``k + 1`` a row) as grouped top-k lists,
    the diagonal dropped."""
    P = P.tocoo()
    off = P.row != P.col
    r, c = P.row[off].astype(np.int64), P.col[off].astype(np.int64)
    scores = np.clip(P.data[off], -1.0, 1.0) if measure == "cosine" else P.data[off]
    return _grouped_top_k(r, c, scores, k)


def _uuid_text(raw16):
    h = raw16.ljust(16, b"\0").hex()  # numpy's S16 drops trailing NULs
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


def neighbours_digest(keys, rows, cols, scores):
    """``neighbours_sha256``, ``output_lines``, ``output_pairs``, ``score_sum``
    of grouped top-k lists, as ``bench.measure.read_output`` computes them."""
    names = [_uuid_text(b) for b in keys]
    digests = []
    if rows.shape[0]:
        bounds = np.flatnonzero(np.diff(rows)) + 1
        starts = np.concatenate(([0], bounds)).tolist()
        ends = np.concatenate((bounds, [rows.shape[0]])).tolist()
        cl = cols.tolist()
        for s, e in zip(starts, ends):
            line = '"%s"\t%s' % (names[int(rows[s])], ",".join(sorted(names[c] for c in cl[s:e])))
            digests.append(hashlib.sha256(line.encode()).digest())
    return {"output_lines": len(digests), "output_pairs": int(rows.shape[0]),
            "neighbours_sha256": hashlib.sha256(b"".join(sorted(digests))).hexdigest(),
            "score_sum": float(scores.sum())}


def load_arrays(spec):
    """The corpus arrays: ``spec["npz"]`` read, or ``spec["generate"]`` generated."""
    if "npz" in spec:
        with np.load(spec["npz"]) as z:
            return {k: z[k] for k in z.files}
    from examples.generate import generate_arrays

    return generate_arrays(**spec["generate"])


def prepared_matrix(a, max_df, measure):
    """``(keys, Xn, df, keep)``: rows in UUID order, normalised, cut features dropped."""
    n, v = a["indptr"].shape[0] - 1, a["feature_ids"].shape[0]
    keys = np.ascontiguousarray(a["doc_ids"]).view("S16").ravel()
    perm = np.argsort(keys, kind="stable")
    X = sp.csr_matrix((a["weights"], a["indices"], a["indptr"]), shape=(n, v))[perm]
    df = np.bincount(X.indices, minlength=v)
    keep = (df > 0) if max_df is None else (df > 0) & (df <= max_df)
    if measure == "cosine":
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        X = sp.csr_matrix(sp.diags(1.0 / np.where(norms > 0, norms, 1.0)) @ X)
    elif measure != "dot":
        raise ValueError("the floor knows the measures dot and cosine, not %r" % measure)
    Xn = X[:, np.flatnonzero(keep)].tocsr()
    Xn.sort_indices()
    return keys[perm], Xn, df, keep


def best_of(run, passes):
    """``(walls, cpus, last result)`` of up to ``passes`` calls of ``run``."""
    walls, cpus, result = [], [], None
    while len(walls) < passes and (not walls or sum(walls) < SECONDS):
        result = None
        c0, t0 = time.process_time(), time.perf_counter()
        result = run()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return walls, cpus, result


def corpus_stats(keys, Xn, df, keep, nnz, products):
    kept = df[keep].astype(np.int64)
    nonempty = int((np.diff(Xn.indptr) > 0).sum())  # each meets itself
    return {"vectors": Xn.shape[0], "nnz": nnz, "kept_nnz": int(Xn.nnz),
            "features_used": int((df > 0).sum()), "features_kept": int(keep.sum()),
            "features_dropped": int(((df > 0) & ~keep).sum()), "max_df": int(df.max()),
            "sum_df2": int((kept * kept).sum()),
            "partial_products": int((kept * (kept - 1) // 2).sum()),
            "pairs": int((products - nonempty) // 2),
            "stripes_estimate_bytes": float((kept * kept).sum()) / 2 * BYTES_PER_PARTIAL_PRODUCT}


def child(spec):
    """Stats of the corpus, the floor's and the peer's timings and digests, as a dict."""
    k, measure, passes = spec["top_k"], spec["measure"], spec["passes"]
    a = load_arrays(spec)
    keys, Xn, df, keep = prepared_matrix(a, spec.get("max_df"), measure)
    walls, cpus, (r, c, s, products) = best_of(
        lambda: floor_top_k(Xn, Xn.T.tocsr(), k, measure), passes)
    out = corpus_stats(keys, Xn, df, keep, int(a["indices"].shape[0]), products)
    out.update(floor_wall_s=min(walls), floor_cpu_s=min(cpus), floor_wall_s_all=walls,
               floor_cpu_s_all=cpus, floor_passes=len(walls),
               floor_chunk_rows=max(1, CHUNK_CELLS // max(Xn.shape[0], 1)))
    out.update({"floor_" + x: y for x, y in neighbours_digest(keys, r, c, s).items()})
    for prefix, module in PEERS.items():
        if importlib.util.find_spec(module) is None:
            continue
        walls, cpus, P = best_of(lambda: peer_product(Xn, Xn.T.tocsr(), k, module=module),
                                 passes)
        tr, tc, ts = peer_lists(P, k, measure)
        # ties at the k-th score are the peer's to break: its scores are compared, not its ids
        same = tr.shape == r.shape and (tr == r).all() and np.allclose(ts, s, rtol=1e-12, atol=0)
        out.update({prefix + "_" + x: y for x, y in dict(
            wall_s=min(walls), cpu_s=min(cpus), passes=len(walls), threads=TOPN_THREADS,
            same_scores_as_floor=bool(same), **neighbours_digest(keys, tr, tc, ts)).items()})
    return out


if __name__ == "__main__":
    print(json.dumps(child(json.loads(sys.argv[1]))))
