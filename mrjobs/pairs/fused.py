"""The C path of the pair kernel with ``k`` (:func:`mrjobs.pairs.kernel.pair_best`):
the products of a block pair summed, scored and selected in one C pass
(``pair_topk`` of ``mrjobs/csrc/topk.c``), each column's best kept across the
chunks (:class:`Kept`) -- or, on threads, a diagonal block's upper triangle
with a column buffer a thread (:func:`_triangle`, a small ``k``) or its
whole rows with no column kept (:func:`_whole_rows`) -- and the merge of a
diagonal block's two directions into one result a vector (:func:`merged`,
for the other paths)."""
import itertools

import numpy as np

from mrjobs.pairs.chunks import (COLUMNS, ROWS, chunk_ends, group_best, may_hold_zero_dots,
                                 product_bounds)

__all__ = ["C_CHUNK", "TRIANGLE_MAX_K", "Kept", "csr_arrays", "fused_best", "merged",
           "triangle_pays"]

#: products a chunk of the C path that writes them out (``dots()``) at most (a
#: row over it alone is a chunk of its own): chunks whose arrays stay in the
#: processor's caches (on a dense 20,000 vector block, 131,072 products a chunk
#: took 3.0 s, 10**6 4.5 s)
C_CHUNK = 131072
#: candidate pairs a chunk of ``pair_topk`` at most: a few tenths of a second of
#: work (~11 ns a pair on a dense block), a progress report each (chunks of 50
#: rows of a 20,000-vector block, as --buffer-entries products gave, spent 15% of
#: the block's time checking and setting up)
FUSED_PAIRS = 1 << 25


