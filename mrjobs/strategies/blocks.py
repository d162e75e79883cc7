"""The blocks strategy of :class:`~mrjobs.dot_products.MRSparseDotProducts`
(the default).

Vectors are assigned to B blocks by a stable function of their UUID
(the blocking scheme: :mod:`mrjobs.strategies.scheme`).  Each vector travels
whole to the B block pairs it belongs to, combined into block fragments
(:class:`~mrcodecs.jobwire.Block` records), and the reducer of a block pair
multiplies the pair's two blocks with scipy.sparse.  Without ``--max-df``
the mappers that read the input send the vectors as read, and the reducer of
a pair merges each id's lines and prepares the weights of both sides
(:attr:`~mrjobs.strategies.contract.Context.prepare_side`; each block's ids
are counted in one of its pairs) -- two steps in all; with it, the vectors
step does that first and sends prepared vectors:

``pairs``
    The reducer of the pair ``(i, j)`` builds CSR matrices of its two blocks
    over the pair's own feature index (features in UUID order) and hands them
    to the pair kernel (:func:`mrjobs.pairs.kernel.pair_best`), which multiplies
    them in row chunks of at most ``--buffer-entries`` products, so it never
    holds more than one chunk of products.  It turns dot products into scores,
    applies ``--threshold`` and keeps each row's ``--top-k`` best, in both
    directions: the rows of block ``i`` get their neighbours in block ``j``
    and, mirrored, the rows of block ``j`` theirs in block ``i`` (the diagonal
    pair ``(i, i)`` computes its upper triangle, each pair once, and gives
    each vector one partial row: its best above and below it, merged).  Each
    vector's partial row goes out keyed by the vector.
``rows``
    The reducer of a vector merges its (at most B, disjoint) partial rows and
    keeps the ``--top-k`` best: the union of per-block top-k lists holds the
    global top-k.  With one block and ``--top-k`` in a self-join there is no
    rows step (:func:`~mrjobs.strategies.scheme.pairs_write_rows`): the one
    diagonal pair gives each vector its whole row, and its reducer puts each
    row in order and writes the output lines itself -- the same lines.

With ``--max-df N`` the cut takes one of two forms, chosen per job by
:func:`df_cut_form` (the launcher passes it to the tasks as ``--df-cut-form``):

*join* (five steps; clusters, and more than 10 block pairs)
    Two steps come first: *df* (the reducer of a feature drops it if more
    than N vectors hold it, as the stripes strategy does) and *regroup* (the
    reducer of a vector gathers the features that were kept), then *pairs*
    and *rows* as without the cut.
*counts* (three steps; the inline and local runners, at most 10 block pairs)
    Each vectors-step reducer task also counts, per family, how many of its
    vectors hold each feature (:class:`~mrjobs.strategies.combining.FeatureCounts`) and,
    when it ends, sends that count table (a :class:`~mrcodecs.jobwire.Stripe`
    record: features, counts) to every block pair, since a feature's df is
    global.  The reducer of a pair sums the tables it receives into each
    feature's df, drops the features held by more than N vectors from both
    of its blocks -- and the vectors left with no feature -- before it
    builds the matrices.  The pair ``(0, 0)`` alone counts the cut (group
    ``mrsparse df-cut``; every pair sees the same global counts).  Cost: the
    tables add R·F·P entries to the shuffle (R vectors-step reducer tasks, F
    features a task holds, P block pairs), which is why clusters use *join*.

Either way weights and the whole-vector statistics are prepared before the
cut, as the stripes strategy does, and a dot product adds its terms in
feature order, so both forms give the same bytes and the same counters.

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
import functools
import os

import numpy as np

from mrcodecs import ID_DTYPE
from mrcodecs.jobwire import Stripe

from mrjobs.strategies.scheme import (BlockBuffer, all_pairs, block_pair_key, block_pair_of,
                                     pairs_write_rows, without)
from mrjobs.strategies.combining import FeatureCounts, PostingBuffer, RegroupBuffer
from mrjobs.counters import (BLOCK_PAIRS, BLOCK_PAIRS_PRUNED, CELLS_PRUNED, COLUMNS_PRUNED,
                       DF_COUNT_ENTRIES_SENT, PRODUCTS_COMPUTED, ROWS_PRUNED, WORK)
from mrjobs.pairs.chunks import group_best
from mrjobs.pairs.kernel import ROWS, PairSpec, pair_best
from mrjobs.scoring import RowMerger, output_rows, partial_rows
from mrjobs.strategies.contract import Step, by_family

#: the largest k the kernels take (a C int; --top-k's own limit)
MAX_K = 2**31 - 1
#: a record of the ``--floors`` file: a vector's id and its floor
FLOOR_DTYPE = np.dtype([("id", "S16"), ("floor", "<f8")])

__all__ = ["BlocksStrategy", "FLOOR_DTYPE"]

def _gather(lengths, perm):
    """Entry indices that put vectors in the order ``perm``."""
    offsets = np.concatenate(([0], np.cumsum(lengths, dtype=np.int64)))
    new_lengths = lengths[perm]
    new_starts = np.concatenate(([0], np.cumsum(new_lengths, dtype=np.int64)))[:-1]
    total = int(new_starts[-1] + new_lengths[-1]) if new_lengths.shape[0] else 0
    return (np.arange(total, dtype=np.int64) - np.repeat(new_starts, new_lengths)
            + np.repeat(offsets[:-1][perm], new_lengths))


class _Side:
    """The vectors of one side of a block pair, sorted by id; with
    ``prepare`` (the direct form, :attr:`Context.prepare_side` with its
    family and whether to count), as the mappers read them, merged and
    prepared here."""

    def __init__(self, parts, cut=None, prepare=None):
        ids = np.concatenate([p.ids for p in parts])
        lengths = np.concatenate([p.lengths for p in parts]).astype(np.int64)
        feats = np.concatenate([p.features for p in parts])
        weights = np.concatenate([p.weights for p in parts]).astype(np.float64, copy=False)
        stats = (None if parts[0].stats is None
                 else np.concatenate([p.stats for p in parts]))
        if cut is not None:
            ids, lengths, feats, weights, stats = without(
                cut, ids, lengths, feats, weights, stats)
        if ids.shape[0] > 1 and not (ids[1:] > ids[:-1]).all():
            perm = np.argsort(ids, kind="stable")
            idx = _gather(lengths, perm)
            ids, lengths = ids[perm], lengths[perm]
            feats, weights = feats[idx], weights[idx]
            if stats is not None:
                stats = stats[perm]
        if prepare is not None:
            ids, lengths, feats, weights, stats = prepare(ids, lengths, feats, weights)
        self.ids, self.lengths, self.feats, self.weights, self.stats = (
            ids, lengths, feats, weights, stats)
        self.raw = ids.tobytes()

    def __len__(self):
        return self.ids.shape[0]

    def matrix(self, cols, n_features):
        """CSR matrix of the side's entries in the local columns ``cols`` (one
        an entry, of a feature index in UUID order: :func:`feature_columns`)."""
        import scipy.sparse as sp  # here: the tasks of other steps need not load it
        indptr = np.concatenate(([0], np.cumsum(self.lengths)))
        m = sp.csr_matrix((self.weights, cols.astype(np.int32, copy=False), indptr),
                          shape=(len(self), n_features))
        m.has_sorted_indices = True
        return m


def feature_columns(*feats):
    """``(n, cols...)``: the distinct features of the arrays ``feats`` (ids,
    ``S16``) numbered in UUID order, and each array's entries as those
    numbers.  By their first 8 bytes as a big-endian integer (a sort of
    integers: a quarter of the time of ``numpy.unique`` and ``searchsorted``
    on the ids), unless two features share them: then by the whole ids."""
    f = np.ascontiguousarray(np.concatenate(feats) if len(feats) > 1 else feats[0])
    halves = f.view(">u8").reshape(-1, 2)
    hi = halves[:, 0].astype(np.uint64)
    _, first, inv = np.unique(hi, return_index=True, return_inverse=True)
    if (halves[:, 1] != halves[first, 1][inv]).any():
        uniq, inv = np.unique(f, return_inverse=True)
        n = uniq.shape[0]
    else:
        n = first.shape[0]
    inv = inv.reshape(-1)
    ends = np.cumsum([x.shape[0] for x in feats])
    return (n,) + tuple(np.split(inv, ends[:-1]))


class BlocksStrategy:
    """Steps of the blocks strategy (see :class:`mrjobs.strategies.contract.Strategy`)."""

    name = "blocks"

    def __init__(self, context):
        self.ctx = context

    @property
    def _join(self):
        """True when --max-df is cut by the df and regroup steps."""
        return self.ctx.max_df is not None and self.ctx.df_cut == "join"

    def steps(self):
        steps = []
        if self._join:
            steps.append(Step(self.reducer_df, self.reducer_df_init, self.reducer_df_final))
            steps.append(Step(self.reducer_regroup, self._init_blocks, self.take_final))
        if self.writes_rows:
            steps.append(Step(self.reducer_pairs, self._rows_init, self._rows_final))
        else:
            steps.append(Step(self.reducer_pairs))
        return steps

    @property
    def writes_rows(self):
        """True when the pair step writes the output lines itself (the job then
        has no rows step; :func:`~mrjobs.strategies.scheme.pairs_write_rows`):
        the one diagonal pair gives each vector its whole row in one result
        (:attr:`PairSpec.merged <mrjobs.pairs.kernel.PairSpec.merged>`), which
        the rows step would only have sorted by vector and passed on."""
        ctx = self.ctx
        return pairs_write_rows(ctx.blocks, ctx.top_k, ctx.queries)

    def _rows_init(self):
        self._rows = RowMerger(self.ctx.top_k, self.ctx.buffer_entries)

    def _rows_final(self):
        yield from output_rows(self.ctx.counts, self._rows.flush())

    # -- fed by the vectors step (or by the regroup step) -----------------------

    def take_init(self):
        ctx = self.ctx
        if self._join:
            # to the df step first
            self._post = [PostingBuffer(ctx.buffer_entries, ctx.wire_dtype, query=False),
                          PostingBuffer(ctx.buffer_entries, ctx.wire_dtype, query=True)]
            self._blocks = self._df = None
            return
        self._init_blocks()
        # --max-df by count tables: the task's share of each feature's df
        self._df = None if ctx.max_df is None else FeatureCounts(ctx.buffer_entries)

    def _init_blocks(self):
        ctx = self.ctx
        self._post = self._df = None
        self._blocks = BlockBuffer(ctx.buffer_entries, ctx.wire_dtype, ctx.blocks,
                                   _query_blocks(ctx))

    def take(self, doc, query, ids, weights, stat):
        if self._post is not None:
            buf = self._post[1 if query else 0]
            if buf.add(doc, ids, weights, stat):
                yield from buf.flush()
            return
        if self._df is not None:
            self._df.add(query, ids)
        family = 1 if (self.ctx.queries and not query) else 0
        if self._blocks.add(doc, family, ids, weights.astype(self.ctx.wire_dtype, copy=False),
                            stat):
            yield from self._flush_blocks()

    def take_final(self):
        if self._post is not None:
            for buf in self._post:
                yield from buf.flush()
            return
        yield from self._flush_blocks()
        if self._df is not None:
            yield from self._count_tables()

    def _flush_blocks(self):
        # a feature that this task alone saw in more than --max-df vectors is
        # cut whatever the others saw: its entries need not travel
        drop = None if self._df is None else self._df.over(self.ctx.max_df)
        yield from self._blocks.flush(self.ctx.counts, drop)

    def _count_tables(self):
        """The task's count tables, to every block pair."""
        ctx = self.ctx
        keys = [block_pair_key(i, j) for i, j in all_pairs(
            ctx.blocks, _query_blocks(ctx))]
        sent = 0
        for table in self._df.tables():
            for key in keys:
                yield key, table
            sent += len(table) * len(keys)
        ctx.counts.add(WORK, DF_COUNT_ENTRIES_SENT, sent)

    # -- --max-df, join form: the df step and the regroup step ---------------

    def reducer_df_init(self):
        limit, dtype = self.ctx.buffer_entries, self.ctx.wire_dtype
        self._regroup = [RegroupBuffer(limit, dtype, query=False),
                         RegroupBuffer(limit, dtype, query=True)]

    def reducer_df(self, feature, fragments):
        postings = self.ctx.postings(fragments)
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

    # -- the block pairs ------------------------------------------------------

    def reducer_pairs(self, key, records):
        """Decode the pair's two blocks (and, with ``--max-df`` in the counts
        form, the count tables), run the pair kernel, emit partial rows."""
        ctx = self.ctx
        i, j = block_pair_of(key)
        status = ctx.status
        if status is not None:  # (see mrjobs.runtime.taskstatus: a pair's share)
            status.begin_pair(1 if i == j or ctx.queries else 2,
                              (ctx.blocks or 1) * (_query_blocks(ctx) or ctx.blocks or 1))
        sides, tables = ([], []), []
        for r in records:
            if isinstance(r, Stripe):
                tables.append(r)
            else:
                sides[r.side].append(r)
        cut = (None if ctx.max_df is None or self._join
               else self._cut(tables, count=(i, j) == (0, 0)))
        diagonal = i == j and not ctx.queries
        rows = self._side(sides[0], cut, i, j, 0)
        cols = rows if diagonal else self._side(sides[1], cut, i, j, 1)
        if not rows or not cols:  # (None, or no vector)
            return
        if diagonal:
            n_features, at = feature_columns(rows.feats)
            A = C = rows.matrix(at, n_features)
        else:
            n_features, at, ct = feature_columns(rows.feats, cols.feats)
            A, C = rows.matrix(at, n_features), cols.matrix(ct, n_features)
        same = None if diagonal else _same_ids(rows.ids, cols.ids)
        if same is not None and ctx.both_ways:
            raise ValueError("--both-ways: a query is also a vector of INPUT (%d in block "
                             "pair %d, %d): the families must not share an id"
                             % ((same >= 0).sum(), i, j))
        k = ctx.top_k
        spec = PairSpec(k + 1 if same is not None and k is not None and k < MAX_K else k,
                        ctx.buffer_entries, diagonal=diagonal, include_self=ctx.include_self,
                        mirror=not ctx.queries or ctx.both_ways,
                        prune="auto" if ctx.prune else "never", merge=True,
                        threads=ctx.threads)
        results = pair_best(A, C, ctx.scorer, spec, stats_a=rows.stats, stats_c=cols.stats,
                            progress=None if status is None else status.pair_products)
        if same is not None:
            results = _without_self(results, same, k)
        if ctx.floors is not None:
            results = _above_floors(results, _floors_of(ctx.floors, cols.ids))
        work = yield from self._emit_all(results, rows, cols)
        for name, n in ((BLOCK_PAIRS, 1), (PRODUCTS_COMPUTED, work.products),
                        (ROWS_PRUNED, work.rows_pruned), (COLUMNS_PRUNED, work.columns_pruned),
                        (CELLS_PRUNED, work.cells_pruned), (BLOCK_PAIRS_PRUNED, work.pair_pruned)):
            ctx.counts.add(WORK, name, n)

    def _side(self, parts, cut, i, j, side):
        """The :class:`_Side` of a pair's records of one side, or None.  In
        the direct form each block's vectors are counted in one of its
        pairs: a self-join's block ``b`` in ``(b, b)``; under ``--queries``
        query block ``q`` in ``(q, 0)``, corpus block ``c`` in ``(0, c)``."""
        if not parts:
            return None
        prepare = self.ctx.prepare_side
        if prepare is None:
            return _Side(parts, cut)
        query = self.ctx.queries and side == 0
        count = (j == 0 if side == 0 else i == 0) if self.ctx.queries else i == j
        return _Side(parts, cut, lambda *a: prepare(*a, query, count))

    def _cut(self, tables, count):
        """The features over ``--max-df`` (sorted ids): each feature's df is
        the sum of the count tables of every vectors-step task, over both
        families.  With ``count``, the cut is counted (one pair does)."""
        if not tables:
            return np.empty(0, ID_DTYPE)
        feats = np.concatenate([t.ids for t in tables])
        n = np.concatenate([t.values.astype(np.float64) for t in tables])
        query = np.repeat([bool(t.query) for t in tables], [len(t) for t in tables])
        uniq, inv = np.unique(feats, return_inverse=True)
        df = [np.bincount(inv[query == q], n[query == q], uniq.shape[0]) for q in (False, True)]
        over = df[0] + df[1] > self.ctx.max_df
        if count:
            self.ctx.postings.count_cut(df[0][over], df[1][over])
        return uniq[over]

    def _emit_all(self, results, rows, cols):
        """Emit each result of the kernel; return the kernel's return value."""
        while True:
            try:
                direction, groups, others, scores = next(results)
            except StopIteration as done:
                return done.value
            if direction == ROWS:
                yield from self._emit(groups, others, scores, rows, cols)
            else:
                yield from self._emit(groups, others, scores, cols, rows)

    def _emit(self, groups, others, scores, group_side, other_side):
        """One partial row per group (a vector of ``group_side``); entries
        arrive grouped."""
        rows = partial_rows(groups, others, scores, group_side.raw, other_side.ids,
                            self.ctx.wire_dtype)
        if not self.writes_rows:
            yield from rows
            return
        # a whole row: put in order (score descending, ties by id) and cut to k
        for doc, row in rows:
            yield from output_rows(self.ctx.counts, self._rows.add(doc, [row]))


