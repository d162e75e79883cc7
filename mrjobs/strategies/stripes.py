"""The stripes strategy of :class:`~mrjobs.dot_products.MRSparseDotProducts`.

After the vectors step (which merges each vector's lines and prepares its
weights), every partial product travels on the wire:

1. *stripes*.  The reducer of a feature assembles its posting list ``D``
   (sorted by id), applies the df-cut, and emits for each document ``D[p]``
   the stripe ``D[p]`` -> ``{D[q]: w[p] w[q], q > p}``: one numpy product per
   document over the rest of the list, so every pair's product is computed
   once (the upper triangle; ``--include-self`` adds ``q = p``).  Stripes are
   combined per document in a bounded buffer before they are written.
2. *sum*.  The reducer of a document sums its stripes with numpy, turns the
   dot products into scores (:mod:`mrjobs.measures`), applies ``--threshold``
   and emits the row (neighbours with larger ids) and, for the mirror half,
   each score to the other document, combined in a bounded buffer; with
   ``--top-k K`` the row and each mirror group are cut to their K best first.
   With ``--queries`` the rows are complete here and the last step only
   orders them.

Σdf²/2 partial products cross the wire, so this strategy suits corpora whose
features are rare (or cut with ``--max-df``): see docs/internals/benchmarks.md
for where each strategy wins.

Memory: a stripes reducer holds one posting list (at most ``--max-df``
entries) plus ``--buffer-entries``; a sum reducer never holds all partial
stripes of a vector -- whenever the unmerged stripes exceed the buffer size
(or twice the merged size) they are summed into one sorted array.
"""
import numpy as np

from mrcodecs.jobwire import Stripe

from mrjobs.strategies.combining import PostingBuffer, RegroupBuffer, StripeBuffer
from mrjobs.counters import PARTIAL_PRODUCTS, WORK
from mrjobs.pairs.idarrays import sort_sum, top_k_order
from mrjobs.strategies.contract import Step

__all__ = ["StripesStrategy"]


