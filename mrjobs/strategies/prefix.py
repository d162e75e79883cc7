"""The prefix strategy of :class:`~mrjobs.dot_products.MRSparseDotProducts`:
an exact threshold join whose shuffle follows the input and the answer.

Under ``--threshold``, a vector is sent only to the reducers of its *prefix*
features, the rarest features it holds, up to where the rest of it can no
longer reach the threshold with any vector (prefix filtering: Bayardo et al.,
"Scaling up all pairs similarity search", 2007; on MapReduce, Vernica, Carey
and Li, SIGMOD 2010).  The order, the bound and the proof that every pair
that reaches the threshold is scored exactly once are in
:mod:`mrjobs.strategies.prefixing`.

Where the launcher runs the job (``python -m mrjobs.dot_products``,
:func:`mrjobs.testing.run_job`), a first run counts the lines that hold each
feature, and the job's own run orders every vector's features by that table
(:mod:`mrjobs.strategies.dftable`): where every vector id is on one line the
mappers prepare each vector and send it to its prefix features (steps
``pairs``, ``rows``); else the vectors step merges an id's lines first, and
its reducers send them (``vectors``, ``pairs``, ``rows``).  A job run without
the launcher (mrjob's ``make_runner``), or with ``--max-df``, or from posting
lists, finds the df in two steps of its own, after the vectors step:

``df``
    The reducer of a feature assembles its posting list (with the
    ``--max-df`` cut, as the stripes strategy does) and sends each of its
    vectors the entry back with the feature's df (a per-entry statistic of a
    :class:`~mrcodecs.jobwire.Stripe` record).
``prefix``
    The reducer of a vector gathers its entries, puts them in the global
    order ``(df, UUID)``, finds its prefix and sends it to each of its prefix
    features (:class:`~mrjobs.strategies.prefixing.PrefixBuffer`:
    :class:`~mrcodecs.jobwire.Block` records keyed by the feature: the
    vector from that feature on, and, unless :func:`~mrjobs.strategies.prefixing.repeats`,
    its prefix features before it).

Then, in every form:

``pairs``
    The reducer of a feature gets every vector whose prefix holds it, puts
    each vector's entries back in UUID order and hands them to the pair
    kernel as one diagonal block (:func:`mrjobs.pairs.kernel.pair_best`: the
    same products, scores, ``--threshold`` and ``--top-k`` as the blocks
    strategy's).  Of the pairs kept it drops those whose vectors share a
    prefix feature before this one (scored there), and emits each vector's
    partial row; where the copies carry no earlier features (no prepared
    weight negative: :func:`~mrjobs.strategies.prefixing.repeats`) it keeps
    them, scored from part of their vectors, at most the whole's score.
``rows``
    As for the other strategies: each vector's partial rows merged, its
    ``--top-k`` best written; a pair met at several prefix features kept at
    its best, the first's (:class:`~mrjobs.scoring.RowMerger`'s ``repeats``).  Each vector's top-k among the pairs of one
    reducer, before the drop, is made of pairs that exist, so what the drop
    removes never hides a pair of the global top-k.

A feature held by more than :data:`~mrjobs.strategies.prefixing.HOT_VECTORS`
vectors would make its reducer the straggler: it is split into ``s`` parts by
the vectors' ids, each vector sent to the ``s`` pairs of parts its own belongs
to (keys that name the feature by a hash: :func:`~mrjobs.strategies.prefixing.split_of`);
the reducer of two parts scores their pairs across them and leaves those
within one part to that part's own reducer.  No feature's reducer then scores
more than about ``2 HOT_VECTORS^2`` products, at the cost of ``s`` copies of
its vectors and twice its products.

Output: the same lines as the blocks strategy, byte for byte (each pair's dot
product is added in UUID order of the features, over the features both
vectors hold).  Cost: the shuffle is the table run's counts (the features
each map task saw), each vector's copies (from each prefix feature on, with
the prefix features before it where a weight is negative), and the answer, plus the input once where a
vectors step merges lines (three times more without the table: vectors,
postings, entries with their df); the pair reducers' work is the pairs that
share a prefix feature, not all pairs.  The measures: :data:`~mrjobs.strategies.prefixing.SUPPORTED`; a
self-join (``--queries`` is not taken).
"""
import numpy as np

