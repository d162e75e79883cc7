"""Posting lists from their fragments, and the df-cut.

A :class:`PostingAssembler` gives a reducer the whole posting list of a
feature from the fragments the mappers wrote (combined in a
:class:`~mrjobs.strategies.combining.PostingBuffer`), or ``None`` when ``--max-df`` drops
it (counted in the group ``mrsparse df-cut``).  The inverted index job and
both strategies of the dot-products job use it.

Postings of one vector id in one posting list (duplicate input lines, in the
inverted index job) are one posting, their weights summed as the dot-products
job merges the lines of a vector (:func:`~mrjobs.pairs.idarrays.merge_sum`): a sum
of 0 is dropped and counted as a zero weight, a sum beyond the range of the
weights is dropped and counted as bad input (``--strict``: refused, naming
the vector and the feature).
"""
import uuid

import numpy as np

from mrjobs.counters import (DFCUT, DUPLICATE_VECTOR_POSTINGS, FEATURES_DROPPED, INPUT,
                       POSTINGS_DROPPED, PRODUCTS_DROPPED, ZERO_WEIGHT)
from mrjobs.pairs.idarrays import merge_sum
from mrjobs.parsing import BAD_SUM, FLOAT32_MAX, InputError, weight_limit

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
    limit : float
        The largest weight magnitude (float32's under ``--float32``): a sum
        of a vector's postings beyond it is bad input.
    strict : bool
        Raise :class:`~mrjobs.parsing.InputError` for such a sum instead of
        counting it (``--strict``).
    """

    def __init__(self, max_df, counts, pairs_of, limit=weight_limit(False), strict=False):
        self.max_df = max_df
        self.counts = counts
        self.pairs_of = pairs_of
        self.limit = limit
        self.strict = strict

    def __call__(self, fragments, feature=None):
        """The full posting list of one feature, or None if the df-cut drops it.

        ``feature`` (its 16 UUID bytes) names it in the error of ``strict``.

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
        return self._assemble(parts[0], feature), self._assemble(parts[1], feature)

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

    def _assemble(self, chunks, feature):
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
        n = ids.shape[0]
        ids, w, st, sizes = merge_sum(ids, w, st)
        if ids.shape[0] < n:
            self.counts.add(INPUT, DUPLICATE_VECTOR_POSTINGS, n - ids.shape[0])
            keep = self._check_sums(ids, w, sizes, feature)
            if keep is not None:
                ids, w = ids[keep], w[keep]
                st = None if st is None else st[keep]
        return ids, w, st

    def _check_sums(self, ids, w, sizes, feature):
        """The postings to keep (None: all) after summing a vector's postings:
        sums beyond the range counted as bad input (or refused), sums of 0
        counted as zero weights."""
        over = ~(np.abs(w) <= self.limit)
        if over.any():
            i = int(np.argmax(over))
            if self.strict:
                raise InputError(BAD_SUM, "vector %s: the weights of feature %s, summed over "
                                 "its %d lines, go beyond %s's range" % (
                                     uuid.UUID(bytes=ids[i:i + 1].tobytes()),
                                     _name(feature),
                                     int(sizes[i]),
                                     "float32" if self.limit == FLOAT32_MAX else "float64"))
            self.counts.add(INPUT, BAD_SUM, int(sizes[over].sum()))
        zero = w == 0.0
        if zero.any():
            self.counts.add(INPUT, ZERO_WEIGHT, int(zero.sum()))
        drop = over | zero
        return ~drop if drop.any() else None


def _name(feature):
    """A feature key as a user reads it: its UUID."""
    if isinstance(feature, bytes) and len(feature) == 16:
        return uuid.UUID(bytes=feature)
    return "?" if feature is None else feature