def _same_ids(row_ids, col_ids):
    """Each row's column of the same id (a query and its copy in the corpus),
    -1 where there is none; None if no row has one (both sides sorted by id)."""
    common, ri, ci = np.intersect1d(row_ids, col_ids, assume_unique=True,
                                    return_indices=True)
    if not common.shape[0]:
        return None
    same = np.full(len(row_ids), -1, np.int64)
    same[ri] = ci
    return same


def _query_blocks(ctx):
    """The blocks of the queries under ``--queries`` (``--query-blocks``, by
    default ``--blocks``), else None."""
    return (ctx.query_blocks or ctx.blocks) if ctx.queries else None


@functools.lru_cache(maxsize=1)
def _floor_table(path, stamp):
    return np.fromfile(path, FLOOR_DTYPE)


def _floors_of(path, ids):
    """The floors (``--floors`` file ``path``) of the vectors ``ids``; -inf where none."""
    st = os.stat(path)  # (read once a task; again where the file changed, inline)
    table = _floor_table(path, (st.st_mtime_ns, st.st_size, st.st_ino))
    at = np.searchsorted(table["id"], ids)
    found = at < table.shape[0]
    found[found] = table["id"][at[found]] == ids[found]
    out = np.full(len(ids), -np.inf)
    out[found] = table["floor"][at[found]]
    return out


