"""What a block pair must multiply, decided before the product
(:class:`PairPlan`, see :mod:`mrjobs.pairs.pruning`): the products of live
cells, over the two sides' grouped layouts."""
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from mrjobs.pairs.cellbounds import (dot_bounds, feature_max, group_rows, live_cells,
                                     score_bounds, stat_range, topk_floors)

__all__ = ["product", "product_t", "Layout", "PruneSpec", "PairPlan"]


def product(A, C, exact_zeros=False):
    """``(rows, cols, dots)`` of ``A @ C.T`` (local indices), every pair that
    shares a feature; with ``exact_zeros`` also the pairs whose products
    cancel to exactly 0.0 (scipy's product drops them)."""
    return product_t(A, C.T.tocsr(), exact_zeros)


def product_t(A, Ct, exact_zeros=False):
    """:func:`product` with the right side given transposed (CSR)."""
    P = (A @ Ct).tocsr()
    r = np.repeat(np.arange(P.shape[0], dtype=np.int64), np.diff(P.indptr))
    c = P.indices.astype(np.int64)
    d = P.data
    if not exact_zeros:
        return r, c, d
    Ab, Cb = A.copy(), Ct.copy()
    Ab.data = np.ones_like(Ab.data)
    Cb.data = np.ones_like(Cb.data)
    Q = (Ab @ Cb).tocsr()
    if Q.nnz == P.nnz:
        return r, c, d
    qr = np.repeat(np.arange(Q.shape[0], dtype=np.int64), np.diff(Q.indptr))
    qc = Q.indices.astype(np.int64)
    width = np.int64(Ct.shape[1] + 1)
    have = r * width + c
    order = np.argsort(have)
    want = qr * width + qc
    pos = np.minimum(np.searchsorted(have, want, sorter=order), max(have.shape[0] - 1, 0))
    found = (have[order[pos]] == want) if have.shape[0] else np.zeros(want.shape[0], bool)
    out = np.zeros(want.shape[0])
    out[found] = d[order[pos[found]]]
    return qr, qc, out


class Layout:
    """The vectors of one side, grouped.

    ``keyed`` is the side's matrix over *(group, feature)* columns: a
    vector's entry for feature ``f`` sits in column ``(group, f)``.  A row
    spread over the same columns for the groups it is live against meets, in
    one sparse product, exactly the vectors of those groups -- the same
    terms added in the same order as its plain product, so the same bits.
    """

    def __init__(self, M, groups, n_groups):
        self.M, self.groups, self.n_groups = M, groups, n_groups
        self.perm = np.argsort(groups, kind="stable")
        self.edges = np.searchsorted(groups[self.perm], np.arange(n_groups + 1))
        self.pos = np.empty_like(self.perm)
        self.pos[self.perm] = np.arange(self.perm.shape[0])
        self.n_features = np.int64(M.shape[1])
        key = (np.repeat(groups.astype(np.int64), np.diff(M.indptr)) * self.n_features
               + M.indices)
        self.keys, inverse = np.unique(key, return_inverse=True)
        keyed = sp.csr_matrix((M.data, inverse.ravel(), M.indptr),
                              shape=(M.shape[0], self.keys.shape[0]))
        self.keyed_t = keyed.T.tocsr()
        self.keyed_t.sort_indices()

    def spread(self, A, rows, groups):
        """``A``'s rows ``rows``, each over the columns of group ``groups``
        (only the features the group has)."""
        A_rows = A[rows]
        lengths = np.diff(A_rows.indptr)
        key = np.repeat(np.asarray(groups, np.int64), lengths) * self.n_features + A_rows.indices
        at = np.searchsorted(self.keys, key)
        at = np.minimum(at, max(self.keys.shape[0] - 1, 0))
        hit = (self.keys[at] == key) if self.keys.shape[0] else np.zeros(key.shape, bool)
        owner = np.repeat(np.arange(len(rows)), lengths)[hit]
        indptr = np.concatenate(([0], np.cumsum(np.bincount(owner, minlength=len(rows)))))
        return sp.csr_matrix((A_rows.data[hit], at[hit], indptr),
                             shape=(len(rows), self.keys.shape[0]))

    def product(self, A, rows, groups, exact_zeros=False):
        """``(rows, cols, dots)`` of each row against the vectors of its group."""
        r, c, d = product_t(self.spread(A, rows, groups), self.keyed_t, exact_zeros)
        return np.asarray(rows, np.int64)[r], c, d


