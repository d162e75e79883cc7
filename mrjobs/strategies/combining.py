"""Bounded in-task combining buffers of the jobs (the blocks strategy's own,
:class:`~mrjobs.strategies.scheme.BlockBuffer`, is with the blocking scheme).

Each buffer takes whole records, holds at most ``limit`` entries (plus the
record that crossed the limit) and, when flushed, yields ``(key, value)``
pairs grouped by their destination key, so that a task writes one record per
key per flush instead of one per entry.  Nothing here loops over entries in
Python.
"""
import numpy as np

from mrcodecs import ID_DTYPE
from mrcodecs.jobwire import Stripe

from mrjobs.counters import STRIPE_ENTRIES_COMBINED, STRIPE_ENTRIES_EMITTED, WORK
from mrjobs.pairs.idarrays import group_starts, sort_sum, top_k_groups

__all__ = ["PostingBuffer", "StripeBuffer", "RegroupBuffer", "FeatureCounts"]


class PostingBuffer:
    """Combining of postings: vectors in, one posting fragment per feature out
    (feature id -> documents, weights, per-document statistics).

    It transposes, so it also turns posting lists (feature -> documents)
    back into fragments of vectors (document -> features): the dot-products
    job's ``--input-format postings``.  With ``unique`` every fragment it
    yields holds each id once: an entry that repeats one before it (the
    same document in two lines of a feature) goes out in a fragment of its
    own, for the reducer to sum in its canonical order whatever the split.
    """

    def __init__(self, limit, dtype, query=False, unique=False):
        self.limit = limit
        self.dtype = dtype
        self.query = query
        self.unique = unique
        self.clear()

    def clear(self):
        self.feats, self.weights, self.docs, self.counts, self.stats = [], [], [], [], []
        self.n = 0

    def add(self, doc, ids, weights, stat):
        """Add one vector; True when the buffer should be flushed."""
        self.feats.append(ids)
        self.weights.append(weights)
        self.docs.append(doc)
        self.counts.append(ids.shape[0])
        self.stats.append(stat)
        self.n += ids.shape[0]
        return self.n >= self.limit

    def flush(self):
        if not self.n:
            self.clear()
            return
        feats = np.concatenate(self.feats)
        weights = np.concatenate(self.weights).astype(self.dtype, copy=False)
        rep = np.repeat(np.arange(len(self.docs)), self.counts)
        docs = np.frombuffer(b"".join(self.docs), ID_DTYPE)[rep]
        stats = None if self.stats[0] is None else np.array(self.stats, np.float64)[rep]
        self.clear()
        # by feature, then document: fragments arrive sorted at the reducer
        order = np.argsort(docs, kind="stable")
        order = order[np.argsort(feats[order], kind="stable")]
        feats, weights, docs = feats[order], weights[order], docs[order]
        if stats is not None:
            stats = stats[order]
        if self.unique and feats.shape[0] > 1:
            again = np.append(False, (feats[1:] == feats[:-1]) & (docs[1:] == docs[:-1]))
            if again.any():
                for j in np.flatnonzero(again).tolist():
                    yield feats[j:j + 1].tobytes(), Stripe(
                        docs[j:j + 1], weights[j:j + 1],
                        None if stats is None else stats[j:j + 1], None, self.query)
                keep = ~again
                feats, weights, docs = feats[keep], weights[keep], docs[keep]
                if stats is not None:
                    stats = stats[keep]
        starts = group_starts(feats)
        ends = np.append(starts[1:], feats.shape[0]).tolist()
        raw = feats.tobytes()
        query = self.query
        for s, e in zip(starts.tolist(), ends):
            yield raw[16 * s:16 * s + 16], Stripe(
                docs[s:e], weights[s:e], None if stats is None else stats[s:e], None, query)


class StripeBuffer:
    """Combining of stripes by document (stripes strategy, step-2 reducers).

    Stripes for the same document from different posting lists are summed
    when the buffer is flushed, which happens once it holds ``limit``
    entries: memory is at most ``limit`` entries plus one posting list.
    """

    def __init__(self, limit, dtype):
        self.limit = limit
        self.dtype = dtype
        self.parts = {}
        self.n = 0

    def add(self, doc, self_stat, ids, values, stats):
        entry = self.parts.get(doc)
        if entry is None:
            self.parts[doc] = [self_stat, [(ids, values, stats)]]
        else:
            entry[1].append((ids, values, stats))
        self.n += ids.shape[0]
        return self.n >= self.limit

    def flush(self, counts):
        # partial sums of finite products may overflow (to +-inf, or beyond
        # float32 when cast): such a pair's score is not a finite number,
        # counted and dropped when it is scored
        with np.errstate(over="ignore", invalid="ignore"):
            out = list(self._flush(counts))
        yield from out

    def _flush(self, counts):
        parts, self.parts, self.n = self.parts, {}, 0
        emitted = merged = 0
        dtype = self.dtype
        for doc, (self_stat, chunks) in parts.items():
            if len(chunks) == 1:
                ids, values, stats = chunks[0]
            else:
                ids, values, stats, m = sort_sum(
                    np.concatenate([c[0] for c in chunks]),
                    np.concatenate([c[1] for c in chunks]),
                    None if chunks[0][2] is None else np.concatenate([c[2] for c in chunks]))
                merged += m
            emitted += ids.shape[0]
            yield doc, Stripe(ids, values.astype(dtype, copy=False), stats, self_stat)
        counts.add(WORK, STRIPE_ENTRIES_EMITTED, emitted)
        counts.add(WORK, STRIPE_ENTRIES_COMBINED, merged)


