"""The pair product of the blocks strategy, as a pure kernel.

:func:`pair_best` takes two blocks of vectors as CSR matrices over one
feature index and yields each row's best-scored columns and, mirrored, each
column's best rows -- in the spirit of ``sparse_dot_topn.sp_matmul_topn``
and scikit-learn's ``pairwise_distances_chunked``: the product is computed
in row chunks of bounded size, each chunk scored and cut at once, so that
no more than one chunk of products is ever held.  Nothing here knows about
mrjob or the job: ``tests/pairs/test_pairs.py`` checks it with scipy matrices
against a dense numpy oracle.

What happens to a chunk of rows, in order:

1. the sparse product of the chunk with the columns' transpose (the diagonal
   block multiplies only the columns from the chunk's first row on: the
   upper triangle);
2. pairs that share features but whose dot product is exactly 0.0 (terms
   that cancel, or underflow) are put back (scipy drops exact zeros; every
   pair that shares a feature gets a score);
3. on a diagonal block, the pairs below the diagonal (and the diagonal
   itself, unless ``include_self``) are dropped; on two blocks, the pairs
   ``exclude`` names (a query and a corpus vector with its id);
4. the scorer turns dot products into scores and drops what is not finite
   or below the threshold;
5. each row's ``k`` best are selected -- on a dense array of the chunk when
   the chunk is dense enough (``numpy.partition``), else by sorting the
   entries -- and yielded;
6. the mirrored candidates (each column's best rows) are held, cut to each
   column's ``k`` best whenever too many pile up, and yielded at the end
   (or, without ``k``, whenever they fill the buffer).

With the C kernels (``mrjobs/_speedups.c``, :mod:`mrjobs._c`) steps 1-3 are
one pass that visits only the upper triangle of a diagonal block and keeps
the exact zeros (the same dot products, to the bit: the terms are added in
scipy's order), step 5 selects each row's ``k`` best in C, and step 6 keeps
each column's ``k`` best in C (:class:`_Kept`); chunks are smaller
(:data:`C_CHUNK`).  ``tests/pairs/test_pairs.py`` runs every case on both paths.
"""
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from mrjobs import _c
from mrjobs.kernels import top_k_groups

__all__ = ["pair_best", "PairSpec", "PairWork", "ROWS", "COLUMNS", "KERNEL", "KERNEL_REASON",
           "KERNELS", "PRUNE_MODES", "bounds_cost_share"]


#: the C kernels in use (:mod:`mrjobs._c`), or None for the numpy path;
#: KERNEL is "c" or "numpy", KERNEL_REASON says why.  Both paths give the same
#: pairs, dot products (to the bit) and selections.
_C, KERNEL, KERNEL_REASON = _c.C, _c.NAME, _c.REASON

#: the ``kernel`` choices of :class:`PairSpec`
KERNELS = ("auto", "c", "numpy")
#: the ``prune`` choices of :class:`PairSpec`: where the bounds pay (True is
#: "auto"), whenever they can apply (the cost gates skipped), never (False)
PRUNE_MODES = ("auto", "always", "never")


