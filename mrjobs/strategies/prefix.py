"""The prefix strategy of :class:`~mrjobs.dot_products.MRSparseDotProducts`:
an exact threshold join whose shuffle follows the input and the answer.

Under ``--threshold``, a vector is sent only to the reducers of its *prefix*
features, the rarest features it holds, up to where the rest of it can no
longer reach the threshold with any vector (prefix filtering: Bayardo et al.,
"Scaling up all pairs similarity search", 2007; on MapReduce, Vernica, Carey
and Li, SIGMOD 2010).  The order, the bound and the proof that every pair
that reaches the threshold is scored exactly once are in
:mod:`mrjobs.strategies.prefixing`.  Steps, after the vectors step:

``df``
    The reducer of a feature assembles its posting list (with the
    ``--max-df`` cut, as the stripes strategy does) and sends each of its
    vectors the entry back with the feature's df (a per-entry statistic of a
    :class:`~mrcodecs.jobwire.Stripe` record).
``prefix``
    The reducer of a vector gathers its entries, puts them in the global
    order ``(df, UUID)``, finds its prefix and sends the whole vector to each
    of its prefix features (:class:`~mrjobs.strategies.prefixing.PrefixBuffer`:
    :class:`~mrcodecs.jobwire.Block` records keyed by the feature).
``pairs``
    The reducer of a feature gets every vector whose prefix holds it, puts
    each vector's entries back in UUID order and hands them to the pair
    kernel as one diagonal block (:func:`mrjobs.pairs.kernel.pair_best`: the
    same products, scores, ``--threshold`` and ``--top-k`` as the blocks
    strategy's).  Of the pairs kept it drops those whose vectors share a
    prefix feature before this one (scored there), and emits each vector's
    partial row.
``rows``
    As for the other strategies: each vector's partial rows merged, its
    ``--top-k`` best written.  Each vector's top-k among the pairs of one
    reducer, before the drop, is made of pairs that exist, so what the drop
    removes never hides a pair of the global top-k.

Output: the same lines as the blocks strategy, byte for byte (each pair's dot
product is added in UUID order of the features, over both whole vectors).
Cost: the shuffle is the input about three times (vectors, postings, entries
with their df) plus each vector times its prefix length, plus the answer;
the pair reducers' work is the pairs that share a prefix feature, not all
pairs.  The measures: :data:`~mrjobs.strategies.prefixing.SUPPORTED`; a
self-join (``--queries`` is not taken).
"""
import numpy as np

from mrcodecs.jobwire import Stripe

from mrjobs.counters import (PREFIX_ENTRIES_SENT, PREFIX_GROUPS, PREFIX_PAIRS_DROPPED,
                             PRODUCTS_COMPUTED, WORK)
from mrjobs.pairs.idarrays import group_starts
from mrjobs.pairs.kernel import PairSpec, pair_best
from mrjobs.strategies.blocks import feature_columns
from mrjobs.strategies.combining import PostingBuffer, RegroupBuffer
from mrjobs.strategies.contract import Step, by_family
from mrjobs.strategies.prefixing import PrefixBuffer, entry_vectors, shared_earlier

__all__ = ["PrefixStrategy"]