@dataclass(frozen=True, eq=False)
class PruneSpec:
    """What a :class:`PairPlan` bounds, in one value.

    Attributes
    ----------
    measure : str
        One of :data:`SUPPORTED`.
    threshold, k : float or None, int or None
        The job's ``--threshold`` and ``--top-k``.
    row_stats, col_stats : numpy.ndarray or None
        The measure's statistics of the two blocks' vectors.
    diagonal : bool
        A block against itself: each unordered pair once.
    include_self : bool
        (diagonal) the pair of a vector with itself is scored.
    mirror : bool
        Columns keep their own best (False: only the rows' side is kept,
        as with ``--queries``).
    group_size : int
        Vectors per group.  Finer groups bound more tightly and cost more
        small products.
    how : str
        How vectors are grouped (:func:`group_rows`).
    exact_zeros : bool
        Pairs whose products cancel to 0.0 are scored (negative weights).
    threads : int
        Threads the bounds may use, a chunk of rows each (the sparse
        products and numpy's loops let go of Python's lock).
    """

    measure: str
    threshold: float = None
    k: int = None
    row_stats: object = None
    col_stats: object = None
    diagonal: bool = False
    include_self: bool = False
    mirror: bool = True
    group_size: int = 64
    how: str = "order"
    exact_zeros: bool = False
    threads: int = 1


#: bytes of a temporary bound matrix (rows x groups, float64) at most: the
#: bounds go a chunk of rows at a time, each chunk's temporaries below glibc's
#: largest mmap threshold (32 MB), so that they reuse the heap's memory
#: instead of fresh pages the system zeroes first (the whole matrix at once,
#: 117,609 x 1,838 cells of the WordNet glosses in one block: 1.7 GB a
#: temporary, and most of the pruned run's time went to zeroing pages)
CHUNK_BYTES = 16 << 20


