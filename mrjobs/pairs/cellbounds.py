"""The bounds of :mod:`mrjobs.pairs.pruning`: groups of vectors and their
summaries, upper bounds on dot products and scores of (row, group) cells,
the floors a score must reach, and which cells are live (the proofs are in
that module's doc)."""
import numpy as np

from mrjobs import measures

__all__ = ["SUPPORTED", "DOT_SLACK", "DOT_TINY", "SCORE_SLACK", "Q_SLACK", "supports",
           "group_rows", "feature_max", "stat_range", "dot_bounds", "score_bounds",
           "side_bounds", "group_floor", "live_cells", "topk_floors"]

#: measures whose scores can be bounded from a dot-product bound
SUPPORTED = measures.PRUNABLE

#: relative slack on a dot-product bound per term of the row (see :mod:`mrjobs.pairs.pruning`)
DOT_SLACK = 2.0 ** -40
#: absolute slack per term (underflow)
DOT_TINY = 2.0 ** -1000
#: relative slack on a score bound (rounding of the scoring itself)
SCORE_SLACK = 2.0 ** -30
#: absolute slack on a euclidean ``|x - y|^2 / max(|x|, |y|)^2`` (in the
#: euclidean bound, :mod:`mrjobs.measures`)
Q_SLACK = measures.Q_SLACK


def supports(measure):
    """True if scores of ``measure`` can be bounded (see :mod:`mrjobs.pairs.pruning`).

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
    import scipy.sparse as sp  # (here: stripes tasks import the module without scipy)
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
    # a NaN statistic (correlation's vector without variance, which the job
    # does not index) makes its group's range NaN: its bounds are NaN, and
    # NaN bounds keep their cells live
    with np.errstate(invalid="ignore"):
        np.minimum.at(lo, groups, stats)
        np.maximum.at(hi, groups, stats)
    return lo, hi


def dot_bounds(A, summary):
    """Upper bounds on ``A[r] . y`` as the job computes it, for every vector
    ``y`` of each group: ``(n_rows, n_groups)`` float64.

    ``|A| @ summary.T`` (one sparse product), raised by a relative
    ``nnz(row) * 2**-40`` and an absolute ``nnz(row) * 2**-1000``: at least
    every rounded dot product whatever the order of the additions (proof in
    the doc of :mod:`mrjobs.pairs.pruning`).

    >>> import scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[0.6, -0.8]]))
    >>> S = sp.csr_matrix(np.array([[1.0, 0.5]]))
    >>> float(dot_bounds(A, S)[0, 0]) > 1.0
    True
    """
    absA = A.copy()
    absA.data = np.abs(absA.data)
    U = (absA @ summary.T).toarray().astype(np.float64, copy=False)
    n = np.diff(A.indptr).astype(np.float64)[:, None]
    with np.errstate(over="ignore"):
        # in place (the same operations, a product then a sum: the same
        # bits): a bound matrix is rows x groups, and each temporary one is
        # memory the system zeroes first
        U *= 1.0 + n * DOT_SLACK
        U += n * DOT_TINY
        return U


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
    of statistics, of the score at the dot bound (closed forms in the doc
    of :mod:`mrjobs.pairs.pruning`).  ``cosine``, ``pearson``, ``dot``, ``cooccurrence`` and the
    count measures score with operations that are each monotone in ``d``
    (clamping, exact integer sums, one correctly rounded division), so the
    job's rounded score never exceeds the rounded bound; so does
    ``correlation``, ``d - a b`` with the bound's ``a b*`` rounded no higher
    than the job's ``a b``.  ``tanimoto``
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
        s = measures.get(measure).bound(d, row_stats, lo, hi)
        return _slackened(s, mine=not np.shares_memory(s, dub))


def _slackened(s, mine=False):
    """A score bound raised by :data:`SCORE_SLACK`; a bound that is not a
    number bounds nothing and keeps its cell live (NaN compares False with
    every floor, which would kill it).  ``mine``: ``s`` may be changed in
    place (the same operations and bits, without a temporary matrix each).

    >>> _slackened(np.array([np.nan, np.inf, 1.0, -2.0]))[:2].tolist()
    [inf, inf]
    """
    with np.errstate(all="ignore"):
        s = (np.asarray(s, dtype=np.float64) if mine
             else np.array(s, dtype=np.float64))
        np.copyto(s, np.inf, where=np.isnan(s))
        slack = np.abs(s)
        slack[~np.isfinite(slack)] = 0.0
        slack *= SCORE_SLACK
        s += slack
        return s


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


def side_bounds(A, C, col_groups, n_groups, measure, row_stats, col_stats):
    """Score bounds of the rows of ``A`` against each group of ``C``'s rows."""
    S = feature_max(C, col_groups, n_groups)
    lo, hi = stat_range(col_stats, col_groups, n_groups)
    return score_bounds(measure, dot_bounds(A, S), row_stats, lo, hi)
