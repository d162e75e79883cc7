"""The blocks strategy of :class:`~mrjobs.dot_products.MRSparseDotProducts`
(the default).

Vectors are assigned to B blocks by a stable function of their UUID
(:func:`~mrjobs.buffers.block_of`).  After the vectors step (which merges
each vector's lines and prepares its weights), each vector travels whole to
the B block pairs it belongs to, combined into block fragments
(:class:`~mrcodecs.jobwire.Block` records), and the reducer of a block pair
multiplies the pair's two blocks with scipy.sparse:

``pairs``
    The reducer of the pair ``(i, j)`` builds CSR matrices of its two blocks
    over the pair's own feature index (features in UUID order) and multiplies
    them in row chunks of at most ``--buffer-entries`` products, so it never
    holds more than one chunk of products.  It turns dot products into scores,
    applies ``--threshold`` and keeps each row's ``--top-k`` best, in both
    directions: the rows of block ``i`` get their neighbours in block ``j``
    and, mirrored, the rows of block ``j`` theirs in block ``i`` (the diagonal
    pair ``(i, i)`` computes its upper triangle, each pair once).  Each
    vector's partial row goes out keyed by the vector.
``rows``
    The reducer of a vector merges its (at most B, disjoint) partial rows and
    keeps the ``--top-k`` best: the union of per-block top-k lists holds the
    global top-k.

With ``--max-df`` two steps come first: *df* (the reducer of a feature drops
it if more than N vectors hold it, as the stripes strategy does) and
*regroup* (the reducer of a vector gathers the features that were kept).

Exactness and determinism: a pair's dot product is computed in one reducer,
over the whole of both vectors, by scipy's sparse product, which adds the
terms in the order of the row vector's features -- UUID order -- whatever
the block count, partitioning or runner: the same input gives the same
bytes, and ``x.y`` equals ``y.x`` bit for bit.

Cost: each vector is sent B times (``block entries sent`` counts the
entries), against Σdf²/2 partial products for stripes.  Memory of a pair
reducer: its two blocks (about 2·nnz/B entries of 24 bytes, plus scipy's
index arrays) plus one chunk of products and, with ``--top-k K``, K
candidates per column vector.
"""
import numpy as np
from mrjob.step import MRStep

from mrcodecs.jobwire import Stripe, block_pair_of

from .buffers import BlockBuffer, PostingBuffer, RegroupBuffer, by_family
from .counters import WORK
from .kernels import group_starts, top_k_groups

__all__ = ["BlocksStrategy", "estimate_blocks"]

#: entries one block should hold by default (about 50 MB as scipy matrices)
DEFAULT_BLOCK_ENTRIES = 2_000_000
#: bytes of input per vector entry, for estimating entries from input sizes
INPUT_BYTES_PER_ENTRY = 45


def estimate_blocks(entries, reducers=1, block_entries=DEFAULT_BLOCK_ENTRIES):
    """A block count for about ``entries`` vector entries.

    Enough blocks that one holds at most ``block_entries`` entries, and, with
    several reducers, enough block pairs (four per reducer) that uneven pairs
    -- a diagonal pair computes half a product -- still keep them all busy.

    >>> estimate_blocks(10_000), estimate_blocks(10_000, reducers=2)
    (1, 4)
    >>> estimate_blocks(100_000_000)
    50
    """
    b = max(1, -(-int(entries) // block_entries))
    if reducers > 1:
        while b * (b + 1) // 2 < 4 * reducers:
            b += 1
    return b


def pair_memory_bytes(entries, blocks, buffer_entries):
    """Estimated peak bytes of one block-pair reducer (see the module doc)."""
    per_block = entries / max(blocks, 1)
    # two blocks as decoded records + CSR copies (id 16 + weight 8 + index 4 + CSR 12)
    held = 2 * per_block * 40
    # one chunk of products: scipy's result + COO rows, cols, scores, sort keys
    chunk = buffer_entries * 48
    return int(held + chunk)


def _gather(lengths, perm):
    """Entry indices that put vectors in the order ``perm``."""
    offsets = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))
    new_lengths = lengths[perm]
    new_starts = np.concatenate(([0], np.cumsum(new_lengths, dtype=np.int64)))[:-1]
    total = int(new_starts[-1] + new_lengths[-1]) if new_lengths.shape[0] else 0
    return (np.arange(total, dtype=np.int64) - np.repeat(new_starts, new_lengths)
            + np.repeat(offsets[:-1][perm], new_lengths))


