"""The chunks of the pair kernel (:func:`mrjobs.pairs.kernel.pair_best`): a
chunk of rows' dot products (exact zeros put back), its scores, each row's
best and the columns' held candidates, and the chunks' bounds and ends."""
import numpy as np

from mrjobs.pairs.idarrays import top_k_groups

__all__ = ["ROWS", "COLUMNS", "Held", "product_bounds", "row_products", "chunk_dots", "upper",
           "chunk_scores", "chunk_best", "sparse_best", "group_best", "chunk_ends",
           "may_hold_zero_dots"]

#: direction of a result: ``groups`` index rows of ``A``, ``others`` rows of ``C``
ROWS = 0
#: direction of a result: ``groups`` index rows of ``C``, ``others`` rows of ``A``
COLUMNS = 1


def product_bounds(A, C):
    """Upper bound on each row's products: the sum of its features' df among
    the rows of ``C`` (at most ``C``'s row count)."""
    n_c = C.shape[0]
    df_c = np.bincount(C.indices, minlength=A.shape[1])
    return np.minimum(np.bincount(np.repeat(np.arange(A.shape[0]), np.diff(A.indptr)),
                                  weights=df_c[A.indices], minlength=A.shape[0]), n_c)


def row_products(A, C, diagonal=False, include_self=False):
    """Each row's multiply-adds in the pair product: the sum, over its
    features, of the rows of ``C`` that hold it -- on a diagonal block
    (``C is A``), of the rows after it (and itself, with ``include_self``):
    the upper triangle the job needs.  Summed over a job's block pairs, this
    is the planner's Σ_f df_f(df_f-1)/2 over the kept features (df_f·dq_f
    under ``--queries``).  O(nnz).

    >>> import scipy.sparse as sp
    >>> A = sp.csr_matrix(np.array([[1., 1.], [1., 0.], [1., 1.]]))
    >>> row_products(A, A).tolist(), row_products(A, A, diagonal=True).tolist()
    ([5, 3, 5], [3, 1, 0])
    """
    n = A.shape[0]
    if not diagonal:
        df_c = np.bincount(C.indices, minlength=A.shape[1])
        per_entry = df_c[A.indices]
        rows = np.repeat(np.arange(n), np.diff(A.indptr))
    else:
        T = A.T.tocsr()  # a feature's rows, ascending
        if not T.has_sorted_indices:
            T.sort_indices()
        held = np.diff(T.indptr)
        rank = np.arange(T.nnz) - np.repeat(T.indptr[:-1], held)
        per_entry = np.repeat(held, held) - rank - (0 if include_self else 1)
        rows = T.indices
    return np.bincount(rows, weights=per_entry, minlength=n).astype(np.int64)


def chunk_dots(A_chunk, Bt, r0, c0, exact_zeros):
    """(rows, cols, dot products) of one chunk, in global indices."""
    P = A_chunk @ Bt
    r, c, dots = _coo(P, r0, c0)
    if exact_zeros:
        r, c, dots = _with_zero_dots(A_chunk, Bt, r0, c0, r, c, dots)
    return r, c, dots


def upper(r, c, dots, include_self):
    """The entries of a diagonal block's upper triangle (with the diagonal
    under ``include_self``)."""
    keep = c >= r if include_self else c > r
    return r[keep], c[keep], dots[keep]


def chunk_scores(r, c, dots, scorer, stats):
    """The kept (rows, cols, scores) of a chunk's dot products (of the upper
    triangle, on a diagonal block)."""
    stats_a, stats_c = stats
    scores = scorer.score(dots, None if stats_a is None else stats_a[r],
                          None if stats_c is None else stats_c[c])
    keep = scorer.keep(scores)
    if keep is not None:
        r, c, scores = r[keep], c[keep], scores[keep]
    return r, c, scores