def _above_floors(results, floors):
    """The kernel's ``results`` less the columns' candidates below their
    ``floors`` (a margin below: scores carried as float32 round; the rows put
    together later decide ties exactly).  Returns the kernel's return value."""
    margin = np.abs(floors) * 1e-6
    while True:
        try:
            direction, groups, others, scores = next(results)
        except StopIteration as done:
            return done.value
        if direction != ROWS:
            keep = scores >= floors[groups] - margin[groups]
            groups, others, scores = groups[keep], others[keep], scores[keep]
        yield direction, groups, others, scores


def _without_self(results, same, k):
    """The kernel's ``results`` (rows' best, asked for ``k + 1`` a row) without
    each query's own copy (column ``same[row]``), cut to ``k`` a row: a query
    is never its own neighbour, and the best ``k`` of the others are the
    best ``k`` of the best ``k + 1`` less itself (the order is total: score,
    then id; columns are in id order).  Returns the kernel's return value."""
    while True:
        try:
            direction, groups, others, scores = next(results)
        except StopIteration as done:
            return done.value
        keep = others != same[groups]
        groups, others, scores = groups[keep], others[keep], scores[keep]
        if k is not None and groups.shape[0]:
            # (a row's entries come in no set order: its k best by score, then id)
            groups, others, scores = group_best(groups, others, scores, k)
        yield direction, groups, others, scores
