"""Exact pruning of block-pair products: bounds that skip what cannot qualify.

With ``--threshold T`` or ``--top-k K`` most products of a block pair are
thrown away after they are computed.  This module finds, before the
product, the rows and columns of a block pair that *cannot* give a score
that is kept, from summaries of the other side (after All-Pairs, Bayardo,
Ma & Srikant 2007, and L2AP, Anastasiu & Karypis 2014):

* A *group* is a set of vectors of one block (the whole block, or a fine
  slice of it).  Its summary is the per-feature maximum of the absolute
  prepared weights, ``M[g, f] = max |y_f|`` over the vectors ``y`` of the
  group (:func:`feature_max`), and the range of the vectors' statistics
  (:func:`stat_range`).
* A vector ``x`` gets an upper bound on ``x . y`` against every vector of a
  group in one sparse product, ``sum_f |x_f| M[g, f]`` (:func:`dot_bounds`),
  and from it, with the statistics' ranges, an upper bound on the score
  (:func:`score_bounds`).
* A (row, column group) combination whose bound is below what a score must
  reach is not multiplied (:func:`live_cells`, :func:`pruned_products`).
  With a threshold that is ``T``; with top-k each vector gets its own floor,
  the k-th best score of a cheap first pass over its most promising group
  (:func:`topk_floors`): a pair scoring below both vectors' floors is in
  neither vector's top-k.

Everything here is a pure function of scipy CSR matrices of prepared
weights (rows: vectors, columns: features), numpy arrays of statistics and
the measure's name; nothing depends on a job.

Which measures
--------------
A measure can be pruned when its score is monotone non-decreasing in the
dot product for fixed statistics, and the worst case of the statistics
over a group is known in closed form (:data:`SUPPORTED`):

* ``dot``, ``cooccurrence``: the score is the dot product.
* ``cosine``, ``pearson``: the score is the (clamped) dot product of unit
  (or centred unit) weights.
* ``tanimoto``: ``c t / (1 + t^2 - c t)`` with ``c`` the cosine and ``t``
  the ratio of the smaller norm to the larger; for ``c >= 0`` it grows with
  ``c`` and with ``t``, so the group's norm closest to the row's gives the
  bound (``c < 0`` scores at most 0).
* ``euclidean``: ``1 / (1 + |x - y|)`` with ``|x - y|^2 = |x|^2 + |y|^2 -
  2 |x| |y| c``: smallest at ``|y| = |x| c`` clamped into the group's range.
* ``jaccard``, ``overlap``, ``cityblock``: counts of shared features; the
  bound on the count is exact, and the worst count of the group's vectors
  is found in closed form (see :func:`score_bounds`).
* ``loglikelihood`` is *not* pruned: the log-likelihood ratio is large for
  pairs that share far fewer features than expected as well as far more,
  so it is not monotone in the shared count.

Exactness in floating point
---------------------------
The job computes each dot product ``d^`` as a floating-point sum of at
most ``n = nnz(x)`` products.  Whatever the order of the additions, and
with or without fused multiply-adds, ``|d^ - x.y| <= g_n sum_f |x_f y_f| +
n eta``, ``g_n = n u / (1 - n u)``, ``u = 2**-53``, ``eta = 2**-1074`` for
underflow (Higham, *Accuracy and Stability of Numerical Algorithms*,
section 3.1).  Since ``|y_f| <= M[g, f]``, ``sum_f |x_f y_f| <= U = sum_f
|x_f| M[g, f]``, and the computed ``U^`` (also a sum of ``n`` products of
non-negative numbers) is at least ``U (1 - g_n) - n eta``.  So ``d^ <= U^
(1 + g_n) / (1 - g_n) + 3 n eta <= U^ (1 + 2.2 n u) + 3 n eta`` for ``n u
<= 0.01``: :func:`dot_bounds` returns ``U^ (1 + n 2**-40) + n 2**-1000``,
which is larger by a factor of several thousand in the slack.  The scores
are monotone in the dot product in exact arithmetic; the job's scoring is
monotone in floating point for every supported measure but ``tanimoto``
and ``euclidean`` (whose rounding stays far below a relative ``2**-30``,
see :func:`score_bounds`), and every score bound is raised by that
relative ``2**-30`` before it is compared.  A pruned pair therefore never
holds a score that the job would keep: the output is the same bytes.
"""
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from mrjobs import measures

