"""MRInvertedIndex: sparse vectors in, one posting list per feature out.

Usage::

    python -m mrjobs.inverted_index [mrjob options] [options] INPUT...

Each output line (``--output-format json``, the default) is a feature's UUID
and its posting list, the documents that hold the feature with their
weights::

    "<feature uuid>"\\t{"<doc uuid>": weight, ...}

``--output-format compact`` writes :class:`mrcodecs.VectorProtocol` records
(feature UUID -> SparseVector over document ids).  ``--ids any`` reads ids of
any kind and writes them back (:mod:`mrjobs.strategies.names`): the feature's
key, TAB, its ``[[<doc id>, weight], ...]``.  Input formats and the
counters of bad input are described in :mod:`mrjobs.parsing` and
:mod:`mrjobs.job`; posting lists and the df-cut in :mod:`mrjobs.strategies.postings`.

Memory: a mapper buffers at most ``--buffer-entries`` postings before it
flushes them grouped by feature; a reducer holds one posting list (at most
``--max-df`` entries when that is set).
"""
from mrjob.step import MRStep

from mrcodecs.jobwire import Stripe
from mrjobs.job import SparseJob
from mrjobs.options import add_ids_options, check_any_ids
from mrjobs.strategies.combining import PostingBuffer
from mrjobs.strategies.postings import PostingAssembler
from mrjobs.parsing import weight_limit
from mrjobs.strategies.names import IdsOfAnyKind, names_steps

__all__ = ["MRInvertedIndex"]


class MRInvertedIndex(IdsOfAnyKind, SparseJob):
    """Build one posting list per feature (feature -> {document: weight})."""

    def configure_args(self):
        super().configure_args()
        add_ids_options(self)

    def _check_options(self):
        super()._check_options()
        if self.options.ids == "any":
            check_any_ids(self.options, self.arg_parser.error)

    def steps(self):
        if self.options.names_of:  # --ids any's second run
            return names_steps(self, features=True)
        return [MRStep(mapper_init=self.mapper_index_init, mapper=self.mapper_index,
                       mapper_final=self.mapper_index_final,
                       reducer_init=self._task_init, reducer=self.reducer_postings,
                       reducer_final=self._task_final)]

    def mapper_index_init(self):
        self._task_init()
        self._postings = PostingBuffer(self.options.buffer_entries, self.wire_dtype)

    def mapper_index(self, _, line):
        vec = self.read_vector(line)
        if vec is None:
            return
        doc, ids, w = vec
        if self._postings.add(doc, ids, w, None):
            yield from self._postings.flush()

    def mapper_index_final(self):
        yield from self._postings.flush()
        self._task_final()

    def reducer_postings(self, feature, fragments):
        # the index computes no products: none are dropped with a feature
        postings = PostingAssembler(self.options.max_df, self.counts, lambda nc, nq: 0,
                                    weight_limit(self.options.float32), self.options.strict)(
            fragments, feature)
        if postings is not None:
            ids, w, _ = postings[0]
            yield feature, Stripe(ids, w)


if __name__ == "__main__":
    MRInvertedIndex.run()