class _Side:
    """The vectors of one side of a block pair, sorted by id."""

    def __init__(self, parts):
        ids = np.concatenate([p.ids for p in parts])
        lengths = np.concatenate([p.lengths for p in parts]).astype(np.int64)
        feats = np.concatenate([p.features for p in parts])
        weights = np.concatenate([p.weights for p in parts]).astype(np.float64, copy=False)
        stats = (None if parts[0].stats is None
                 else np.concatenate([p.stats for p in parts]))
        if ids.shape[0] > 1 and not (ids[1:] > ids[:-1]).all():
            perm = np.argsort(ids, kind="stable")
            idx = _gather(lengths, perm)
            ids, lengths = ids[perm], lengths[perm]
            feats, weights = feats[idx], weights[idx]
            if stats is not None:
                stats = stats[perm]
        self.ids, self.lengths, self.feats, self.weights, self.stats = (
            ids, lengths, feats, weights, stats)
        self.raw = ids.tobytes()

    def __len__(self):
        return self.ids.shape[0]

    def matrix(self, features):
        """CSR matrix over the local feature index ``features`` (sorted)."""
        import scipy.sparse as sp  # here: the tasks of other steps need not load it
        cols = np.searchsorted(features, self.feats).astype(np.int32)
        indptr = np.concatenate(([0], np.cumsum(self.lengths)))
        m = sp.csr_matrix((self.weights, cols, indptr),
                          shape=(len(self), features.shape[0]))
        m.has_sorted_indices = True
        return m


