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
   itself, unless ``include_self``) are dropped;
4. the scorer turns dot products into scores and drops what is not finite
   or below the threshold;
5. each row's ``k`` best are selected -- on a dense array of the chunk when
   the chunk is dense enough (``numpy.partition``), else by sorting the
   entries -- and yielded;
6. the mirrored candidates (each column's best rows) are held, cut to each
   column's ``k`` best whenever too many pile up, and yielded at the end
   (or, without ``k``, whenever they fill the buffer).

With the C kernels (``mrjobs/csrc/``, :mod:`mrjobs._c`) steps 1-3 are
one pass that visits only the upper triangle of a diagonal block and keeps
the exact zeros (the same dot products, to the bit: the terms are added in
scipy's order), step 5 selects each row's ``k`` best in C, and step 6 keeps
each column's ``k`` best in C (:class:`_Kept`); chunks are smaller
(:data:`C_CHUNK`).  ``tests/pairs/test_pairs.py`` runs every case on both paths.

The work on one chunk (steps 1-6 on the numpy path) is in :mod:`mrjobs.pairs.chunks`;
this module chooses the path (full product, C kernels, or pruned) and runs it.
"""
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from mrjobs import _c
from mrjobs.pairs.chunks import (COLUMNS, ROWS, Held, chunk_best, chunk_dots, chunk_ends,
                                 chunk_scores, may_hold_zero_dots, product_bounds,
                                 row_products, sparse_best, upper)
from mrjobs.pairs.fused import C_CHUNK, fused_best, merged
from mrjobs.pairs.fused import Kept as _Kept, csr_arrays as _csr_arrays

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
        With a threshold and a measure :mod:`mrjobs.pairs.pruning` can bound,
        skip the (row, column group) products that cannot be kept
        (:class:`mrjobs.pairs.pruning.PairPlan`): "auto" (or True) where the
        bounds' estimated cost pays, "always" whenever they apply, "never"
        (or False).  The results keep the same pairs and scores, though a
        row's best may come in more than one result.
    kernel : {"auto", "c", "numpy"}
        The C kernels (:mod:`mrjobs._c`; "auto": where they are built) or the
        numpy path; both give the same pairs, dot products and selections.
    merge : bool
        With ``k``, on a diagonal block with ``mirror``: each vector's ``k``
        best over the whole block in one :data:`ROWS` result (its best among
        the rows below it and among those above it, merged), and no
        :data:`COLUMNS`; half the partial rows a vector gets from the block.
    threads : int
        Threads the C path may run chunks of rows on where it can (``merge``
        on a diagonal block: with a small ``k``, the upper triangle with a
        column buffer a thread; else, without ``include_self``, each row
        against every column, twice the products on as many cores;
        :func:`mrjobs.pairs.fused.fused_best`), and the pruning plan its
        bounds; the same results and counts.
    """

    k: int = None
    limit: int = 1_000_000
    diagonal: bool = False
    include_self: bool = False
    mirror: bool = True
    prune: object = "auto"
    kernel: str = "auto"
    merge: bool = False
    threads: int = 1

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
    def merged(self):
        """True when a diagonal block's two directions come merged (``merge``)."""
        return self.merge and self.diagonal and self.mirror and self.k is not None

    @property
    def prune_mode(self):
        return {True: "auto", False: "never"}.get(self.prune, self.prune)


class PairWork(NamedTuple):
    """What :func:`pair_best` did (its generator's return value).

    ``products``: dot products computed.  The rest is pruning, 0 when no
    :class:`~mrjobs.pairs.pruning.PairPlan` was used: ``rows_pruned`` and
    ``columns_pruned``, vectors of each side whose bounds ruled out every
    group of the other; ``cells_pruned``, (row, column group) products
    skipped; ``pair_pruned``, 1 if the bounds ruled out the whole block pair.
    """

    products: int
    rows_pruned: int = 0
    columns_pruned: int = 0
    cells_pruned: int = 0
    pair_pruned: int = 0


def pair_best(A, C, scorer, spec=PairSpec(), *, stats_a=None, stats_c=None, progress=None):
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
    stats_a, stats_c : numpy.ndarray, optional
        Per-row statistics of the measure.
    progress : callable, optional
        ``progress(done, planned)``: the pair product's multiply-adds
        (:func:`~mrjobs.pairs.chunks.row_products`) done so far and in all,
        told before the first chunk, after each (those of the chunk's rows,
        multiplied or pruned) and at the end (``done == planned``).

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
    held = Held(k, spec.limit if k is None else 2 * k * n_c, n_c)
    exact_zeros = may_hold_zero_dots(A.data, C.data)
    tell = _Tell(progress, A, C, spec)
    plan = _plan(A, C, scorer, spec, (stats_a, stats_c), exact_zeros)
    if plan is not None:
        results = _pruned_best(plan, scorer, spec, held, (stats_a, stats_c), tell)
        products = yield from (merged(results, k) if spec.merged else results)
        tell.end()
        return PairWork(products, plan.rows_pruned, plan.cols_pruned, plan.cells_pruned,
                        int(plan.pair_pruned))
    if spec.c is not None and k is not None and scorer.fused():
        work = PairWork((yield from fused_best(A, C, scorer, spec, tell)))
    else:
        full = _full_best if spec.c is None else _full_best_c
        results = full(A, C, (scorer, (stats_a, stats_c)), spec, held, exact_zeros,
                       tell)
        work = PairWork((yield from (merged(results, k) if spec.merged else results)))
    tell.end()
    return work


class _Tell:
    """The ``progress`` of :func:`pair_best`: each chunk's rows' multiply-adds
    added up and told (nothing without ``progress``)."""

    def __init__(self, progress, A, C, spec):
        self.progress = progress
        if progress is not None:
            work = row_products(A, C, spec.diagonal, spec.include_self)
            self.planned = int(work.sum())
            self.done = 0
            self.cum = np.concatenate(([0], np.cumsum(work)))
            self.work = work
            progress(0, self.planned)

    def upto(self, end):
        """The rows before ``end`` are done."""
        if self.progress is not None:
            self.done = int(self.cum[end])
            self.progress(self.done, self.planned)

    def rows(self, rows):
        """The rows ``rows`` are done (too)."""
        if self.progress is not None:
            self.done += int(self.work[rows].sum())
            self.progress(self.done, self.planned)

    def end(self):
        if self.progress is not None and self.done != self.planned:
            self.done = self.planned
            self.progress(self.done, self.planned)


def _full_best(A, C, scoring, spec, held, exact_zeros, tell):
    """:func:`pair_best` without pruning: every product, chunk by chunk
    (``scoring``: the scorer and the two sides' stats)."""
    n_c, k, limit, diagonal = C.shape[0], spec.k, spec.limit, spec.diagonal
    Bt = None if diagonal else C.T.tocsr()
    # with k, chunks narrow enough for a dense array of <= 4 * limit cells
    max_rows = max(1, 4 * limit // max(n_c, 1)) if k is not None else None
    products = start = 0
    for end in chunk_ends(product_bounds(A, C), limit, max_rows):
        if diagonal:
            Bt = C[start:].T.tocsr()
        c0 = start if diagonal else 0
        r, c, dots = chunk_dots(A[start:end], Bt, start, c0, exact_zeros)
        if diagonal:
            r, c, dots = upper(r, c, dots, spec.include_self)
        products += dots.shape[0]
        r, c, scores = chunk_scores(r, c, dots, *scoring)
        yield from chunk_best(r, c, scores, spec, (start, end, c0, n_c), held)
        if held.full():
            yield (COLUMNS,) + held.take()
        tell.upto(end)
        start = end
    yield (COLUMNS,) + held.take()
    return products


def _full_best_c(A, C, scoring, spec, held, exact_zeros, tell):
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
    bound = product_bounds(A, C)
    ends = chunk_ends(bound, min(spec.limit, C_CHUNK))
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
        r, c, scores = chunk_scores(out[0][:n], out[1][:n], out[2][:n], *scoring)
        if k is None:
            yield from sparse_best(r, c, scores, None, held, spec.mirror, diagonal)
            if held.full():
                yield (COLUMNS,) + held.take()
        elif r.shape[0]:
            scores = np.ascontiguousarray(scores, dtype=np.float64)
            # (a k beyond the entries keeps them all, and fits a C size)
            m = kernels.top_k_rows(r, c, scores, min(k, r.shape[0]), *best)
            yield (ROWS,) + tuple(x[:m].copy() for x in best)
            if kept is not None:
                kept.offer(c, r, scores, diagonal)
        tell.upto(end)
        start = end
    yield (COLUMNS,) + (held.take() if kept is None else kept.take())
    return products


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


def _plan(A, C, scorer, spec, stats, zeros):
    """A :class:`~mrjobs.pairs.pruning.PairPlan` where pruning pays, else None.

    Only with a threshold: with top-k alone, a first pass over one group
    gives floors too low to skip much (on text, ~8% of the products) and the
    pruned path lost to the full product.  A plan whose live cells would
    multiply more row entries than :data:`LIVE_SHARE_MAX` of the full
    product's bound is dropped (``spec.prune`` "always": neither gate)."""
    mode = spec.prune_mode
    if mode == "never" or scorer.threshold is None:
        return None
    # here, not at the top: mrjobs.pairs.pruning needs scipy, which a stripes task
    # (or the vectors and rows steps) must not need
    from mrjobs.pairs import pruning as _prune
    if not _prune.supports(scorer.measure):
        return None
    if mode == "auto" and not _planning_pays(A, C, spec.diagonal, spec.mirror, spec.kernel):
        return None
    plan = _prune.PairPlan(A, C, _plan_scorer(scorer, *stats), _prune.PruneSpec(
        scorer.measure, scorer.threshold, spec.k, stats[0], stats[1], spec.diagonal,
        spec.include_self, spec.mirror, GROUP_ROWS, exact_zeros=zeros,
        threads=spec.threads))
    spread = _dot(plan.live_r.sum(axis=1), np.diff(A.indptr))
    if mode == "auto" and spread > LIVE_SHARE_MAX * float(product_bounds(A, C).sum()):
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


def _pruned_best(plan, scorer, spec, held, stats, tell):
    """:func:`pair_best` over the pairs a :class:`~mrjobs.pairs.pruning.PairPlan`
    leaves: its first pass, then its live cells in row chunks."""
    order = plan.row_order()
    sizes = np.diff(plan.cols.edges).astype(np.float64)
    bound = (plan.live_r[order] * sizes).sum(axis=1)
    if plan.first is not None:
        chunks = [plan.first]
    else:
        chunks = []
    start = 0
    for end in chunk_ends(bound, spec.limit):
        chunks.append(order[start:end])
        start = end
    for chunk in chunks:
        r, c, dots = chunk if isinstance(chunk, tuple) else plan.pairs(chunk)
        if spec.diagonal:
            r, c, dots = upper(r, c, dots, plan.include_self)
        r, c, scores = chunk_scores(r, c, dots, scorer, stats)
        yield from sparse_best(r, c, scores, spec.k, held, spec.mirror, spec.diagonal)
        if held.full():
            yield (COLUMNS,) + held.take()
        if not isinstance(chunk, tuple):  # (the first pass: its rows come again)
            tell.rows(chunk)
    yield (COLUMNS,) + held.take()
    return plan.products