def fused_best(A, C, scorer, spec, tell):
    """:func:`~mrjobs.pairs.kernel.pair_best` with ``k`` on the C kernels,
    for the measures the C kernel scores itself (:meth:`mrjobs.scoring.Scorer.fused`:
    dot, cosine, pearson): each chunk's products summed, scored, checked and
    selected in one pass (``pair_topk``), no pair written out; each column's
    ``k`` best kept across chunks as :class:`Kept` keeps them (with
    ``spec.merged``, a row takes its column buffer in: one result a vector).
    The same pairs, scores and selections as the other C path."""
    n_c, k, diagonal, kernels = C.shape[0], spec.k, spec.diagonal, spec.c
    kind, threshold, limit = scorer.fused()
    a = csr_arrays(A)
    Bt = C.T.tocsr()
    Bt.sort_indices()
    b = csr_arrays(Bt)
    # pair_topk holds no products, only each row's best: chunks of at most
    # --buffer-entries results (k a row) and FUSED_PAIRS pairs (progress), each
    # paying the setup -- the features' columns checked, the heavy features as
    # dense rows -- once
    max_rows = max(1, spec.limit // max(1, min(k, n_c)))
    bound = product_bounds(A, C)
    ends = chunk_ends(bound, FUSED_PAIRS, max_rows=max_rows)
    zero_free = _zero_free(a[2], b[2])  # found once for every chunk's call

    def pair_topk(**chunk):
        """``pair_topk`` on the block, with the chunk's options."""
        return kernels.pair_topk(a=a, bt=b, n_c=n_c, k=k, kind=kind, threshold=threshold,
                                 limit=limit, zero_free=zero_free, **chunk)

    if spec.threads > 1 and spec.merged and triangle_pays(n_c, k, spec.threads):
        mode = 2 if spec.include_self else 1
        seeds = np.full(n_c, -np.inf)  # each row's k-th best, shared by the threads
        return (yield from _triangle(
            lambda start, end, kept, counts: pair_topk(
                start=start, end=end, mode=mode, counts=counts, kept=kept.buffers,
                seeds=seeds), _balanced(bound, ends, spec.threads, max_rows),
            lambda: Kept(kernels, n_c, min(k, A.shape[0])), spec.threads, k, scorer, tell))
    if spec.threads > 1 and spec.merged and not spec.include_self:
        return (yield from _whole_rows(
            lambda start, end, counts: pair_topk(start=start, end=end, mode=3, counts=counts),
            ends, spec.threads, scorer, tell))
    mode = (2 if spec.include_self else 1) if diagonal else 0
    kept = Kept(kernels, n_c, min(k, A.shape[0])) if spec.mirror else None
    merge = spec.merged
    counts = np.zeros(4, np.int64)
    products = start = 0
    for end in ends:
        counts[:] = 0
        # (the outputs: as many entries as the rows keep, at most k a row)
        g, o, s = pair_topk(start=start, end=end, mode=mode, counts=counts,
                            kept=None if kept is None else kept.buffers, merge=merge)
        scorer.count_fused(*counts[:3].tolist())
        products += int(counts[3])
        if g:
            yield (ROWS, np.frombuffer(g, np.int64), np.frombuffer(o, np.int64),
                   np.frombuffer(s, np.float64))
        tell.upto(end)
        start = end
    if kept is not None and not merge:
        yield (COLUMNS,) + kept.take()
    return products


def _zero_free(a_data, b_data):
    """``pair_topk``'s ``zero_free``: 1 where no pair's sum can be 0.0 and
    every weight is finite (:func:`~mrjobs.pairs.chunks.may_hold_zero_dots`):
    a sum not 0.0 is then a pair that shares a feature, and the kernel keeps
    no hit bytes."""
    return int(not may_hold_zero_dots(a_data, b_data) and bool(np.isfinite(a_data).all())
               and bool(np.isfinite(b_data).all()))


#: the largest ``k`` for which :func:`_triangle` (each pair once, offered to
#: its column's buffer too) beats :func:`_whole_rows` (each pair from both of
#: its rows, no buffer): the offers grow with ``k``.  One dense block of
#: 20,000 Zipf vectors (~57 entries), cosine, 2 threads, wall: top-10 0.90 /
#: 1.19 s, top-30 1.29 / 1.36 s, top-100 2.11 / 1.57 s; with the triangle
#: taken bottom-up (its seeds), the whole job: top-50 2.02-2.26 / 2.11-2.25 s,
#: top-100 2.16-2.37 / 2.10-2.12 s (the triangle's rows all come at its end, its
#: lines then written on one thread, where whole rows write theirs as they go)
TRIANGLE_MAX_K = 20
#: the column buffers (:class:`Kept`) the threads of :func:`_triangle` may
#: hold in all, in bytes
TRIANGLE_KEPT_BYTES = 256 << 20


def triangle_pays(n_c, k, threads):
    """Whether a diagonal block of ``n_c`` vectors runs :func:`_triangle`
    on ``threads`` threads with ``k`` (:data:`TRIANGLE_MAX_K`), its column
    buffers within :data:`TRIANGLE_KEPT_BYTES`."""
    return (threads > 1 and k <= TRIANGLE_MAX_K
            and threads * n_c * Kept.slots(k) * 16 <= TRIANGLE_KEPT_BYTES)


def _balanced(bound, ends, threads, max_rows):
    """Row chunk ends for :func:`_triangle`: ``ends``, cut further so that
    there are at least four chunks a thread of about the same share of the
    upper triangle (row ``r`` meets the columns after it: its products'
    ``bound`` scaled by the share of the columns left), so that no thread is
    left with the last long chunk while the others wait."""
    n = bound.shape[0]
    bound = bound * (n - np.arange(n)) / max(n, 1)
    total = float(bound.sum())
    if not total:
        return ends
    finer = chunk_ends(bound, max(1.0, total / (4 * threads)), max_rows=max_rows)
    return sorted(set(ends) | set(finer))


def _triangle(rows, ends, new_kept, threads, k, scorer, tell):
    """:func:`fused_best` of a diagonal block with ``spec.merged``, on
    ``threads`` threads, each pair scored once: ``rows(start, end, kept,
    counts)`` runs ``pair_topk``'s upper triangle on the rows ``[start,
    end)``, each column's best offered to ``kept``, the column buffer
    (:class:`Kept`, made by ``new_kept``) of the thread that runs it.  The
    chunks go bottom-up, the last first (``pair_topk`` takes each chunk's
    rows last to first with its seeds: a column's offers must reach its own
    row's k-th best, found before them).  A
    vector's best are then spread over its own chunk's result and every
    thread's buffer; all are held and offered at the end to one thread's
    buffers (each vector's ``k`` best, ties to the smaller other, as each
    part kept them): one :data:`ROWS` in all, as :func:`merged` gives, with
    the same rows, scores and counts as one thread."""
    import threading
    from concurrent.futures import ThreadPoolExecutor, as_completed

    local, kepts = threading.local(), []

    def run(start, end):
        kept = getattr(local, "kept", None)
        if kept is None:
            kept = local.kept = new_kept()
            kepts.append(kept)
        counts = np.zeros(4, np.int64)
        return rows(start, end, kept, counts), counts

    parts, total = [], np.zeros(4, np.int64)
    pool = ThreadPoolExecutor(threads)
    try:
        # bottom-up: the last rows first, each chunk's rows last to first
        # (pair_topk's seeds: a column's floor from its own row's k best)
        jobs = {pool.submit(run, start, end): (start, end)
                for start, end in reversed(list(zip([0] + ends[:-1], ends)))}
        for job in as_completed(jobs):
            (g, o, s), counts = job.result()
            total += counts
            parts.append((np.frombuffer(g, np.int64), np.frombuffer(o, np.int64),
                          np.frombuffer(s, np.float64)))
            tell.rows(slice(*jobs[job]))
    finally:
        pool.shutdown(cancel_futures=True)
    scorer.count_fused(*total[:3].tolist())
    if kepts:  # every part offered to one thread's buffers, as the C kernel keeps them
        into = kepts[0]
        for part in parts + [kept.take() for kept in kepts[1:]]:
            into.offer(*part, False)
        g, o, s = into.take()
        if len(g):
            yield ROWS, g, o, s
    return int(total[3])


def _whole_rows(rows, ends, threads, scorer, tell):
    """:func:`fused_best` of a diagonal block with ``spec.merged``, on
    ``threads`` threads: ``rows(start, end, counts)`` runs ``pair_topk``'s
    mode 3 on the rows ``[start, end)`` -- each row against every column but
    itself -- so that the chunks ``ends`` need nothing of each other (no
    column buffers) and run at once (the C kernel lets go of Python's lock).
    Each pair is scored from both of its rows: twice the upper triangle's
    products, on as many cores.  The same rows as the merged triangle gives
    (a row's ``k`` best, ties to the smaller other), in the same order; the
    counts are halved to the triangle's (a pair's two scores are the same
    number, so both fail or pass the same checks)."""
    from concurrent.futures import ThreadPoolExecutor

    def run(start, end):
        counts = np.zeros(4, np.int64)
        return rows(start, end, counts), counts

    spans = iter(zip([0] + ends[:-1], ends))
    total = np.zeros(4, np.int64)
    pool = ThreadPoolExecutor(threads)
    try:
        # a chunk a thread and one more in flight: results wait in order, not all at once
        pending = [(end, pool.submit(run, start, end))
                   for start, end in itertools.islice(spans, threads + 1)]
        while pending:
            end, job = pending.pop(0)
            (g, o, s), counts = job.result()
            more = next(spans, None)
            if more is not None:
                pending.append((more[1], pool.submit(run, *more)))
            total += counts
            if g:
                yield (ROWS, np.frombuffer(g, np.int64), np.frombuffer(o, np.int64),
                       np.frombuffer(s, np.float64))
            tell.upto(end)
    finally:
        pool.shutdown(cancel_futures=True)
    scorer.count_fused(*(total[:3] // 2).tolist())
    return int(total[3] // 2)


def csr_arrays(M):
    """(indptr as int64, indices as int32, data as float64) of a CSR matrix,
    contiguous, for the C kernels."""
    return (np.ascontiguousarray(M.indptr, dtype=np.int64),
            np.ascontiguousarray(M.indices, dtype=np.int32),
            np.ascontiguousarray(M.data, dtype=np.float64))


class Kept:
    """Each column's ``k`` best (row, score) so far, in C: a buffer of
    ``cap`` slots a column (16 bytes a slot) that is cut to its ``k`` best
    whenever it fills, raising the column's floor (the worst of them)."""

    def __init__(self, kernels, n, k):
        self.c, self.k = kernels, k
        self.cap = self.slots(k)
        self.scores = np.empty(n * self.cap)
        self.others = np.empty(n * self.cap, np.int64)
        self.sizes = np.zeros(n, np.int64)
        self.floor = np.full(n, -np.inf)

    @property
    def buffers(self):
        """``pair_topk``'s ``kept``: (k, cap, scores, others, sizes, floor)."""
        return self.k, self.cap, self.scores, self.others, self.sizes, self.floor

    @staticmethod
    def slots(k):
        """The slots a column of ``k`` best gets (16 bytes each)."""
        return k + max(k // 2, 8)

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


def merged(results, k):
    """The results of a diagonal block with each vector's two directions
    merged (:attr:`mrjobs.pairs.kernel.PairSpec.merge`): every result held, one :data:`ROWS` at
    the end (the generator's return value passed on)."""
    parts = []
    while True:
        try:
            _, groups, others, scores = next(results)
        except StopIteration as done:
            value = done.value
            break
        parts.append((groups, others, scores))
    if parts:
        yield (ROWS,) + group_best(*(np.concatenate(x) for x in zip(*parts)), k)
    return value