class BlocksStrategy:
    """Steps of the blocks strategy, bound to a running job."""

    name = "blocks"

    def __init__(self, job):
        self.job = job

    def steps(self):
        steps = []
        if self.job.options.max_df is not None:
            steps.append(MRStep(reducer_init=self.reducer_df_init, reducer=self.reducer_df,
                                reducer_final=self.reducer_df_final))
            steps.append(MRStep(reducer_init=self.reducer_regroup_init,
                                reducer=self.reducer_regroup,
                                reducer_final=self.reducer_regroup_final))
        steps.append(MRStep(reducer_init=self.reducer_pairs_init, reducer=self.reducer_pairs,
                            reducer_final=self.job._task_final))
        return steps

    # -- fed by the vectors step (or by the regroup step) -----------------------

    def take_init(self):
        job = self.job
        o = job.options
        if o.max_df is not None:
            # to the df step first
            self._post = [PostingBuffer(o.buffer_entries, job.wire_dtype, query=False),
                          PostingBuffer(o.buffer_entries, job.wire_dtype, query=True)]
            self._blocks = None
        else:
            self._init_blocks()

    def _init_blocks(self):
        o = self.job.options
        self._post = None
        self._blocks = BlockBuffer(o.buffer_entries, self.job.wire_dtype, o.blocks,
                                   o.blocks if o.queries else None)

    def take(self, doc, query, ids, weights, stat):
        if self._post is not None:
            buf = self._post[1 if query else 0]
            if buf.add(doc, ids, weights, stat):
                yield from buf.flush()
            return
        family = 1 if (self.job.options.queries and not query) else 0
        if self._blocks.add(doc, family, ids, weights.astype(self.job.wire_dtype, copy=False),
                            stat):
            yield from self._blocks.flush(self.job.counts)

    def take_final(self):
        if self._post is not None:
            for buf in self._post:
                yield from buf.flush()
        else:
            yield from self._blocks.flush(self.job.counts)

    # -- --max-df: the df step and the regroup step ---------------------------

    def reducer_df_init(self):
        job = self.job
        job._task_init()
        limit = job.options.buffer_entries
        self._regroup = [RegroupBuffer(limit, job.wire_dtype, query=False),
                         RegroupBuffer(limit, job.wire_dtype, query=True)]

    def reducer_df(self, feature, fragments):
        postings = self.job.assemble_postings(feature, fragments)
        if postings is None:
            return
        for q, part in enumerate(postings):
            if part is None:
                continue
            docs, w, stats = part
            if self._regroup[q].add(feature, docs, w, stats):
                yield from self._regroup[q].flush()

    def reducer_df_final(self):
        for buf in self._regroup:
            yield from buf.flush()
        self.job._task_final()

    def reducer_regroup_init(self):
        self.job._task_init()
        self._init_blocks()

    def reducer_regroup(self, doc, pieces):
        """A vector's kept features (prepared weights, whole-vector stat)."""
        for query, parts in by_family(pieces):
            if len(parts) == 1:
                ids, w = parts[0].ids, parts[0].values
            else:
                ids = np.concatenate([p.ids for p in parts])
                w = np.concatenate([p.values for p in parts])
                order = np.argsort(ids, kind="stable")
                ids, w = ids[order], w[order]
            yield from self.take(doc, query, ids, w, parts[0].self_stat)

    def reducer_regroup_final(self):
        yield from self.take_final()
        self.job._task_final()

    # -- the block pairs ------------------------------------------------------

    def reducer_pairs_init(self):
        self.job._task_init()

    def reducer_pairs(self, key, blocks):
        job = self.job
        o = job.options
        i, j = block_pair_of(key)
        sides = ([], [])
        for b in blocks:
            sides[b.side].append(b)
        diagonal = i == j and not o.queries
        if not sides[0] or not (diagonal or sides[1]):
            return
        rows = _Side(sides[0])
        cols = rows if diagonal else _Side(sides[1])
        feats = np.unique(rows.feats if diagonal else np.concatenate((rows.feats, cols.feats)))
        A = rows.matrix(feats)
        C = A if diagonal else cols.matrix(feats)
        exact_zeros = _may_hold_zero_dots(A.data, C.data)
        k = o.top_k
        mirror = not o.queries
        n_c = C.shape[0]
        same = None if diagonal else _same_ids(rows.ids, cols.ids, n_c)
        held = _Held(k, max(o.buffer_entries, 4 * (k or 0) * n_c) if k is None
                     else 4 * k * n_c, n_c)
        # upper bound on each row's products: sum of its features' df on the column side
        df_c = np.bincount(C.indices, minlength=feats.shape[0])
        bound = np.minimum(np.bincount(np.repeat(np.arange(A.shape[0]), np.diff(A.indptr)),
                                       weights=df_c[A.indices], minlength=A.shape[0]), n_c)
        limit = o.buffer_entries
        Bt = None if diagonal else C.T.tocsr()
        start = 0
        scored = products = 0
        # with --top-k, chunks narrow enough that a dense array of the chunk
        # (4 * limit cells at most) can select the best of each row
        max_rows = max(1, 4 * limit // max(n_c, 1)) if k is not None else None
        for end in _chunk_ends(bound, limit, max_rows):
            if diagonal:
                Bt = C[start:].T.tocsr()
            c0 = start if diagonal else 0
            P = A[start:end] @ Bt
            r, c, dots = _coo(P, start, c0)
            if exact_zeros:
                r, c, dots = _with_zero_dots(A[start:end], Bt, start, c0, r, c, dots)
            products += dots.shape[0]
            r, c, dots = _drop_self(r, c, dots, diagonal, o.include_self, same, n_c)
            scores = job.scores(dots, None if rows.stats is None else rows.stats[r],
                                None if cols.stats is None else cols.stats[c])
            scored += scores.shape[0]
            keep = job.keep_scores(scores)
            if keep is not None:
                r, c, scores = r[keep], c[keep], scores[keep]
            n_r = end - start
            if k is not None and _dense_enough(scores.shape[0], n_r, n_c - c0, k, limit):
                # one dense array (the chunk's rows, the columns it can reach) serves
                # both directions: numpy.partition selects in linear time
                neg = np.full((n_r, n_c - c0), np.inf)
                neg[r - start, c - c0] = -scores
                yield from self._emit(*_dense_best(neg, k, 1, start, c0), rows, cols)
                if mirror:
                    if diagonal and o.include_self:
                        neg[np.arange(n_r), np.arange(n_r)] = np.inf
                    floor = None if held.floor is None else held.floor[c0:]
                    held.add(*_dense_best(neg, k, 0, start, c0, floor, ordered=False))
                del neg
            else:
                yield from self._emit(*_best(r, c, scores, k), rows, cols)
                if mirror:
                    other = c != r if diagonal else np.ones(c.shape[0], bool)
                    if held.floor is not None:
                        other &= scores >= held.floor[c]
                    held.add(c[other], r[other], scores[other])
            if held.full():
                yield from self._emit(*held.take(), cols, rows)
            start = end
        yield from self._emit(*held.take(), cols, rows)
        job.counts.add(WORK, "pairs scored", scored)
        job.counts.add(WORK, "block pairs", 1)
        job.counts.add(WORK, "products computed", products)

    def _emit(self, groups, others, scores, group_side, other_side):
        """One partial row per group (a vector of ``group_side``); entries
        arrive grouped."""
        if not groups.shape[0]:
            return
        scores = scores.astype(self.job.wire_dtype, copy=False)
        starts = group_starts(groups)
        ends = np.append(starts[1:], groups.shape[0]).tolist()
        starts = starts.tolist()
        ids = other_side.ids[others]
        raw = group_side.raw
        for s, e, g in zip(starts, ends, groups[starts].tolist()):
            yield raw[16 * g:16 * g + 16], Stripe(ids[s:e], scores[s:e])


def _drop_self(r, c, dots, diagonal, include_self, same, n_c):
    """The pairs without the lower triangle of a diagonal block pair (and its
    diagonal, unless ``include_self``), or, under ``--queries``, without the
    pairs ``same`` (:func:`_same_ids`) of a query and its own id."""
    if diagonal:
        keep = c >= r if include_self else c > r
    elif same is not None:
        keep = ~np.isin(r * n_c + c, same)
    else:
        return r, c, dots
    return r[keep], c[keep], dots[keep]


def _same_ids(row_ids, col_ids, n_c):
    """``row * n_c + col`` of the vectors of the two sides (a query and a
    corpus vector) that have the same id, or None if there are none: a query
    is never its own neighbour (both sides sorted by id)."""
    common, ri, ci = np.intersect1d(row_ids, col_ids, assume_unique=True,
                                    return_indices=True)
    if not common.shape[0]:
        return None
    return ri.astype(np.int64) * n_c + ci


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
    """
    if not a.shape[0] or not b.shape[0]:
        return False
    if a.min() < 0 < a.max() or b.min() < 0 < b.max():
        return True  # a side with weights of both signs: terms can cancel
    with np.errstate(under="ignore"):
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