__all__ = ["SUPPORTED", "supports", "group_rows", "feature_max", "stat_range",
           "dot_bounds", "score_bounds", "side_bounds", "group_floor", "live_cells",
           "topk_floors", "product", "Layout", "PairPlan", "PruneSpec"]

#: measures whose scores can be bounded from a dot-product bound
SUPPORTED = measures.PRUNABLE

#: relative slack on a dot-product bound per term of the row (see the module doc)
DOT_SLACK = 2.0 ** -40
#: absolute slack per term (underflow)
DOT_TINY = 2.0 ** -1000
#: relative slack on a score bound (rounding of the scoring itself)
SCORE_SLACK = 2.0 ** -30
#: absolute slack on a euclidean ``|x - y|^2 / max(|x|, |y|)^2`` (in the
#: euclidean bound, :mod:`mrjobs.measures`)
Q_SLACK = measures.Q_SLACK


def supports(measure):
    """True if scores of ``measure`` can be bounded (see the module doc).

    >>> supports("cosine"), supports("loglikelihood")
    (True, False)
    """
    return measure in SUPPORTED


def group_rows(M, size, how="order"):
    """Assign the rows of ``M`` to groups of about ``size`` rows.

    Parameters
    ----------
    M : scipy.sparse.csr_matrix
    size : int
        Rows per group (the last group may be smaller).
    how : {"order", "heaviest", "length"}
        ``order``: consecutive rows (for a block sorted by UUID, a random
        grouping); ``heaviest``: rows sorted by their heaviest feature, so
        that a group's vectors share features and its summary stays tight;
        ``length``: rows sorted by their number of features.

    Returns
    -------
    (numpy.ndarray, int)
        The group of each row (int64) and the number of groups.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> M = sp.csr_matrix(np.array([[0, 2.0], [1.0, 0], [0, 3.0]]))
    >>> group_rows(M, 2, "heaviest")[0].tolist()
    [0, 0, 1]
    """
    n = M.shape[0]
    size = max(1, int(size))
    n_groups = max(1, -(-n // size))
    if how == "order" or n == 0:
        return np.arange(n, dtype=np.int64) // size, n_groups
    if how == "heaviest":
        key = _heaviest(M)
    elif how == "length":
        key = np.diff(M.indptr)
    else:
        raise ValueError("group_rows: how must be 'order', 'heaviest' or 'length', got %r"
                         % (how,))
    order = np.argsort(key, kind="stable")
    groups = np.empty(n, np.int64)
    groups[order] = np.arange(n, dtype=np.int64) // size
    return groups, n_groups


def _heaviest(M):
    """Each row's feature of largest absolute weight (the first of equals;
    -1 for an empty row)."""
    n = M.shape[0]
    lengths = np.diff(M.indptr)
    out = np.full(n, -1, np.int64)
    rows = np.repeat(np.arange(n), lengths)
    order = np.lexsort((-np.abs(M.data), rows))
    first = order[M.indptr[:-1][lengths > 0]]
    out[lengths > 0] = M.indices[first]
    return out


def feature_max(M, groups, n_groups):
    """Per-group, per-feature maximum of ``|weight|``.

    Parameters
    ----------
    M : scipy.sparse.csr_matrix
        Prepared weights, one row per vector.
    groups : numpy.ndarray
        Group of each row, in ``[0, n_groups)``.
    n_groups : int

    Returns
    -------
    scipy.sparse.csr_matrix
        ``n_groups x n_features``, entry ``(g, f)`` the largest ``|M[r, f]|``
        of the rows ``r`` of group ``g``.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> M = sp.csr_matrix(np.array([[1.0, -3.0], [2.0, 0.0], [0.0, 1.0]]))
    >>> feature_max(M, np.array([0, 0, 1]), 2).toarray().tolist()
    [[2.0, 3.0], [0.0, 1.0]]
    """
    n_features = M.shape[1]
    rows = np.repeat(np.asarray(groups, np.int64), np.diff(M.indptr))
    key = rows * np.int64(n_features) + M.indices
    a = np.abs(M.data)
    if not key.shape[0]:
        return sp.csr_matrix((n_groups, n_features))
    order = np.argsort(key, kind="stable")
    key = key[order]
    starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
    mx = np.maximum.reduceat(a[order], starts)
    k = key[starts]
    out = sp.csr_matrix((mx, (k // n_features, k % n_features)),
                        shape=(n_groups, n_features))
    out.sort_indices()
    return out


def stat_range(stats, groups, n_groups):
    """``(lo, hi)``: each group's smallest and largest statistic (``+inf``,
    ``-inf`` for an empty group), or ``(None, None)`` without statistics.

    >>> lo, hi = stat_range(np.array([3.0, 1.0, 2.0]), np.array([0, 0, 1]), 2)
    >>> lo.tolist(), hi.tolist()
    ([1.0, 2.0], [3.0, 2.0])
    """
    if stats is None:
        return None, None
    lo = np.full(n_groups, np.inf)
    hi = np.full(n_groups, -np.inf)
    np.minimum.at(lo, groups, stats)
    np.maximum.at(hi, groups, stats)
    return lo, hi


def dot_bounds(A, summary):
    """Upper bounds on ``A[r] . y`` as the job computes it, for every vector
    ``y`` of each group: ``(n_rows, n_groups)`` float64.

    ``|A| @ summary.T`` (one sparse product), raised by a relative
    ``nnz(row) * 2**-40`` and an absolute ``nnz(row) * 2**-1000``: at least
    every rounded dot product whatever the order of the additions (proof in
    the module doc).

    >>> import scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[0.6, -0.8]]))
    >>> S = sp.csr_matrix(np.array([[1.0, 0.5]]))
    >>> float(dot_bounds(A, S)[0, 0]) > 1.0
    True
    """
    absA = A.copy()
    absA.data = np.abs(absA.data)
    U = (absA @ summary.T).toarray()
    n = np.diff(A.indptr).astype(np.float64)[:, None]
    with np.errstate(over="ignore"):
        return U * (1.0 + n * DOT_SLACK) + n * DOT_TINY


def score_bounds(measure, dub, row_stats=None, lo=None, hi=None):
    """Upper bounds on scores from upper bounds on dot products.

    Parameters
    ----------
    measure : str
        One of :data:`SUPPORTED`.
    dub : numpy.ndarray
        ``(n_rows, n_groups)`` dot-product bounds (:func:`dot_bounds`).
    row_stats : numpy.ndarray or None
        The rows' statistics (the measure's, see :mod:`mrjobs.measures`).
    lo, hi : numpy.ndarray or None
        Each group's smallest and largest statistic (:func:`stat_range`).

    Returns
    -------
    numpy.ndarray
        ``(n_rows, n_groups)``: at least the score the job computes for any
        row and any vector of the group (``-inf`` for an empty group), raised
        by a relative :data:`SCORE_SLACK` against the rounding of the scoring.

    Notes
    -----
    For each measure the bound is the exact maximum, over the group's range
    of statistics, of the score at the dot bound (closed forms in the
    module doc).  ``cosine``, ``pearson``, ``dot``, ``cooccurrence`` and the
    count measures score with operations that are each monotone in ``d``
    (clamping, exact integer sums, one correctly rounded division), so the
    job's rounded score never exceeds the rounded bound.  ``tanimoto``
    rounds to a relative ~1e-12 (the norms' ratio ``t`` comes from ``exp``
    of a difference of logarithms below ~710; its denominator is >= 3/4).
    For ``euclidean`` the job's ``q = 1 + t^2 - 2 t c`` carries an absolute
    error below ~1e-12 (the same ``t``), scaled by the larger norm squared:
    the bound lowers ``q`` by :data:`Q_SLACK` (2**-36), which covers it
    whichever vector is the larger, and the remaining rounding (log, exp,
    one division) is relative ~1e-13.

    Examples
    --------
    >>> score_bounds("jaccard", np.array([[2.0]]), np.array([4.0]),
    ...               np.array([4.0]), np.array([6.0])).round(6).tolist()
    [[0.333333]]
    """
    if measure not in SUPPORTED:
        raise ValueError("measure %r cannot be pruned; expected one of %s"
                         % (measure, ", ".join(sorted(SUPPORTED))))
    d = np.asarray(dub, dtype=np.float64)
    with np.errstate(all="ignore"):
        # the measure's own bound (its registry entry, mrjobs.measures)
        return _slackened(measures.get(measure).bound(d, row_stats, lo, hi))


def _slackened(s):
    """A score bound raised by :data:`SCORE_SLACK`; a bound that is not a
    number bounds nothing and keeps its cell live (NaN compares False with
    every floor, which would kill it)."""
    with np.errstate(all="ignore"):
        s = np.where(np.isnan(s), np.inf, s)
        return s + SCORE_SLACK * np.abs(np.where(np.isfinite(s), s, 0.0))


def group_floor(floor, groups, n_groups):
    """Each group's smallest per-vector floor (``+inf`` for an empty group)."""
    out = np.full(n_groups, np.inf)
    np.minimum.at(out, groups, floor)
    return out


def live_cells(bound, row_floor, col_floor, col_groups, n_groups):
    """Which (row, column group) products can hold a kept score.

    Parameters
    ----------
    bound : numpy.ndarray
        ``(n_rows, n_groups)`` score bounds (:func:`score_bounds`).
    row_floor, col_floor : numpy.ndarray
        Per vector, the score a pair must reach to be kept for it: the
        threshold, or the larger of the threshold and the k-th best score
        known (:func:`topk_floors`); ``-inf`` where anything goes.
    col_groups : numpy.ndarray
        The group of each column vector.

    Returns
    -------
    numpy.ndarray
        Boolean ``(n_rows, n_groups)``.  A pair ``(r, c)`` in a dead cell
        scores below ``row_floor[r]`` and below ``col_floor[c]``: it is kept
        in neither direction, so it need not be computed.

    Examples
    --------
    >>> live_cells(np.array([[0.4, 0.9]]), np.array([0.5]), np.array([0.5, 0.5]),
    ...            np.array([0, 1]), 2).tolist()
    [[False, True]]
    >>> live_cells(np.array([[np.nan]]), np.array([0.5]), np.array([0.5]),
    ...            np.array([0]), 1).tolist()
    [[True]]
    """
    need = np.minimum(np.asarray(row_floor, np.float64)[:, None],
                      group_floor(col_floor, col_groups, n_groups)[None, :])
    # only a bound that is known to be below the floor kills a cell (NaN: live)
    return ~(bound < need)


def topk_floors(n, k, r, c, scores, others=None):
    """Each vector's k-th best score among the scored pairs given, ``-inf``
    with fewer than ``k``: a lower bound on its k-th best in the block pair.

    Parameters
    ----------
    n : int
        Number of vectors of the side.
    k : int
    r, c : numpy.ndarray
        The side's vector and the other vector of each pair (distinct
        pairs, each counted once per side it is listed for).
    scores : numpy.ndarray
        Their scores (non-finite scores are left out).

    Examples
    --------
    >>> topk_floors(2, 2, np.array([0, 0, 0, 1]), np.array([1, 2, 3, 0]),
    ...             np.array([0.2, 0.9, 0.5, 0.7])).tolist()
    [0.5, -inf]
    """
    floor = np.full(n, -np.inf)
    ok = np.isfinite(scores)
    r, scores = r[ok], scores[ok]
    if not r.shape[0]:
        return floor
    order = np.lexsort((-scores, r))
    r, scores = r[order], scores[order]
    starts = np.flatnonzero(np.concatenate(([True], r[1:] != r[:-1])))
    counts = np.diff(np.append(starts, r.shape[0]))
    full = counts >= k
    floor[r[starts[full]]] = scores[starts[full] + k - 1]
    return floor


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


def side_bounds(A, C, col_groups, n_groups, measure, row_stats, col_stats):
    """Score bounds of the rows of ``A`` against each group of ``C``'s rows."""
    S = feature_max(C, col_groups, n_groups)
    lo, hi = stat_range(col_stats, col_groups, n_groups)
    return score_bounds(measure, dot_bounds(A, S), row_stats, lo, hi)


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
        self.rb = side_bounds(A, self.C, cl.groups, cl.n_groups, measure, row_stats,
                              row_stats if diagonal else col_stats)
        if diagonal:
            self.cb = self.rb
        elif mirror:
            self.cb = side_bounds(C, A, rg, n_rg, measure, col_stats, row_stats)
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
        rl, cl = self.rows, self.cols
        theta_c = self.theta_r if self.diagonal else self.theta_c
        self.live_r = live_cells(self.rb, self.theta_r, theta_c, cl.groups, cl.n_groups)
        if self.diagonal:
            self.live_c = self.live_r
        elif self.cb is not None:
            self.live_c = live_cells(self.cb, theta_c, self.theta_r, rl.groups, rl.n_groups)
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
        self.best_r = self._best(self.rb, t)
        parts = [self._cells_by(self.best_r, self.A, self.cols, False)]
        self.best_c = None
        if self.cb is not None and not self.diagonal:
            self.best_c = self._best(self.cb, t)
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
