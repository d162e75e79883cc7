"""Posting lists from their fragments, and the df-cut.

A :class:`PostingAssembler` gives a reducer the whole posting list of a
feature from the fragments the mappers wrote (combined in a
:class:`~mrjobs.buffers.PostingBuffer`), or ``None`` when ``--max-df`` drops
it (counted in the group ``mrsparse df-cut``).  The inverted index job and
both strategies of the dot-products job use it.
"""
import numpy as np

from .counters import (DFCUT, DUPLICATE_VECTOR_POSTINGS, FEATURES_DROPPED, INPUT,
                       POSTINGS_DROPPED, PRODUCTS_DROPPED)
from .kernels import sort_sum

__all__ = ["PostingAssembler"]


class PostingAssembler:
    """The full posting lists of features, with the df-cut.

    Parameters
    ----------
    max_df : int or None
        Drop a feature held by more than ``max_df`` vectors (both families).
    counts : mrjobs.counters.Counters
        Where drops and merged duplicates are counted.
    pairs_of : callable
        ``pairs_of(n_corpus, n_queries)``: the partial products a posting
        list of that size yields (counted when it is dropped).
    """

    def __init__(self, max_df, counts, pairs_of):
        self.max_df = max_df
        self.counts = counts
        self.pairs_of = pairs_of

    def __call__(self, fragments):
        """The full posting list of one feature, or None if the df-cut drops it.

        Returns
        -------
        (corpus, queries) or None
            Each a tuple ``(ids, weights, stats)`` sorted by id, or None for a
            family without postings (queries is None outside ``--queries``
            mode).  Memory: at most ``max_df`` postings are kept; beyond that
            they are only counted.
        """
        parts = self._gather(fragments)
        if parts is None:
            return None
        return self._assemble(parts[0]), self._assemble(parts[1])

    def _gather(self, fragments):
        max_df = self.max_df
        parts = ([], [])
        df = [0, 0]
        for s in fragments:
            q = 1 if s.query else 0
            df[q] += len(s)
            if max_df is None or df[0] + df[1] <= max_df:
                parts[q].append(s)
            elif parts[0] or parts[1]:
                parts = ([], [])  # over the cut: free what was kept
        if max_df is not None and df[0] + df[1] > max_df:
            self.counts.add(DFCUT, FEATURES_DROPPED)
            self.counts.add(DFCUT, POSTINGS_DROPPED, df[0] + df[1])
            self.counts.add(DFCUT, PRODUCTS_DROPPED, self.pairs_of(df[0], df[1]))
            return None
        return parts

    def count_cut(self, df_corpus, df_queries):
        """Count the features a df-cut drops from their df alone (a strategy
        that never assembles their posting lists): the counts
        :meth:`__call__` makes for each of them.

        Parameters
        ----------
        df_corpus, df_queries : numpy.ndarray
            One entry per dropped feature: the vectors of each family that
            hold it (exact integers, of any numeric dtype).
        """
        corpus = [int(d) for d in df_corpus.tolist()]
        queries = [int(d) for d in df_queries.tolist()]
        if not corpus:
            return
        self.counts.add(DFCUT, FEATURES_DROPPED, len(corpus))
        self.counts.add(DFCUT, POSTINGS_DROPPED, sum(corpus) + sum(queries))
        self.counts.add(DFCUT, PRODUCTS_DROPPED, sum(map(self.pairs_of, corpus, queries)))

    def _assemble(self, chunks):
        if not chunks:
            return None
        if len(chunks) == 1 and (len(chunks[0]) == 1 or (
                chunks[0].ids[1:] > chunks[0].ids[:-1]).all()):
            # the common case on Zipfian data: a rare feature, one
            # fragment, already sorted by the mapper
            c = chunks[0]
            return c.ids, c.values, c.stats
        ids = np.concatenate([c.ids for c in chunks])
        w = np.concatenate([c.values for c in chunks])
        st = None if chunks[0].stats is None else np.concatenate([c.stats for c in chunks])
        ids, w, st, merged = sort_sum(ids, w, st)
        if merged:
            self.counts.add(INPUT, DUPLICATE_VECTOR_POSTINGS, merged)
        return ids, w, st
