"""The index step and the df-cut: vectors in, one posting list per feature.

:class:`IndexSteps` is mixed into a :class:`~mrjobs.base.SparseJob`: its
mapper reads input lines and emits posting fragments (combined in a
:class:`~mrjobs.buffers.PostingBuffer`); :meth:`IndexSteps.assemble_postings`
gives a reducer the whole posting list of a feature, or ``None`` when
``--max-df`` drops it (counted in the group ``mrsparse df-cut``).
"""
import numpy as np

from .buffers import PostingBuffer
from .counters import DFCUT, INPUT
from .kernels import sort_sum

__all__ = ["IndexSteps"]


class IndexSteps:
    """Mapper of the index and assembly of posting lists (a mixin)."""

    def prepare_vector(self, weights):
        """Weights to index and the vector's statistic (None: no statistic)."""
        return weights, None

    def is_query_input(self):
        """True if this map task reads query vectors (see the dot products job)."""
        return False

    def mapper_index_init(self):
        self._task_init()
        self._postings = PostingBuffer(self.options.buffer_entries, self.wire_dtype,
                                       self.is_query_input())

    def mapper_index(self, _, line):
        vec = self.read_vector(line)
        if vec is None:
            return
        doc, ids, w = vec
        w, stat = self.prepare_vector(w)
        if self._postings.add(doc, ids, w, stat):
            yield from self._postings.flush()

    def mapper_index_final(self):
        yield from self._postings.flush()
        self._task_final()

    def assemble_postings(self, feature, fragments):
        """The full posting list of one feature, or None if the df-cut drops it.

        Returns
        -------
        (corpus, queries) or None
            Each a tuple ``(ids, weights, stats)`` sorted by id (queries is
            None outside ``--queries`` mode).  Memory: at most ``max_df``
            postings are kept; beyond that they are only counted.
        """
        max_df = self.options.max_df
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
            self.counts.add(DFCUT, "features dropped")
            self.counts.add(DFCUT, "postings dropped", df[0] + df[1])
            self.counts.add(DFCUT, "partial products dropped", self.pairs_of(df[0], df[1]))
            return None
        out = []
        for chunks in parts:
            if not chunks:
                out.append(None)
                continue
            if len(chunks) == 1 and (len(chunks[0]) == 1 or (
                    chunks[0].ids[1:] > chunks[0].ids[:-1]).all()):
                # the common case on Zipfian data: a rare feature, one
                # fragment, already sorted by the mapper
                c = chunks[0]
                out.append((c.ids, c.values, c.stats))
                continue
            ids = np.concatenate([c.ids for c in chunks])
            w = np.concatenate([c.values for c in chunks])
            st = None if chunks[0].stats is None else np.concatenate([c.stats for c in chunks])
            ids, w, st, merged = sort_sum(ids, w, st)
            if merged:
                self.counts.add(INPUT, "duplicate vector id (weights summed)", merged)
            out.append((ids, w, st))
        return out[0], out[1]

    def pairs_of(self, n_corpus, n_queries):
        """Partial products a posting list of this size yields."""
        return n_corpus * (n_corpus - 1) // 2