@dataclass(frozen=True)
class PairSpec:
    """How :func:`pair_best` pairs two blocks (one value for all its choices).

    Attributes
    ----------
    k : int, optional
        Each vector's ``k`` best (all without ``k``).
    limit : int
        Products per chunk of rows (a row over it alone is a chunk of its
        own); also the size of the mirror buffer.
    diagonal, include_self : bool
        ``A`` and ``C`` are one block: each unordered pair is scored once (and,
        with ``include_self``, each row with itself).
    mirror : bool
        Also yield each column's best rows (False: rows only).
    prune : {"auto", "always", "never"} or bool
        With a threshold and a measure :mod:`mrjobs.pairs.bounds` can bound,
        skip the (row, column group) products that cannot be kept
        (:class:`mrjobs.pairs.bounds.PairPlan`): "auto" (or True) where the
        bounds' estimated cost pays, "always" whenever they apply, "never"
        (or False).  The results keep the same pairs and scores, though a
        row's best may come in more than one result.
    kernel : {"auto", "c", "numpy"}
        The C kernels (:mod:`mrjobs._c`; "auto": where they are built) or the
        numpy path; both give the same pairs, dot products and selections.
    """

    k: int = None
    limit: int = 1_000_000
    diagonal: bool = False
    include_self: bool = False
    mirror: bool = True
    prune: object = "auto"
    kernel: str = "auto"

    def __post_init__(self):
        if self.prune not in PRUNE_MODES + (True, False):
            raise ValueError("prune: one of %s, True or False, not %r" % (PRUNE_MODES,
                                                                         self.prune))
        if self.kernel not in KERNELS:
            raise ValueError("kernel: one of %s, not %r" % (KERNELS, self.kernel))
        if self.kernel == "c" and _C is None:
            raise ValueError("kernel 'c': the C kernels are not built here (%s)"
                             % KERNEL_REASON)

    @property
    def c(self):
        """The C kernels this spec runs on, or None for the numpy path."""
        return None if self.kernel == "numpy" else _C

    @property
    def prune_mode(self):
        return {True: "auto", False: "never"}.get(self.prune, self.prune)


#: direction of a result: ``groups`` index rows of ``A``, ``others`` rows of ``C``
ROWS = 0
#: direction of a result: ``groups`` index rows of ``C``, ``others`` rows of ``A``
COLUMNS = 1


class PairWork(NamedTuple):
    """What :func:`pair_best` did (its generator's return value).

    ``products``: dot products computed.  The rest is pruning, 0 when no
    :class:`~mrjobs.pairs.bounds.PairPlan` was used: ``rows_pruned`` and
    ``columns_pruned``, vectors of each side whose bounds ruled out every
    group of the other; ``cells_pruned``, (row, column group) products
    skipped; ``pair_pruned``, 1 if the bounds ruled out the whole block pair.
    """

    products: int
    rows_pruned: int = 0
    columns_pruned: int = 0
    cells_pruned: int = 0
    pair_pruned: int = 0


def pair_best(A, C, scorer, spec=PairSpec(), *, stats_a=None, stats_c=None, exclude=None):
    """Best-scored pairs of the rows of two CSR blocks, in both directions.

    Parameters
    ----------
    A, C : scipy.sparse.csr_matrix
        The two blocks over the same feature columns, indices sorted in each
        row, rows in id order (ties go to the smaller index); ``C is A`` on
        a diagonal block.
    scorer : mrjobs.scoring.Scorer
        ``score(dots, stats_a, stats_b)`` and ``keep(scores)`` (mask or None).
    spec : PairSpec
        ``k``, the chunk ``limit``, ``diagonal``, ``include_self``,
        ``mirror``, ``prune`` and ``kernel`` (see :class:`PairSpec`).
    stats_a, stats_c, exclude : numpy.ndarray, optional
        Per-row statistics of the measure; pairs left out, as ``row *
        len(C) + col`` (two blocks only).

    Yields
    ------
    (direction, groups, others, scores)
        :data:`ROWS` or :data:`COLUMNS`, then entries grouped by group; with
        ``k``, each group's ``k`` best (score descending, ties by smaller
        other), in no set order within the group.  A group comes in one
        result, except a column's without ``k``: in several.

    Returns
    -------
    PairWork
        The products computed and what pruning skipped (the generator's
        return value).
    """
    n_c, k = C.shape[0], spec.k
    # with k: cut the mirrored candidates to k a column once 2k a column pile up
    held = _Held(k, spec.limit if k is None else 2 * k * n_c, n_c)
    exact_zeros = _may_hold_zero_dots(A.data, C.data)
    plan = _plan(A, C, scorer, spec, exclude, (stats_a, stats_c), exact_zeros)
    if plan is not None:
        products = yield from _pruned_best(plan, scorer, spec, held, (stats_a, stats_c))
        return PairWork(products, plan.rows_pruned, plan.cols_pruned, plan.cells_pruned,
                        int(plan.pair_pruned))
    full = _full_best if spec.c is None else _full_best_c
    return PairWork((yield from full(A, C, scorer, spec, held, (stats_a, stats_c), exclude,
                                     exact_zeros)))