class StripesStrategy:
    """Steps of the stripes strategy (see :class:`mrjobs.strategies.contract.Strategy`)."""

    name = "stripes"
    writes_rows = False  # its sums are partial rows: the rows step merges them

    def __init__(self, context):
        self.ctx = context

    def steps(self):
        return [
            Step(self.reducer_stripes, self.reducer_stripes_init, self.reducer_stripes_final),
            Step(self.reducer_sum, self.reducer_sum_init, self.reducer_sum_final),
        ]

    # -- fed by the vectors step ---------------------------------------------

    def take_init(self):
        ctx = self.ctx
        self._post = [PostingBuffer(ctx.buffer_entries, ctx.wire_dtype, query=False),
                      PostingBuffer(ctx.buffer_entries, ctx.wire_dtype, query=True)]

    def take(self, doc, query, ids, weights, stat):
        buf = self._post[1 if query else 0]
        if buf.add(doc, ids, weights, stat):
            yield from buf.flush()

    def take_final(self):
        for buf in self._post:
            yield from buf.flush()

    # -- step: stripes ---------------------------------------------------------

    def reducer_stripes_init(self):
        self._stripes = StripeBuffer(self.ctx.buffer_entries, self.ctx.wire_dtype)

    def reducer_stripes(self, feature, fragments):
        # products of finite weights may overflow to +-inf: such a pair's score
        # is not a finite number, counted and dropped when it is scored
        with np.errstate(over="ignore"):
            yield from self._stripes_of(feature, fragments)

    def _stripes_of(self, feature, fragments):
        postings = self.ctx.postings(fragments)
        if postings is None:
            return
        corpus, queries = postings
        if self.ctx.queries:
            if corpus is not None and queries is not None:
                yield from self._query_stripes(corpus, queries)
        elif corpus is not None:
            yield from self._self_stripes(corpus)

    def _query_stripes(self, corpus, queries):
        """Each query's products with every corpus vector of the posting list."""
        buf, counts = self._stripes, self.ctx.counts
        cids, cw, cstats = corpus
        qids, qw, qstats = queries
        raw = qids.tobytes()
        products = 0
        for p in range(qids.shape[0]):
            products += cids.shape[0]
            if buf.add(raw[16 * p:16 * p + 16],
                       None if qstats is None else float(qstats[p]),
                       cids, cw * qw[p], cstats):
                yield from buf.flush(counts)
        counts.add(WORK, PARTIAL_PRODUCTS, products)

    def _self_stripes(self, corpus):
        """Each vector's products with the vectors after it in the posting list."""
        buf, counts = self._stripes, self.ctx.counts
        ids, w, stats = corpus
        w = w.astype(np.float64, copy=False)
        n = ids.shape[0]
        raw = ids.tobytes()
        skip = 0 if self.ctx.include_self else 1
        products = 0
        for p in range(n - skip):
            lo = p + skip
            products += n - lo
            if buf.add(raw[16 * p:16 * p + 16],
                       None if stats is None else float(stats[p]),
                       ids[lo:], w[lo:] * w[p], None if stats is None else stats[lo:]):
                yield from buf.flush(counts)
        counts.add(WORK, PARTIAL_PRODUCTS, products)

    def reducer_stripes_final(self):
        yield from self._stripes.flush(self.ctx.counts)

    # -- step: sum -------------------------------------------------------------

    def reducer_sum_init(self):
        self._mirror = RegroupBuffer(self.ctx.buffer_entries, self.ctx.wire_dtype,
                                     self.ctx.top_k)

    @staticmethod
    def _merge(chunks):
        with np.errstate(over="ignore", invalid="ignore"):  # inf + -inf: not finite, counted
            return StripesStrategy._merge_sums(chunks)

    @staticmethod
    def _merge_sums(chunks):
        if len(chunks) == 1:
            ids, values, stats = chunks[0]
            return ids, values.astype(np.float64, copy=False), stats
        ids, values, stats, _ = sort_sum(
            np.concatenate([c[0] for c in chunks]),
            np.concatenate([c[1] for c in chunks]),
            None if chunks[0][2] is None else np.concatenate([c[2] for c in chunks]))
        return ids, values, stats

    def _summed(self, stripes):
        """``(ids, dots, stats, self_stat)`` of a vector's partial stripes
        summed, or None without stripes."""
        limit = self.ctx.buffer_entries
        chunks = []
        pending = 0
        merged_size = 0
        self_stat = None
        for s in stripes:
            if s.self_stat is not None:
                self_stat = s.self_stat
            chunks.append((s.ids, s.values, s.stats))
            pending += len(s)
            # Sum early so that a popular vector's partial stripes are never
            # all in memory at once; the doubling keeps the re-merging linear.
            if pending > max(limit, 2 * merged_size) and len(chunks) > 1:
                chunks = [self._merge(chunks)]
                merged_size = pending = chunks[0][0].shape[0]
        if not chunks:
            return None
        return self._merge(chunks) + (self_stat,)

    def reducer_sum(self, doc, stripes):
        ctx = self.ctx
        summed = self._summed(stripes)
        if summed is None:
            return
        ids, dots, stats, self_stat = summed
        if ctx.queries:
            # a query is never its own neighbour, even when the corpus holds its id
            others = ids != doc
            if not others.all():
                ids, dots = ids[others], dots[others]
                stats = None if stats is None else stats[others]
        scores = ctx.scorer.score(dots, self_stat, stats)
        keep = ctx.scorer.keep(scores)
        if keep is not None:
            ids, scores = ids[keep], scores[keep]
        if not ids.shape[0]:
            return
        if ctx.queries:
            order = top_k_order(ids, scores, ctx.top_k)
            yield doc, Stripe(ids[order], scores[order])
            return
        # the row: neighbours with larger ids (and doc itself with --include-self)
        row_ids, row_scores = ids, scores
        if ctx.top_k is not None and ids.shape[0] > ctx.top_k:
            order = top_k_order(ids, scores, ctx.top_k)
            row_ids, row_scores = ids[order], scores[order]
        yield doc, Stripe(row_ids, row_scores.astype(ctx.wire_dtype, copy=False))
        others = ids != doc
        if ctx.include_self and not others.all():
            ids, scores = ids[others], scores[others]
        if ids.shape[0] and self._mirror.add(doc, ids, scores):
            yield from self._mirror.flush()

    def reducer_sum_final(self):
        if not self.ctx.queries:
            yield from self._mirror.flush()