class RegroupBuffer:
    """Regrouping of entries by their *other* id.

    Holds ``(to, from, value)`` triples (and optionally one statistic per
    ``to``, and one per triple); a flush sorts them by ``to`` and emits one
    stripe per target: ``to -> Stripe(froms, values, stats=the triples'
    statistics, self_stat=stat of to, query)``.  With ``k``, each stripe keeps
    only its ``k`` best values (ties by smaller id).
    """

    def __init__(self, limit, dtype, k=None, query=False):
        self.limit = limit
        self.dtype = dtype
        self.k = k
        self.query = query
        self.clear()

    def clear(self):
        self.to, self.frm, self.values, self.counts, self.stats = [], [], [], [], []
        self.entry_stats = []
        self.n = 0

    def add(self, frm, to, values, to_stats=None, entry_stats=None):
        self.to.append(to)
        self.frm.append(frm)
        self.values.append(values)
        self.counts.append(to.shape[0])
        self.stats.append(to_stats)
        self.entry_stats.append(entry_stats)
        self.n += to.shape[0]
        return self.n >= self.limit

    def flush(self):
        if not self.n:
            self.clear()
            return
        to = np.concatenate(self.to)
        values = np.concatenate(self.values).astype(self.dtype, copy=False)
        frm = np.frombuffer(b"".join(self.frm), to.dtype)[
            np.repeat(np.arange(len(self.frm)), self.counts)]
        stats = None if self.stats[0] is None else np.concatenate(self.stats)
        entry = (None if self.entry_stats[0] is None
                 else np.concatenate(self.entry_stats).astype(np.float64, copy=False))
        self.clear()
        if self.k is not None:
            order = top_k_groups(to, frm, values, self.k)
        else:
            order = np.lexsort((frm, to))
        to, frm, values = to[order], frm[order], values[order]
        if stats is not None:
            stats = stats[order]
        if entry is not None:
            entry = entry[order]
        starts = group_starts(to)
        ends = np.append(starts[1:], to.shape[0]).tolist()
        raw = to.tobytes()
        query = self.query
        for s, e in zip(starts.tolist(), ends):
            yield raw[16 * s:16 * s + 16], Stripe(
                frm[s:e], values[s:e], None if entry is None else entry[s:e],
                None if stats is None else float(stats[s]), query)


#: counts up to which float32 carries them exactly (its 24-bit significand)
_F32_EXACT = 1 << 24


class FeatureCounts:
    """Per-feature document counts of the vectors one task sees, per family
    (corpus, ``--queries``): the task's share of each feature's df.

    Ids are added vector by vector and folded into the table once ``limit``
    are pending, so memory is the table (one entry per distinct feature)
    plus at most ``limit`` ids.  :meth:`tables` gives each family's table
    as a :class:`~mrcodecs.jobwire.Stripe` record: the features in id order,
    their counts as values (float32 when every count is below 2**24, else
    float64: exact either way) and the family's query flag.

    Examples
    --------
    >>> import numpy as np
    >>> c = FeatureCounts(limit=10)
    >>> c.add(False, np.array([b"a", b"b"], "S16"))
    >>> c.add(False, np.array([b"b"], "S16"))
    >>> [(t.ids.tolist(), t.values.tolist(), t.query) for t in c.tables()]
    [([b'a', b'b'], [1.0, 2.0], False)]
    """

    def __init__(self, limit):
        self.limit = limit
        self.table = [(np.empty(0, ID_DTYPE), np.empty(0, np.float64)) for _ in (0, 1)]
        self.pending = ([], [])
        self.n = [0, 0]

    def add(self, query, ids):
        """Count the features ``ids`` (unique) of one vector of a family."""
        q = 1 if query else 0
        self.pending[q].append(ids)
        self.n[q] += ids.shape[0]
        if self.n[q] >= self.limit:
            self._fold(q)

    def _fold(self, q):
        if not self.n[q]:
            return
        feats, counts = self.table[q]
        ids = np.concatenate([feats] + self.pending[q])
        ones = np.ones(ids.shape[0] - feats.shape[0], np.float64)
        ids, counts, _, _ = sort_sum(ids, np.concatenate((counts, ones)))
        self.table[q] = (ids, counts)
        self.pending[q].clear()
        self.n[q] = 0

    def over(self, limit):
        """The features counted more than ``limit`` times over both families
        (sorted ids)."""
        for q in (0, 1):
            self._fold(q)
        (f0, c0), (f1, c1) = self.table
        if f1.shape[0]:
            f0, c0, _, _ = sort_sum(np.concatenate((f0, f1)), np.concatenate((c0, c1)))
        return f0[c0 > limit]

    def tables(self):
        """The count table of each family that has one (corpus first)."""
        for q in (0, 1):
            self._fold(q)
            feats, counts = self.table[q]
            if feats.shape[0]:
                exact32 = counts.max() < _F32_EXACT
                yield Stripe(feats, counts.astype(np.float32) if exact32 else counts,
                             query=bool(q))