def _full_best(A, C, scorer, spec, held, stats, exclude, exact_zeros):
    """:func:`pair_best` without pruning: every product, chunk by chunk."""
    n_c, k, limit, diagonal = C.shape[0], spec.k, spec.limit, spec.diagonal
    Bt = None if diagonal else C.T.tocsr()
    # with k, chunks narrow enough for a dense array of <= 4 * limit cells
    max_rows = max(1, 4 * limit // max(n_c, 1)) if k is not None else None
    products = start = 0
    for end in _chunk_ends(_product_bounds(A, C), limit, max_rows):
        if diagonal:
            Bt = C[start:].T.tocsr()
        c0 = start if diagonal else 0
        r, c, dots = _chunk_dots(A[start:end], Bt, start, c0, exact_zeros)
        if diagonal:
            r, c, dots = _upper(r, c, dots, spec.include_self)
        products += dots.shape[0]
        r, c, scores = _chunk_scores(r, c, dots, scorer, stats, exclude, n_c)
        yield from _chunk_best(r, c, scores, spec, (start, end, c0, n_c), held)
        if held.full():
            yield (COLUMNS,) + held.take()
        start = end
    yield (COLUMNS,) + held.take()
    return products


#: products a chunk of the C path at most (a row over it alone is a chunk of its
#: own): chunks whose arrays stay in the processor's caches (on a dense 20,000
#: vector block, 131,072 products a chunk took 3.0 s, 10**6 4.5 s)
C_CHUNK = 131072


def _full_best_c(A, C, scorer, spec, held, stats, exclude, exact_zeros):
    """:func:`_full_best` on the C kernels: each chunk's products (the upper
    triangle only, on a diagonal block; pairs whose dot product is exactly
    0.0 included), scored in numpy, each row's ``k`` best selected in C and
    each column's ``k`` best kept across the chunks (:class:`_Kept`)."""
    n_c, k, diagonal, kernels = C.shape[0], spec.k, spec.diagonal, spec.c
    a = _csr_arrays(A)
    Bt = C.T.tocsr()
    Bt.sort_indices()
    b = _csr_arrays(Bt)
    mode = (2 if spec.include_self else 1) if diagonal else 0
    kept = _Kept(kernels, n_c, min(k, A.shape[0])) if k is not None and spec.mirror else None
    bound = _product_bounds(A, C)
    ends = _chunk_ends(bound, min(spec.limit, C_CHUNK))
    caps = np.add.reduceat(bound, np.array([0] + ends[:-1], np.intp)) if ends else np.zeros(0)
    # one set of product buffers for every chunk (fresh pages for each chunk
    # cost as much as the product on small chunks); what leaves this function
    # is always a copy: fancy-indexed, selected or scored into new arrays
    cap = int(caps.max()) if caps.shape[0] else 0
    out = np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap)
    best = (np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap)) if k else None
    products = start = 0
    for end in ends:
        n = kernels.dots(*a, *b, n_c, start, end, mode, *out)
        if n < 0:
            raise AssertionError("a chunk's products exceed their bound")
        products += n
        r, c, scores = _chunk_scores(out[0][:n], out[1][:n], out[2][:n], scorer, stats,
                                     exclude, n_c)
        if k is None:
            yield from _sparse_best(r, c, scores, None, held, spec.mirror, diagonal)
            if held.full():
                yield (COLUMNS,) + held.take()
        elif r.shape[0]:
            scores = np.ascontiguousarray(scores, dtype=np.float64)
            # (a k beyond the entries keeps them all, and fits a C size)
            m = kernels.top_k_rows(r, c, scores, min(k, r.shape[0]), *best)
            yield (ROWS,) + tuple(x[:m].copy() for x in best)
            if kept is not None:
                kept.offer(c, r, scores, diagonal)
        start = end
    yield (COLUMNS,) + (held.take() if kept is None else kept.take())
    return products