from mrjobs.counters import (PREFIX_ENTRIES_SENT, PREFIX_GROUPS, PREFIX_NOWHERE,
                             PREFIX_PAIRS_DROPPED, PREFIX_PART_PAIRS, PRODUCTS_COMPUTED, WORK)
from mrjobs.pairs.kernel import PairSpec, pair_best
from mrjobs.scoring import partial_rows
from mrjobs.strategies.combining import PostingBuffer, RegroupBuffer
from mrjobs.strategies.contract import Step, by_family
from mrjobs.strategies.dftable import DfTable
from mrjobs.strategies.prefixing import (PrefixBuffer, entry_vectors, shared_earlier,
                                         split_feature, split_of, sub_blocks)

__all__ = ["PrefixStrategy"]


class PrefixStrategy:
    """Steps of the prefix strategy (see :class:`mrjobs.strategies.contract.Strategy`)."""

    name = "prefix"
    writes_rows = False  # partial rows: the rows step merges them

    def __init__(self, context):
        self.ctx = context

    def steps(self):
        pairs = Step(self.reducer_pairs, self.reducer_pairs_init, self.reducer_pairs_final)
        if self.ctx.df_table:  # the vectors step sends each vector to its prefix features
            return [pairs]
        return [Step(self.reducer_df, self.reducer_df_init, self.reducer_df_final),
                Step(self.reducer_prefix, self.reducer_prefix_init, self.reducer_prefix_final),
                pairs]

    # -- fed by the vectors step: with the df table, each vector to its prefix
    # features; without it, postings to the df step ---------------------------

    def take_init(self):
        if self.ctx.df_table:
            self._table = DfTable(self.ctx.df_table)
            self.reducer_prefix_init(self._table.ids)
        else:
            self._post = PostingBuffer(self.ctx.buffer_entries, self.ctx.wire_dtype)

    def take(self, doc, query, ids, weights, stat):
        if self.ctx.df_table:  # the features as their places in the table
            df, places = self._table.lookup(doc, ids)
            if self._prefixes.add(doc, places, weights, df, stat):
                yield from self._flush_prefixes()
        elif self._post.add(doc, ids, weights, stat):
            yield from self._post.flush()

    def take_final(self):
        if self.ctx.df_table:
            yield from self._flush_prefixes()
        else:
            yield from self._post.flush()

    # -- df: each entry back to its vector, with the feature's df ------------

    def reducer_df_init(self):
        self._regroup = RegroupBuffer(self.ctx.buffer_entries, self.ctx.wire_dtype)

    def reducer_df(self, feature, fragments):
        postings = self.ctx.postings(fragments)
        if postings is None or postings[0] is None:
            return
        docs, w, stats = postings[0]
        df = np.full(docs.shape[0], float(docs.shape[0]))
        if self._regroup.add(feature, docs, w, stats, df):
            yield from self._regroup.flush()

    def reducer_df_final(self):
        yield from self._regroup.flush()

    # -- prefix: each vector to its prefix features ---------------------------

    def reducer_prefix_init(self, names=None):
        ctx = self.ctx
        self._prefixes = PrefixBuffer(ctx.buffer_entries, ctx.wire_dtype, ctx.scorer.measure,
                                      ctx.scorer.threshold, ctx.include_self,
                                      whole=ctx.top_k is not None and not ctx.repeats,
                                      names=names, earlier=not ctx.repeats)

    def reducer_prefix(self, doc, pieces):
        for _, parts in by_family(pieces):
            ids = np.concatenate([p.ids for p in parts])
            w = np.concatenate([p.values for p in parts])
            df = np.concatenate([p.stats for p in parts])
            if len(parts) > 1:
                order = np.argsort(ids, kind="stable")
                ids, w, df = ids[order], w[order], df[order]
            if self._prefixes.add(doc, ids, w, df, parts[0].self_stat):
                yield from self._flush_prefixes()

    def reducer_prefix_final(self):
        yield from self._flush_prefixes()

    def _flush_prefixes(self):
        sent, nowhere = yield from self._prefixes.flush()
        self.ctx.counts.add(WORK, PREFIX_ENTRIES_SENT, sent)
        self.ctx.counts.add(WORK, PREFIX_NOWHERE, nowhere)

    # -- pairs: the vectors of the prefix features ----------------------------

    def reducer_pairs_init(self):
        self._groups, self._group_entries = [], 0
        self._names = DfTable(self.ctx.df_table).ids if self.ctx.df_table else None

    def reducer_pairs(self, feature, records):
        """Buffer one prefix feature's records; the buffered groups go to the
        kernel together (:class:`_Groups`) when they hold ``--buffer-entries``."""
        records = list(records)
        if sum(len(r) for r in records if not r.side) < (1 if self.ctx.include_self else 2):
            return  # (a feature in one vector's prefix: no pair here)
        split = split_of(feature)
        if split is not None:  # (checks that the key names one feature of the group)
            feats = np.concatenate([r.features for r in records if not r.side])
            split_feature(feature, feats if self._names is None else self._names[feats])
        self._groups.append((records, split))
        self._group_entries += sum(r.features.shape[0] for r in records)
        if self._group_entries >= self.ctx.buffer_entries:
            yield from self._pairs()

    def reducer_pairs_final(self):
        yield from self._pairs()

    def _pairs(self):
        if not self._groups:
            return
        ctx = self.ctx
        g = _Groups(self._groups)
        self._groups, self._group_entries = [], 0
        spec = PairSpec(ctx.top_k, ctx.buffer_entries, diagonal=True,
                        include_self=ctx.include_self, mirror=True,
                        prune="auto" if ctx.prune else "never", merge=True, threads=ctx.threads)
        results = pair_best(g.matrix, g.matrix, ctx.scorer, spec, stats_a=g.stats,
                            stats_c=g.stats)
        dropped = kept_own = 0
        while True:
            try:
                _, rows, others, scores = next(results)
            except StopIteration as done:
                work = done.value
                break
            earlier = shared_earlier(rows, others, g.earlier_ptr, g.earlier_cols,
                                     g.n_earlier)
            own = g.cross[rows] & (g.part[rows] == g.part[others])
            if earlier.any() or own.any():
                dropped += int(earlier.sum())
                kept_own += int((own & ~earlier).sum())
                keep = ~(earlier | own)
                rows, others, scores = rows[keep], others[keep], scores[keep]
            yield from partial_rows(rows, others, scores, g.raw, g.ids, ctx.wire_dtype)
        for name, n in ((PREFIX_GROUPS, g.count), (PRODUCTS_COMPUTED, work.products),
                        (PREFIX_PAIRS_DROPPED, dropped), (PREFIX_PART_PAIRS, kept_own)):
            ctx.counts.add(WORK, name, n)