class PrefixStrategy:
    """Steps of the prefix strategy (see :class:`mrjobs.strategies.contract.Strategy`)."""

    name = "prefix"
    writes_rows = False  # partial rows: the rows step merges them

    def __init__(self, context):
        self.ctx = context

    def steps(self):
        return [Step(self.reducer_df, self.reducer_df_init, self.reducer_df_final),
                Step(self.reducer_prefix, self.reducer_prefix_init, self.reducer_prefix_final),
                Step(self.reducer_pairs)]

    # -- fed by the vectors step: postings to the df step -------------------

    def take_init(self):
        self._post = PostingBuffer(self.ctx.buffer_entries, self.ctx.wire_dtype)

    def take(self, doc, query, ids, weights, stat):
        if self._post.add(doc, ids, weights, stat):
            yield from self._post.flush()

    def take_final(self):
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

    def reducer_prefix_init(self):
        ctx = self.ctx
        self._prefixes = PrefixBuffer(ctx.buffer_entries, ctx.wire_dtype, ctx.scorer.measure,
                                      ctx.scorer.threshold, ctx.include_self)

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
        sent = yield from self._prefixes.flush()
        self.ctx.counts.add(WORK, PREFIX_ENTRIES_SENT, sent)

    # -- pairs: the vectors of one prefix feature -----------------------------

    def reducer_pairs(self, feature, records):
        ctx = self.ctx
        records = list(records)
        if sum(len(r) for r in records if not r.side) < (1 if ctx.include_self else 2):
            return  # (a feature in one vector's prefix: no pair here)
        g = _Group(records)
        spec = PairSpec(ctx.top_k, ctx.buffer_entries, diagonal=True,
                        include_self=ctx.include_self, mirror=True,
                        prune="auto" if ctx.prune else "never", merge=True, threads=ctx.threads)
        results = pair_best(g.matrix, g.matrix, ctx.scorer, spec, stats_a=g.stats,
                            stats_c=g.stats)
        dropped = 0
        while True:
            try:
                _, groups, others, scores = next(results)
            except StopIteration as done:
                work = done.value
                break
            earlier = shared_earlier(groups, others, g.earlier_ptr, g.earlier_cols, g.n_cols)
            if earlier.any():
                dropped += int(earlier.sum())
                keep = ~earlier
                groups, others, scores = groups[keep], others[keep], scores[keep]
            yield from self._emit(groups, others, scores, g)
        for name, n in ((PREFIX_GROUPS, 1), (PRODUCTS_COMPUTED, work.products),
                        (PREFIX_PAIRS_DROPPED, dropped)):
            ctx.counts.add(WORK, name, n)

    def _emit(self, groups, others, scores, g):
        """One partial row per group (entries arrive grouped)."""
        if not groups.shape[0]:
            return
        scores = scores.astype(self.ctx.wire_dtype, copy=False)
        starts = group_starts(groups)
        ends = np.append(starts[1:], groups.shape[0]).tolist()
        ids = g.ids[others]
        raw = g.raw
        for s, e, v in zip(starts.tolist(), ends, groups[starts].tolist()):
            yield raw[16 * v:16 * v + 16], Stripe(ids[s:e], scores[s:e])


class _Group:
    """The vectors of one prefix feature's reducer, sorted by id, as a CSR
    matrix over the group's features in UUID order; each vector's prefix
    features before the key as columns (:attr:`earlier_ptr`,
    :attr:`earlier_cols`)."""

    def __init__(self, records):
        import scipy.sparse as sp  # here: the tasks of other steps need not load it
        sides = ([], [])
        for r in records:
            sides[r.side].append(r)
        v, e = sides
        ids = np.concatenate([b.ids for b in v])
        lengths = np.concatenate([b.lengths for b in v]).astype(np.int64)
        feats = np.concatenate([b.features for b in v])
        weights = np.concatenate([b.weights for b in v]).astype(np.float64, copy=False)
        stats = None if v[0].stats is None else np.concatenate([b.stats for b in v])
        e_ids = np.concatenate([b.ids for b in e]) if e else ids[:0]
        e_lengths = (np.concatenate([b.lengths for b in e]).astype(np.int64) if e
                     else lengths[:0])
        e_feats = np.concatenate([b.features for b in e]) if e else feats[:0]
        self.n_cols, cols, e_cols = feature_columns(feats, e_feats)
        by_id = np.argsort(ids, kind="stable")
        self.ids = ids[by_id]
        self.raw = self.ids.tobytes()
        self.stats = None if stats is None else stats[by_id]
        # each vector's earlier prefix features, grouped by the vector's rank
        e_rank = np.searchsorted(self.ids, e_ids)
        e_order = np.lexsort((e_cols, np.repeat(e_rank, e_lengths)))
        self.earlier_cols = e_cols[e_order].astype(np.int64)
        self.earlier_ptr = np.concatenate(([0], np.cumsum(np.bincount(
            e_rank, e_lengths, self.ids.shape[0]).astype(np.int64))))
        # vectors by id, each one's entries by column (UUID order)
        rank = np.empty_like(by_id)
        rank[by_id] = np.arange(by_id.shape[0])
        order = np.lexsort((cols, rank[entry_vectors(lengths)]))
        indptr = np.concatenate(([0], np.cumsum(lengths[by_id])))
        m = sp.csr_matrix((weights[order], cols[order].astype(np.int32), indptr),
                          shape=(ids.shape[0], self.n_cols))
        m.has_sorted_indices = True
        self.matrix = m