def _csr_arrays(M):
    """(indptr as int64, indices as int32, data as float64) of a CSR matrix,
    contiguous, for the C kernels."""
    return (np.ascontiguousarray(M.indptr, dtype=np.int64),
            np.ascontiguousarray(M.indices, dtype=np.int32),
            np.ascontiguousarray(M.data, dtype=np.float64))


class _Kept:
    """Each column's ``k`` best (row, score) so far, in C: a buffer of
    ``cap`` slots a column (16 bytes a slot) that is cut to its ``k`` best
    whenever it fills, raising the column's floor (the worst of them)."""

    def __init__(self, kernels, n, k):
        self.c, self.k = kernels, k
        self.cap = k + max(k // 2, 8)
        self.scores = np.empty(n * self.cap)
        self.others = np.empty(n * self.cap, np.int64)
        self.sizes = np.zeros(n, np.int64)
        self.floor = np.full(n, -np.inf)

    def offer(self, groups, others, scores, skip_self):
        self.c.kept_offer(groups, others, scores, skip_self, self.k, self.cap, self.scores,
                          self.others, self.sizes, self.floor)

    def take(self):
        """(groups, others, scores): every column's ``k`` best, grouped (in no
        set order within a column); the buffers are emptied."""
        n = int(np.minimum(self.sizes, self.k).sum())
        out = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n)
        m = self.c.kept_take(self.k, self.scores, self.others, self.sizes, *out)
        self.floor[:] = -np.inf
        return tuple(x[:m] for x in out)


#: the pruned path is taken when the row entries it multiplies (each row once per
#: live cell) are at most this fraction of the full product's bound: it costs
#: ~2.5x more per entry than the full product per product, plus the bounds
#: (measured on text: 20,000 paragraphs of ~23 terms, 4.5% of cells live at
#: threshold 0.5, 3.2x faster; 20,000 documents of ~190 terms, 31% live at
#: 0.8, 2.8x slower -- long rows make each live cell dear)
LIVE_SHARE_MAX = 0.1
#: the bounds are computed only when their estimated cost is at most this
#: fraction of the full product's; per multiply-add, the bounds cost ~25 ns,
#: the full product ~2.5 ns and ~32 ns per pair it yields (fitted on the two
#: text corpora above: the documents' bounds cost half their product)
PLAN_SHARE_MAX = 0.25
PLAN_NS, PRODUCT_NS, PAIR_NS = 25.0, 2.5, 32.0
#: the full product's costs on the C kernels (fitted the same way, on blocks
#: of 2,000 and 5,000 of the text corpora: ~1.0 ns a multiply-add and ~4.5 ns
#: a pair, scored and selected), and the share of them the bounds may cost
#: there, PLAN_SHARE_C x PLAN_SHARE_MAX (1.25).  Measured by ``python -m
#: bench.prune``, one block pair, cosine, --threshold 0.5 (the bounds'
#: estimated cost / the full product's): 10,000 x 10,000 tf-idf vectors of ~20
#: features (1.12): pruned 0.15 s, full 0.73 s; 5,000 x 5,000 paragraphs of
#: ~17 terms (1.80): 0.29 s against 0.09 s; whole documents (2.77): 8.3 s
#: against 1.1 s.  A PLAN_NS that is too high where the bounds are tight keeps
#: the margin narrow.
PRODUCT_NS_C, PAIR_NS_C, PLAN_SHARE_C = 1.0, 4.5, 5.0
#: rows per group of the bounds (the plan's groups, and the cost estimate's)
GROUP_ROWS = 64


def _planning_pays(A, C, diagonal, mirror, kernel="auto"):
    """True if computing the bounds (a product of each side with the other's
    per-group maxima) costs little beside the full product (estimated from
    the two sides' feature counts alone)."""
    c = PairSpec(kernel=kernel).c
    limit = PLAN_SHARE_MAX * (1.0 if c is None else PLAN_SHARE_C)
    return bounds_cost_share(A, C, diagonal, mirror, kernel) <= limit