def chunk_best(r, c, scores, spec, span, held):
    """Yield the rows' best of one scored chunk; hold the columns' candidates."""
    start, end, c0, n_c = span
    k, limit, mirror, diagonal = spec.k, spec.limit, spec.mirror, spec.diagonal
    self_pairs = diagonal and spec.include_self
    n_r = end - start
    if k is not None and _dense_enough(scores.shape[0], n_r, n_c - c0, k, limit):
        # one dense array (the chunk's rows, the columns it can reach) serves
        # both directions: numpy.partition selects in linear time
        neg = np.full((n_r, n_c - c0), np.inf)
        neg[r - start, c - c0] = -scores
        yield (ROWS,) + _dense_best(neg, k, 1, start, c0)
        if mirror:
            if self_pairs:
                neg[np.arange(n_r), np.arange(n_r)] = np.inf
            floor = None if held.floor is None else held.floor[c0:]
            held.add(*_dense_best(neg, k, 0, start, c0, floor, ordered=False))
        return
    yield from sparse_best(r, c, scores, k, held, mirror, diagonal)


def sparse_best(r, c, scores, k, held, mirror, diagonal):
    """Yield the rows' best of scored entries; hold the columns' candidates
    (those at or above a column's current floor; not a row with itself)."""
    yield (ROWS,) + group_best(r, c, scores, k)
    if mirror:
        other = c != r if diagonal else np.ones(c.shape[0], bool)
        if held.floor is not None:
            other &= scores >= held.floor[c]
        held.add(c[other], r[other], scores[other])


def group_best(groups, others, scores, k):
    """Each group's ``k`` best entries (all without ``k``), grouped by group:
    ``(groups, others, scores)``, score descending, ties by smaller other
    (indices whose order is the UUIDs' order)."""
    if k is None:
        order = np.argsort(groups, kind="stable")
    else:
        order = top_k_groups(groups, others, scores, k)
    return groups[order], others[order], scores[order]


def _dense_enough(entries, n_rows, n_cols, k, limit):
    """Select top-k on a dense array rather than by sorting the entries: worth
    it when rows have more than ``k`` scores and the array is not much larger
    than the entries (a partition costs a few ns a cell, a three-key sort
    ~100 ns an entry); never more than ``4 * limit`` cells."""
    cells = n_rows * n_cols
    return (n_cols > k and entries > 2 * k * n_rows and 16 * entries >= cells
            and cells <= 4 * limit)


def _dense_best(neg, k, axis, r0, c0, floor=None, ordered=True):
    """``_best`` of a dense chunk of *negated* scores (``+inf`` where there is
    no score), grouped along ``axis`` (1: by row, 0: by column).

    ``numpy.partition`` narrows each group to the scores tied with its k-th
    best or better (selecting the k smallest negated scores: the absent cells
    all sit at the discarded end, which keeps the selection linear even when
    most cells are absent); they are then ordered exactly.  With ``floor``
    (one score per group: the k-th best seen so far), scores below it are
    dropped instead, without a partition.  ``ordered=False`` returns the
    candidates unordered (for :class:`Held`)."""
    n = neg.shape[axis]
    mask = neg < np.inf
    if floor is not None:
        mask &= neg <= -(floor[None, :] if axis == 0 else floor[:, None])
    elif n > k:
        kth = np.partition(neg, k - 1, axis=axis).take([k - 1], axis=axis)
        mask &= neg <= kth
    r, c = np.nonzero(mask)
    scores = -neg[r, c]
    r += r0
    c += c0
    g, o = (r, c) if axis == 1 else (c, r)
    if not ordered:
        return g, o, scores
    return group_best(g, o, scores, k)


class Held:
    """Mirrored candidates (column vector, row vector, score) of a block pair,
    kept to each column's ``k`` best whenever more than ``bound`` pile up.

    After such a cut, :attr:`floor` holds each column's k-th best score so
    far (``-inf`` for columns with fewer): later candidates below it can be
    dropped at once."""

    def __init__(self, k, bound, n_groups):
        self.k = k
        self.bound = bound
        self.n_groups = n_groups
        self.parts = []
        self.n = 0
        self.floor = None

    def add(self, groups, others, scores):
        if groups.shape[0]:
            self.parts.append((groups, others, scores))
            self.n += groups.shape[0]
            if self.k is not None and self.n > self.bound:
                merged = self._merged()
                self.parts = [merged]
                self.n = merged[0].shape[0]
                g = merged[0]
                ends = np.flatnonzero(np.append(g[1:] != g[:-1], True))
                counts = np.diff(np.append(-1, ends))
                full = counts >= self.k
                floor = np.full(self.n_groups, -np.inf)
                floor[g[ends[full]]] = merged[2][ends[full]]
                self.floor = floor

    def _merged(self):
        return group_best(*(np.concatenate(x) for x in zip(*self.parts)), self.k)

    def full(self):
        """True when, without top-k, the candidates fill the buffer."""
        return self.k is None and self.n >= self.bound

    def take(self):
        """All candidates, grouped and cut to k; the holder is emptied."""
        if not self.parts:
            e = np.empty(0, np.int64)
            return e, e, np.empty(0)
        out = self._merged()
        self.parts, self.n = [], 0
        return out