def _stacked(blocks, group_sizes):
    """The blocks' arrays concatenated, with each vector's and each entry's
    group (``group_sizes``: blocks a group)."""
    ids = np.concatenate([b.ids for b in blocks])
    lengths = np.concatenate([b.lengths for b in blocks]).astype(np.int64)
    feats = np.concatenate([b.features for b in blocks])
    vec_group = np.repeat(np.repeat(np.arange(len(group_sizes)), group_sizes),
                          [len(b) for b in blocks])
    return ids, lengths, feats, vec_group, vec_group[entry_vectors(lengths)]


def _keys(group, ids):
    """Keys that sort by group, then by id: ``S20`` (group as 4 big-endian
    bytes, then the 16 id bytes), or, for features as their places in the df
    table (uint32, in the ids' order), int64 (group, then place)."""
    if ids.dtype == np.uint32:
        return (group.astype(np.int64) << 32) | ids.astype(np.int64)
    out = np.empty((ids.shape[0], 20), np.uint8)
    out[:, :4] = group.astype(">u4").view(np.uint8).reshape(-1, 4)
    out[:, 4:] = np.frombuffer(ids.tobytes(), np.uint8).reshape(-1, 16)
    return out.view("S20").ravel()


class _Groups:
    """Buffered prefix features' groups as one block-diagonal CSR matrix:
    each group's vectors (sorted by id) over the group's own columns (its
    features in UUID order), so that no product crosses two groups and each
    pair's terms are added in the order of the group's own matrix -- the
    order of the blocks strategy.  Each row's prefix features before its
    group's key, numbered apart from the columns (:attr:`earlier_ptr`,
    :attr:`earlier_cols`, :attr:`n_earlier`)."""

    def __init__(self, groups):
        import scipy.sparse as sp  # here: the tasks of other steps need not load it
        v = [[r for r in g if not r.side] for g, _ in groups]
        e = [[r for r in g if r.side] for g, _ in groups]
        self.count = len(groups)
        blocks = [b for bs in v for b in bs]
        ids, lengths, feats, vgroup, fgroup = _stacked(blocks, [len(bs) for bs in v])
        weights = np.concatenate([b.weights for b in blocks]).astype(np.float64, copy=False)
        stats = None if blocks[0].stats is None else np.concatenate([b.stats for b in blocks])
        columns, cols = np.unique(_keys(fgroup, feats), return_inverse=True)
        self.n_cols = columns.shape[0]
        row_keys = _keys(vgroup, ids)
        by_row = np.argsort(row_keys, kind="stable")
        self.ids = ids[by_row]
        self.raw = self.ids.tobytes()
        self.stats = None if stats is None else stats[by_row]
        rank = np.empty_like(by_row)
        rank[by_row] = np.arange(by_row.shape[0])
        order = np.lexsort((cols, rank[entry_vectors(lengths)]))
        indptr = np.concatenate(([0], np.cumsum(lengths[by_row])))
        m = sp.csr_matrix((weights[order], cols.reshape(-1)[order].astype(np.int32), indptr),
                          shape=(ids.shape[0], self.n_cols))
        m.has_sorted_indices = True
        self.matrix = m
        self._parts([split for _, split in groups], vgroup[by_row])
        self._earlier([b for bs in e for b in bs], [len(bs) for bs in e], row_keys[by_row])

    def _parts(self, splits, row_group):
        """Each row's part of a split feature (:attr:`part`), and whether its
        group joins two parts (:attr:`cross`: its pairs within one part are
        scored in that part's own group)."""
        n = row_group.shape[0]
        self.cross = np.zeros(n, bool)
        self.part = np.zeros(n, np.int64)
        for i, split in enumerate(splits):
            if split is None or split[1] == split[2]:
                continue
            at = np.flatnonzero(row_group == i)
            self.cross[at] = True
            self.part[at] = sub_blocks(self.ids[at], split[0])

    def _earlier(self, blocks, sizes, rows):
        """Each row's earlier prefix features, numbered (``n_earlier`` of them)
        and grouped by row."""
        n = rows.shape[0]
        if not blocks:
            self.earlier_ptr = np.zeros(n + 1, np.int64)
            self.earlier_cols = np.zeros(0, np.int64)
            self.n_earlier = 0
            return
        ids, lengths, feats, vgroup, fgroup = _stacked(blocks, sizes)
        row = np.searchsorted(rows, _keys(vgroup, ids))
        # numbered among themselves: a copy holds its vector from its own
        # feature on, so an earlier feature need not be a column of the group
        earlier, col = np.unique(_keys(fgroup, feats), return_inverse=True)
        col = col.reshape(-1)
        self.n_earlier = earlier.shape[0]
        order = np.lexsort((col, np.repeat(row, lengths)))
        self.earlier_cols = col[order].astype(np.int64)
        self.earlier_ptr = np.concatenate(([0], np.cumsum(np.bincount(
            row, lengths, n).astype(np.int64))))