def bounds_cost_share(A, C, diagonal=False, mirror=True, kernel="auto"):
    """The bounds' estimated cost over the full product's, on the ``kernel``
    (see :class:`PairSpec`), from the two sides' feature counts alone."""
    df_a = np.bincount(A.indices, minlength=A.shape[1]).astype(np.float64)
    df_c = df_a if diagonal else np.bincount(C.indices, minlength=C.shape[1]).astype(np.float64)
    plan = 0.0
    for rows, df_rows, df_cols, n in ((A, df_a, df_c, C.shape[0]), (C, df_c, df_a, A.shape[0])):
        # groups (of rows in id order: at random) that hold a feature held df times
        g = -(-n // GROUP_ROWS)
        plan += _dot(df_rows, g * -np.expm1(-df_cols / g))
        if diagonal or not mirror:
            break
    flops = _dot(df_a, df_c)
    pairs = min(float(A.shape[0]) * C.shape[0], flops)
    if PairSpec(kernel=kernel).c is None:
        full = PRODUCT_NS * flops + PAIR_NS * pairs
    else:
        full = PRODUCT_NS_C * flops + PAIR_NS_C * pairs
    if full == 0.0:
        return 0.0 if plan == 0.0 else float("inf")
    return PLAN_NS * plan / full


def _dot(x, y):
    """The dot product of two vectors, in numpy's own loops: ``x @ y`` would
    call BLAS, whose threads then spin, waiting for more work, on the cores
    the other tasks need (OpenBLAS: twice a small pair's CPU time)."""
    return float(np.multiply(x, y, dtype=np.float64).sum())


def _plan(A, C, scorer, spec, exclude, stats, zeros):
    """A :class:`~mrjobs.pairs.bounds.PairPlan` where pruning pays, else None.

    Only with a threshold: with top-k alone, a first pass over one group
    gives floors too low to skip much (on text, ~8% of the products) and the
    pruned path lost to the full product.  A plan whose live cells would
    multiply more row entries than :data:`LIVE_SHARE_MAX` of the full
    product's bound is dropped (``spec.prune`` "always": neither gate)."""
    mode = spec.prune_mode
    if mode == "never" or exclude is not None or scorer.threshold is None:
        return None
    # here, not at the top: mrjobs.pairs.bounds needs scipy, which a stripes task
    # (or the vectors and rows steps) must not need
    from mrjobs.pairs import bounds as _prune
    if not _prune.supports(scorer.measure):
        return None
    if mode == "auto" and not _planning_pays(A, C, spec.diagonal, spec.mirror, spec.kernel):
        return None
    plan = _prune.PairPlan(A, C, _plan_scorer(scorer, *stats), _prune.PruneSpec(
        scorer.measure, scorer.threshold, spec.k, stats[0], stats[1], spec.diagonal,
        spec.include_self, spec.mirror, GROUP_ROWS, exact_zeros=zeros))
    spread = _dot(plan.live_r.sum(axis=1), np.diff(A.indptr))
    if mode == "auto" and spread > LIVE_SHARE_MAX * float(_product_bounds(A, C).sum()):
        return None
    return plan


def _plan_scorer(scorer, stats_a, stats_c):
    """Scores for the plan's first pass: ``-inf`` where the job would not keep
    a score (so that a top-k floor only counts scores that are kept)."""
    def score(dots, r, c):
        scores = scorer.score(dots, None if stats_a is None else stats_a[r],
                              None if stats_c is None else stats_c[c])
        keep = scorer.keep(scores)
        return scores if keep is None else np.where(keep, scores, -np.inf)
    return score


def _pruned_best(plan, scorer, spec, held, stats):
    """:func:`pair_best` over the pairs a :class:`~mrjobs.pairs.bounds.PairPlan`
    leaves: its first pass, then its live cells in row chunks."""
    order = plan.row_order()
    sizes = np.diff(plan.cols.edges).astype(np.float64)
    bound = (plan.live_r[order] * sizes).sum(axis=1)
    if plan.first is not None:
        chunks = [plan.first]
    else:
        chunks = []
    start = 0
    for end in _chunk_ends(bound, spec.limit):
        chunks.append(order[start:end])
        start = end
    n_c = plan.C.shape[0]
    for chunk in chunks:
        r, c, dots = chunk if isinstance(chunk, tuple) else plan.pairs(chunk)
        if spec.diagonal:
            r, c, dots = _upper(r, c, dots, plan.include_self)
        r, c, scores = _chunk_scores(r, c, dots, scorer, stats, None, n_c)
        yield from _sparse_best(r, c, scores, spec.k, held, spec.mirror, spec.diagonal)
        if held.full():
            yield (COLUMNS,) + held.take()
    yield (COLUMNS,) + held.take()
    return plan.products


def _product_bounds(A, C):
    """Upper bound on each row's products: the sum of its features' df among
    the rows of ``C`` (at most ``C``'s row count)."""
    n_c = C.shape[0]
    df_c = np.bincount(C.indices, minlength=A.shape[1])
    return np.minimum(np.bincount(np.repeat(np.arange(A.shape[0]), np.diff(A.indptr)),
                                  weights=df_c[A.indices], minlength=A.shape[0]), n_c)


def _chunk_dots(A_chunk, Bt, r0, c0, exact_zeros):
    """(rows, cols, dot products) of one chunk, in global indices."""
    P = A_chunk @ Bt
    r, c, dots = _coo(P, r0, c0)
    if exact_zeros:
        r, c, dots = _with_zero_dots(A_chunk, Bt, r0, c0, r, c, dots)
    return r, c, dots


def _upper(r, c, dots, include_self):
    """The entries of a diagonal block's upper triangle (with the diagonal
    under ``include_self``)."""
    keep = c >= r if include_self else c > r
    return r[keep], c[keep], dots[keep]


def _chunk_scores(r, c, dots, scorer, stats, exclude, n_c):
    """The kept (rows, cols, scores) of a chunk's dot products (of the upper
    triangle, on a diagonal block)."""
    stats_a, stats_c = stats
    if exclude is not None:
        keep = ~np.isin(r * n_c + c, exclude)
        r, c, dots = r[keep], c[keep], dots[keep]
    scores = scorer.score(dots, None if stats_a is None else stats_a[r],
                          None if stats_c is None else stats_c[c])
    keep = scorer.keep(scores)
    if keep is not None:
        r, c, scores = r[keep], c[keep], scores[keep]
    return r, c, scores


def _chunk_best(r, c, scores, spec, span, held):
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
    yield from _sparse_best(r, c, scores, k, held, mirror, diagonal)


def _sparse_best(r, c, scores, k, held, mirror, diagonal):
    """Yield the rows' best of scored entries; hold the columns' candidates
    (those at or above a column's current floor; not a row with itself)."""
    yield (ROWS,) + _best(r, c, scores, k)
    if mirror:
        other = c != r if diagonal else np.ones(c.shape[0], bool)
        if held.floor is not None:
            other &= scores >= held.floor[c]
        held.add(c[other], r[other], scores[other])


def _best(groups, others, scores, k):
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
    candidates unordered (for :class:`_Held`)."""
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
    return _best(g, o, scores, k)


class _Held:
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
        return _best(*(np.concatenate(x) for x in zip(*self.parts)), self.k)

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


def _chunk_ends(bound, limit, max_rows=None):
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


def _may_hold_zero_dots(a, b):
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
    >>> _may_hold_zero_dots(np.array([1.0, 2.0]), np.array([0.5]))
    False
    >>> _may_hold_zero_dots(np.array([1.0, 1e-200]), np.array([1e-200]))
    True
    >>> _may_hold_zero_dots(np.array([1.0, -2.0]), np.array([0.5]))
    True
    >>> _may_hold_zero_dots(np.array([1e300]), np.array([1e300]))
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