def chunk_ends(bound, limit, max_rows=None):
    """Row chunk ends so that each chunk's product bound stays within ``limit``
    (a row whose bound alone exceeds it is a chunk of its own), and chunks
    have at most ``max_rows`` rows."""
    n = bound.shape[0]
    cum = np.cumsum(bound)
    ends = []
    start, base = 0, 0.0
    while start < n:
        end = int(np.searchsorted(cum, base + limit, side="right"))
        end = max(end, start + 1)
        if max_rows is not None:
            end = min(end, start + max_rows)
        ends.append(end)
        base = cum[end - 1]
        start = end
    return ends


def _coo(P, r0, c0):
    """(rows, cols, values) of a CSR product, in global indices."""
    r = np.repeat(np.arange(r0, r0 + P.shape[0], dtype=np.int64), np.diff(P.indptr))
    return r, P.indices.astype(np.int64) + c0, P.data


def may_hold_zero_dots(a, b):
    """False when no pair of rows of ``a`` and ``b`` (their weights) that shares
    a feature can have a dot product of exactly 0.0, which scipy's product
    would drop: then the repair (:func:`_with_zero_dots`) is not needed.

    A dot product is exactly 0.0 only when terms cancel (weights of both
    signs) or every term rounds to zero (underflow, or a zero weight).  When
    each side's weights have one sign, the smallest product bounds all: if
    ``min|a| * min|b|`` is not 0.0, no product is (rounding is monotonic), and
    a sum of nonzero terms of one sign is not 0.0 either.  Two O(nnz) passes,
    against a second (structural) product for the repair.

    >>> import numpy as np
    >>> may_hold_zero_dots(np.array([1.0, 2.0]), np.array([0.5]))
    False
    >>> may_hold_zero_dots(np.array([1.0, 1e-200]), np.array([1e-200]))
    True
    >>> may_hold_zero_dots(np.array([1.0, -2.0]), np.array([0.5]))
    True
    >>> may_hold_zero_dots(np.array([1e300]), np.array([1e300]))
    False
    """
    if not a.shape[0] or not b.shape[0]:
        return False
    if a.min() < 0 < a.max() or b.min() < 0 < b.max():
        return True  # a side with weights of both signs: terms can cancel
    # (an overflow to inf is no zero either)
    with np.errstate(under="ignore", over="ignore"):
        return bool(np.abs(a).min() * np.abs(b).min() == 0.0)


def _with_zero_dots(A, Bt, r0, c0, r, c, dots):
    """Add the pairs that share features but whose dot product cancels to 0.0
    (scipy's product drops exact zeros; every pair that shares a feature gets
    a score)."""
    Ab = A.copy()
    Ab.data = np.ones_like(Ab.data)
    Bb = Bt.copy()
    Bb.data = np.ones_like(Bb.data)
    Q = Ab @ Bb
    qr, qc, _ = _coo(Q, r0, c0)
    if qr.shape[0] == r.shape[0]:
        return r, c, dots
    width = np.int64(Bt.shape[1] + c0 + 1)
    have = r * width + c
    order = np.argsort(have)
    want = qr * width + qc
    pos = np.searchsorted(have, want, sorter=order)
    pos = np.minimum(pos, max(have.shape[0] - 1, 0))
    found = (have[order[pos]] == want) if have.shape[0] else np.zeros(want.shape[0], bool)
    out = np.zeros(want.shape[0])
    out[found] = dots[order[pos[found]]]
    return qr, qc, out
