"""Pruning of block-pair products (mrjobs.prune) against brute force.

Every test builds scipy matrices of prepared weights, multiplies them in
full, and checks that what the pruned plan skips could never be kept: the
same pairs survive the threshold and the same top-k lists come out.
"""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mrjobs import measures, prune

PRUNABLE = sorted(prune.SUPPORTED)


def corpus(seed, n_rows, n_feats=40, density=0.15, negative=False, float32=False,
           zipf=True):
    """Raw weights (CSR) of ``n_rows`` random vectors, seeded."""
    rng = np.random.default_rng(seed)
    p = np.full(n_feats, density)
    if zipf:
        p = np.minimum(1.0, density * 3.0 / np.arange(1, n_feats + 1) ** 0.7)
    mask = rng.random((n_rows, n_feats)) < p
    w = rng.exponential(1.0, (n_rows, n_feats)) * mask
    if negative:
        w *= np.where(rng.random((n_rows, n_feats)) < 0.3, -1.0, 1.0)
    if float32:
        w = w.astype(np.float32).astype(np.float64)
    return sp.csr_matrix(w)


def prepared(measure, raw):
    """(prepared weights as CSR, statistics) the way the job prepares them."""
    raw = raw.tocsr()
    raw.sort_indices()
    w, stats = measures.prepare_rows(measure, raw.data, np.diff(raw.indptr))
    M = sp.csr_matrix((np.asarray(w, np.float64), raw.indices.copy(), raw.indptr.copy()),
                      shape=raw.shape)
    M.has_sorted_indices = True
    return M, stats


def scorer_for(measure, row_stats, col_stats, n_features=None):
    def scorer(d, r, c):
        return measures.score(measure, d, None if row_stats is None else row_stats[r],
                              None if col_stats is None else col_stats[c],
                              n_features=n_features)
    return scorer


def all_pairs(A, C, diagonal, include_self, exact_zeros):
    r, c, d = prune.product(A, C, exact_zeros)
    if diagonal:
        keep = c >= r if include_self else c > r
        r, c, d = r[keep], c[keep], d[keep]
    return r, c, d


def emitted(r, c, scores, threshold, k, diagonal, mirror):
    """What the kernel would emit, as a set of (side, vector, other, score)."""
    keep = np.isfinite(scores)
    if threshold is not None:
        keep &= scores >= threshold
    r, c, scores = r[keep], c[keep], scores[keep]
    if diagonal:
        two = r != c
        sides = [(0, np.concatenate((r, c[two])), np.concatenate((c, r[two])),
                  np.concatenate((scores, scores[two])))]
    else:
        sides = [(0, r, c, scores)] + ([(1, c, r, scores)] if mirror else [])
    out = set()
    for side, g, o, s in sides:
        order = np.lexsort((o, -s, g))
        g, o, s = g[order], o[order], s[order]
        if k is not None:
            starts = np.flatnonzero(np.concatenate(([g.size > 0], g[1:] != g[:-1])))
            rank = np.arange(g.shape[0]) - np.repeat(starts, np.diff(np.append(starts, g.shape[0])))
            g, o, s = g[rank < k], o[rank < k], s[rank < k]
        out.update(zip([side] * g.shape[0], g.tolist(), o.tolist(), s.tolist()))
    return out


def run_both(measure, A, C, rs, cs, threshold=None, k=None, diagonal=False, include_self=False,
             mirror=True, group_size=4, how="order", n_features=None):
    exact_zeros = bool((A.data < 0).any() or (C.data < 0).any())
    scorer = scorer_for(measure, rs, rs if diagonal else cs, n_features)
    r, c, d = all_pairs(A, C, diagonal, include_self, exact_zeros)
    want = emitted(r, c, scorer(d, r, c), threshold, k, diagonal, mirror)
    plan = prune.PairPlan(A, C, measure, scorer, threshold=threshold, k=k, row_stats=rs,
                          col_stats=cs, diagonal=diagonal, include_self=include_self,
                          mirror=mirror, group_size=group_size, how=how,
                          exact_zeros=exact_zeros)
    parts = [plan.first] if plan.first is not None else []
    order = plan.row_order()
    for s in range(0, order.shape[0], 7):
        parts.append(plan.pairs(order[s:s + 7]))
    pr, pc, pd = (np.concatenate(x) for x in zip(*parts)) if parts else (r[:0], c[:0], d[:0])
    key = pr * np.int64(C.shape[0] + 1) + pc
    assert np.unique(key).shape[0] == key.shape[0], "a pair computed twice"
    # every pair computed is a real pair with the same dot product, bit for bit
    ref = dict(zip((r * np.int64(C.shape[0] + 1) + c).tolist(), d.tolist()))
    assert all(ref[kk] == dd for kk, dd in zip(key.tolist(), pd.tolist()))
    got = emitted(pr, pc, scorer(pd, pr, pc), threshold, k, diagonal, mirror)
    assert got == want
    return plan, r.shape[0], pr.shape[0]