class _SideBounds:
    """The score bounds of the rows of ``M`` against each group of the other
    side's rows (:func:`~mrjobs.pairs.cellbounds.side_bounds`), a chunk of
    rows at a time, on ``threads`` threads: the same numbers, row by row."""

    def __init__(self, M, other, groups, n_groups, measure, row_stats, other_stats,
                 threads=1):
        self.M, self.measure, self.row_stats = M, measure, row_stats
        self.groups, self.n_groups, self.threads = groups, n_groups, threads
        self.summary = feature_max(other, groups, n_groups)
        self.lo, self.hi = stat_range(other_stats, groups, n_groups)

    def _each(self, use):
        """``(rows slice, use(rows, bounds of those rows))`` of each chunk, in order."""
        n = self.M.shape[0]
        step = max(1, CHUNK_BYTES // (8 * max(self.n_groups, 1)))

        def work(rows):
            stats = None if self.row_stats is None else self.row_stats[rows]
            return rows, use(rows, score_bounds(
                self.measure, dot_bounds(self.M[rows], self.summary), stats, self.lo, self.hi))

        spans = [slice(s, min(s + step, n)) for s in range(0, n, step)]
        if self.threads > 1 and len(spans) > 1:
            from concurrent.futures import ThreadPoolExecutor
            with ThreadPoolExecutor(self.threads) as pool:
                yield from pool.map(work, spans)
        else:
            yield from map(work, spans)

    def live(self, row_floor, col_floor):
        """:func:`~mrjobs.pairs.cellbounds.live_cells` of every row."""
        out = np.empty((self.M.shape[0], self.n_groups), bool)
        for rows, live in self._each(lambda rows, bound: live_cells(
                bound, row_floor[rows], col_floor, self.groups, self.n_groups)):
            out[rows] = live
        return out

    def best(self, t):
        """Each row's group of largest bound; -1 where none can reach ``t``."""
        out = np.empty(self.M.shape[0], np.int64)
        for rows, best in self._each(lambda rows, bound: PairPlan._best(bound, t)):
            out[rows] = best
        return out


class PairPlan:
    """What a block pair must multiply, decided before the product.

    Parameters
    ----------
    A, C : scipy.sparse.csr_matrix
        Prepared weights of the rows' block and the columns' block, over the
        same features (``C is A`` for a diagonal pair).
    scorer : callable
        ``scorer(dots, rows, cols) -> scores``, the job's scores (only called
        with top-k, for the first pass).
    spec : PruneSpec
        The measure, ``--threshold`` and ``--top-k``, the blocks' statistics
        and shape, and how vectors are grouped.

    Pairs in dead cells score below both vectors' floors (see
    :func:`live_cells`): the rest, :meth:`pairs`, holds every pair that the
    unpruned job would keep in either direction.
    """

    def __init__(self, A, C, scorer, spec):
        measure, threshold, k, mirror = spec.measure, spec.threshold, spec.k, spec.mirror
        row_stats, col_stats, diagonal = spec.row_stats, spec.col_stats, spec.diagonal
        include_self, exact_zeros = spec.include_self, spec.exact_zeros
        group_size, how = spec.group_size, spec.how
        self.A, self.C, self.diagonal = A, (A if diagonal else C), diagonal
        self.include_self, self.exact_zeros = include_self, exact_zeros
        self.products = 0
        rg, n_rg = group_rows(A, group_size, how)
        self.rows = Layout(A, rg, n_rg)
        self.cols = self.rows if diagonal else Layout(C, *group_rows(C, group_size, how))
        cl = self.cols
        self.rb = _SideBounds(A, self.C, cl.groups, cl.n_groups, measure, row_stats,
                              row_stats if diagonal else col_stats, spec.threads)
        if diagonal:
            self.cb = self.rb
        elif mirror:
            self.cb = _SideBounds(C, A, rg, n_rg, measure, col_stats, row_stats, spec.threads)
        else:
            self.cb = None
        t = -np.inf if threshold is None else float(threshold)
        self.theta_r = np.full(A.shape[0], t)
        self.theta_c = np.full(self.C.shape[0], t if mirror else np.inf)
        self.first = None
        if k is not None:
            self._first_pass(scorer, k, t)
        self._live()

    def _live(self):
        theta_c = self.theta_r if self.diagonal else self.theta_c
        self.live_r = self.rb.live(self.theta_r, theta_c)
        if self.diagonal:
            self.live_c = self.live_r
        elif self.cb is not None:
            self.live_c = self.cb.live(theta_c, self.theta_r)
        else:
            self.live_c = None
        self.cells = self.live_r.size
        self.cells_pruned = int(self.cells - self.live_r.sum())
        self.rows_pruned = int((~self.live_r.any(axis=1)).sum())
        self.cols_pruned = (0 if self.diagonal or self.live_c is None
                            else int((~self.live_c.any(axis=1)).sum()))
        self.pair_pruned = bool(self.rows_pruned == self.A.shape[0]
                                or self.cols_pruned == self.C.shape[0])
        if self.first is not None:
            # the first pass's cells are done
            for live, best in ((self.live_r, self.best_r), (self.live_c, self.best_c)):
                if live is not None and best is not None:
                    done = np.flatnonzero(best >= 0)
                    live[done, best[done]] = False

    def row_order(self):
        """The order in which to take rows in chunks (for a diagonal pair,
        grouped, so that each chunk meets each group's pairs once)."""
        return self.rows.perm if self.diagonal else np.arange(self.A.shape[0])

    def pairs(self, rows):
        """``(rows, cols, dots)`` of the live cells of ``rows`` (a slice of
        :meth:`row_order`), in the two blocks' indices; for a diagonal pair
        each pair once, ``row <= col``.  The first pass's pairs are in
        :attr:`first`."""
        rl, cl = self.rows, self.cols
        rows = np.asarray(rows, np.int64)
        live = self.live_r[rows]
        if self.diagonal:
            # groups wholly before a row hold no pair (row, later vector)
            live &= cl.edges[1:][None, :] > rl.pos[rows][:, None]
        at, groups = np.nonzero(live)
        r, c, d = cl.product(self.A, rows[at], groups, self.exact_zeros)
        self.products += d.shape[0]
        keep = (np.ones(r.shape[0], bool) if self.live_c is None
                else self.live_c[c, rl.groups[r]])
        if self.diagonal:
            keep &= (rl.pos[r] <= rl.pos[c]) if self.include_self else (rl.pos[r] < rl.pos[c])
        r, c, d = r[keep], c[keep], d[keep]
        if self.diagonal:
            r, c = np.minimum(r, c), np.maximum(r, c)
        return r, c, d

    def _first_pass(self, scorer, k, t):
        """Each row against its most promising group (and, mirrored, each
        column against its): the k-th best score found is a floor."""
        self.best_r = self.rb.best(t)
        parts = [self._cells_by(self.best_r, self.A, self.cols, False)]
        self.best_c = None
        if self.cb is not None and not self.diagonal:
            self.best_c = self.cb.best(t)
            parts.append(self._cells_by(self.best_c, self.C, self.rows, True))
        r, c, d = (np.concatenate(x) for x in zip(*parts))
        if self.diagonal:
            r, c = np.minimum(r, c), np.maximum(r, c)
            ok = (r < c) | ((r == c) & self.include_self)
            r, c, d = r[ok], c[ok], d[ok]
        key = r * np.int64(self.C.shape[0]) + c
        _, first = np.unique(key, return_index=True)
        r, c, d = r[first], c[first], d[first]
        s = np.asarray(scorer(d, r, c), dtype=np.float64)
        if self.diagonal:
            two = r != c
            floor = topk_floors(self.A.shape[0], k, np.concatenate((r, c[two])),
                                np.concatenate((c, r[two])), np.concatenate((s, s[two])))
            self.theta_r = np.maximum(self.theta_r, floor)
        else:
            self.theta_r = np.maximum(self.theta_r, topk_floors(self.A.shape[0], k, r, c, s))
            if self.cb is not None:
                self.theta_c = np.maximum(self.theta_c,
                                          topk_floors(self.C.shape[0], k, c, r, s))
        self.first = (r, c, d)

    @staticmethod
    def _best(bound, t):
        """Each vector's group of largest bound; -1 where none can reach ``t``."""
        best = np.argmax(bound, axis=1) if bound.shape[1] else np.zeros(bound.shape[0], int)
        if bound.shape[1]:
            best[bound[np.arange(bound.shape[0]), best] < t] = -1
        else:
            best[:] = -1
        return best

    def _cells_by(self, best, M, layout, flip):
        """Products of each vector of ``M`` with the group ``best`` names."""
        idx = np.flatnonzero(best >= 0)
        r, c, d = layout.product(M, idx, best[idx], self.exact_zeros)
        self.products += d.shape[0]
        return (c, r, d) if flip else (r, c, d)
