"""The scorer of the dot-products job: dot products in, the scores it keeps out.

A :class:`Scorer` holds what turns the dot products of pairs into kept
scores -- the measure (:mod:`mrjobs.measures`) with ``--num-features``, the
finite check (within float32's range under ``--float32``) and ``--threshold`` -- and the task's counters, where it counts
what it drops.  Both strategies and the pair kernel (:mod:`mrjobs.pairs.kernel`)
score through it; nothing here knows about mrjob.

Examples
--------
>>> import numpy as np
>>> from mrjobs.counters import Counters
>>> counts = Counters()
>>> scorer = Scorer("dot", counts, threshold=1.0)
>>> scores = scorer.score(np.array([0.5, 2.0]), None, None)
>>> scorer.keep(scores).tolist(), counts
([False, True], {('mrsparse work', 'pairs scored'): 2, ('mrsparse work', 'pairs below threshold'): 1})
"""
import numpy as np

from mrcodecs.jobwire import Stripe
from mrjobs import _c
from mrjobs.counters import (OUTPUT_LINES, PAIRS_BELOW_THRESHOLD, PAIRS_NOT_FINITE, PAIRS_SCORED,
                             WORK)
from mrjobs.measures import get as get_measure, score
from mrjobs.measures.scores import cosine, dot
from mrjobs.pairs.idarrays import group_starts, top_k_groups, top_k_order
from mrjobs.parsing import weight_limit

__all__ = ["Scorer", "merge_rows", "RowMerger", "output_rows", "partial_rows"]


class Scorer:
    """Scores of pairs under one measure, with the threshold and the finite check.

    Parameters
    ----------
    measure : str
        A name of :data:`mrjobs.measures.MEASURES`.
    counts : mrjobs.counters.Counters
        Where scored and dropped pairs are counted.
    threshold : float, optional
        Keep only scores ``>= threshold``.
    n_features : int, optional
        The corpus's number of distinct features (``loglikelihood``).
    float32 : bool
        Scores travel as float32 (``--float32``): a score beyond float32's
        range is not a finite number either.
    """

    def __init__(self, measure, counts, threshold=None, n_features=None, float32=False):
        self.measure = measure
        self.counts = counts
        self.threshold = threshold
        self.n_features = n_features
        self.float32 = float32

    def score(self, dots, stats_a, stats_b):
        """Scores of pairs from their dot products and the two vectors'
        statistics (see :func:`mrjobs.measures.score`); counted as scored."""
        try:
            scores = score(self.measure, dots, stats_a, stats_b, n_features=self.n_features)
        except ValueError as e:
            if self.n_features is not None:
                raise ValueError("%s (is --num-features %d the number of distinct features "
                                 "of the corpus?)" % (e, self.n_features)) from None
            raise
        self.counts.add(WORK, PAIRS_SCORED, scores.shape[0])
        return scores

    def fused(self):
        """What the C pair kernel needs to score and keep pairs itself
        (:func:`mrjobs.pairs.kernel.pair_best`): ``(kind, threshold, limit)``
        -- kind 0 for ``dot`` (the score is the sum), 1 for the measures whose
        score is the cosine of unit weights (``cosine``, ``pearson``); the
        threshold (``-inf``: none); the largest magnitude kept (``inf``: any
        finite score) -- or None for the other measures, which score here."""
        m = get_measure(self.measure)
        if m.combine is dot and m.lo == -np.inf and m.hi == np.inf and not m.counts:
            kind = 0
        elif m.combine is cosine and (m.lo, m.hi) == (-1.0, 1.0):
            kind = 1
        else:
            return None
        return (kind, -np.inf if self.threshold is None else float(self.threshold),
                weight_limit(True) if self.float32 else np.inf)

    def count_fused(self, scored, not_finite, below):
        """Count what the C pair kernel scored and dropped (see :meth:`fused`),
        as :meth:`score` and :meth:`keep` count it."""
        self.counts.add(WORK, PAIRS_SCORED, scored)
        if not_finite:
            self.counts.add(WORK, PAIRS_NOT_FINITE, not_finite)
        if below:
            self.counts.add(WORK, PAIRS_BELOW_THRESHOLD, below)

    def keep(self, scores):
        """Mask of the scores to keep (finite, ``>= threshold``), or None to
        keep all; what is dropped is counted."""
        if self.float32:
            keep = np.abs(scores) <= weight_limit(True)
        else:
            keep = np.isfinite(scores)
        if not keep.all():
            self.counts.add(WORK, PAIRS_NOT_FINITE, int((~keep).sum()))
        else:
            keep = None
        t = self.threshold
        if t is not None:
            above = scores >= t
            if not above.all():
                self.counts.add(WORK, PAIRS_BELOW_THRESHOLD,
                                int((~above).sum() if keep is None else (~above & keep).sum()))
                keep = above if keep is None else keep & above
        return keep


def merge_rows(pieces, k, limit):
    """One vector's row from its pieces (:class:`~mrcodecs.jobwire.Stripe` s of
    neighbour ids and scores): its ``k`` best (all with ``k`` None), merged as
    they come when more than ``max(limit, 2k)`` are held; None for no pieces.

    >>> from mrcodecs.jobwire import Stripe
    >>> ids = np.array([b"b" * 16, b"a" * 16], "S16")
    >>> row = merge_rows([Stripe(ids, np.array([1.0, 2.0]))], 1, 10)
    >>> row.ids.tolist(), row.values.tolist()
    ([b'aaaaaaaaaaaaaaaa'], [2.0])
    """
    gathered = _gather(pieces, k, limit)
    if gathered is None:
        return None
    ids, sc = gathered
    order = top_k_order(ids, sc, k)
    return Stripe(ids[order], sc[order])


def _gather(pieces, k, limit):
    """A vector's pieces concatenated, ``(ids, float64 scores)``, cut to their
    ``k`` best whenever more than ``max(limit, 2k)`` are held; None for none."""
    ids_l, sc_l = [], []
    pending = 0
    for s in pieces:
        ids_l.append(s.ids)
        sc_l.append(s.values.astype(np.float64, copy=False))
        pending += len(s)
        if k is not None and pending > max(limit, 2 * k) and len(ids_l) > 1:
            ids, sc = np.concatenate(ids_l), np.concatenate(sc_l)
            order = top_k_order(ids, sc, k)
            ids_l, sc_l = [ids[order]], [sc[order]]
            pending = order.shape[0]
    if not ids_l:
        return None
    if len(ids_l) == 1:
        return ids_l[0], sc_l[0]
    return np.concatenate(ids_l), np.concatenate(sc_l)


#: the smallest --top-k whose rows the C kernels merge one at a time: a
#: rows-step task of 10,000 vectors of the 20,000-vector Zipf corpus took
#: 10% more CPU at --top-k 10 that way than in numpy batches, 10-20% less at
#: 30 and 100, 20% less at 1000
C_MERGE_K = 20


class RowMerger:
    """:func:`merge_rows` for many vectors at once: the rows step's reducer
    hands it each vector's pieces (:meth:`add`, in key order) and gets the
    rows back, in the same order, a batch at a time -- each batch of at least
    ``limit`` entries ordered by one :func:`~mrjobs.pairs.idarrays.top_k_groups`
    call, where a vector at a time cost a few numpy calls each (most of the
    rows step's CPU time at ``--top-k 10``).  With ``--top-k`` of at least
    :data:`C_MERGE_K` and the C kernels, a vector's row comes back at once
    instead, merged by one C call (``merge_top_k``: its pieces' k best,
    without gathering them in numpy); a row with a NaN score waits for a
    batch.  The same rows as :func:`merge_rows`, in the same order, either
    way.  ``repeats``: a neighbour may come more than once (the prefix
    strategy's pairs met again, :func:`mrjobs.strategies.prefixing.repeats`);
    each keeps its best score before the row is cut to ``k`` (a vector's
    pieces are then gathered whole, and merged in numpy), the others counted
    in :attr:`repeats_dropped`.

    >>> from mrcodecs.jobwire import Stripe
    >>> m = RowMerger(1, 10)
    >>> ids = np.array([b"b" * 16, b"a" * 16], "S16")
    >>> rows = m.add(b"x", [Stripe(ids, np.array([1.0, 2.0]))]) + m.flush()
    >>> [(doc, row.ids.tolist()) for doc, row in rows]
    [(b'x', [b'aaaaaaaaaaaaaaaa'])]
    """

    def __init__(self, k, limit, repeats=False):
        self.k, self.limit, self.repeats = k, limit, repeats
        self.repeats_dropped = 0
        self._docs, self._ids, self._scores, self._held = [], [], [], 0
        # with --top-k of at least C_MERGE_K and the C kernels, each row is
        # merged as it comes
        self._merge = (None if k is None or k < C_MERGE_K or _c.C is None or repeats
                       else _c.C.merge_top_k)

    def add(self, doc, pieces):
        """Take a vector's pieces; the rows of a full batch (a list of
        ``(doc, Stripe)``), else ``[]``."""
        pieces = pieces if isinstance(pieces, list) else list(pieces)
        if self._merge is not None and pieces:
            merged = self._merge([np.ascontiguousarray(p.ids) for p in pieces],
                                 [np.ascontiguousarray(p.values, np.float64) for p in pieces],
                                 self.k)
            if merged is not None:  # (None: a NaN score, ordered below)
                rows = self.flush() if self._docs else []
                rows.append((doc, Stripe(np.frombuffer(merged[0], "S16"),
                                         np.frombuffer(merged[1], np.float64))))
                return rows
        gathered = _gather(pieces, None if self.repeats else self.k, self.limit)
        if gathered is None:
            return []
        self._docs.append(doc)
        self._ids.append(gathered[0])
        self._scores.append(gathered[1])
        self._held += gathered[0].shape[0]
        return self.flush() if self._held >= self.limit else []

    def flush(self):
        """The rows of the vectors held, in the order they came (emptied)."""
        docs, ids_l, sc_l = self._docs, self._ids, self._scores
        self._docs, self._ids, self._scores, self._held = [], [], [], 0
        if not docs:
            return []
        lengths = np.fromiter(map(len, ids_l), np.intp, len(ids_l))
        ids, sc = np.concatenate(ids_l), np.concatenate(sc_l)
        group = np.repeat(np.arange(len(docs)), lengths)
        if self.repeats:
            best = self._best_of_repeats(group, ids, sc)
            group, ids, sc = group[best], ids[best], sc[best]
            lengths = np.bincount(group, minlength=len(docs))
        order = top_k_groups(group, ids, sc, self.k)
        kept = lengths if self.k is None else np.minimum(lengths, self.k)
        ids, sc = ids[order], sc[order]
        ends = np.cumsum(kept).tolist()
        starts = [0] + ends[:-1]
        return [(doc, Stripe(ids[s:e], sc[s:e])) for doc, s, e in zip(docs, starts, ends)]

    def _best_of_repeats(self, group, ids, sc):
        """Indices (ascending) of each row's entries without a neighbour's
        repeats: of each, the entry of its best score."""
        keys = np.empty((ids.shape[0], 24), np.uint8)
        keys[:, :8] = group.astype(">i8").view(np.uint8).reshape(-1, 8)
        keys[:, 8:] = np.frombuffer(ids.tobytes(), np.uint8).reshape(-1, 16)
        keys = keys.view("S24").ravel()
        by = np.lexsort((-sc, keys))  # each neighbour's best first
        first = by[np.append(True, keys[by][1:] != keys[by][:-1])]
        self.repeats_dropped += ids.shape[0] - first.shape[0]
        return np.sort(first)


def output_rows(counts, rows):
    """The output lines of rows a :class:`RowMerger` gave back (a list of
    ``(doc, Stripe)``), counted in ``counts`` as the job's output lines."""
    if rows:
        counts.add(WORK, OUTPUT_LINES, len(rows))
    yield from rows


def partial_rows(groups, others, scores, group_raw, other_ids, dtype):
    """``(doc, Stripe)`` of each group's partial row, from a pair kernel's
    result: entries grouped by ``groups`` (indices into ``group_raw``, the
    groups' 16-byte ids end to end), their ``others`` (indices into
    ``other_ids``) and ``scores`` (written as ``dtype``)."""
    if not groups.shape[0]:
        return
    scores = scores.astype(dtype, copy=False)
    starts = group_starts(groups)
    ends = np.append(starts[1:], groups.shape[0]).tolist()
    ids = other_ids[others]
    for s, e, g in zip(starts.tolist(), ends, groups[starts].tolist()):
        yield group_raw[16 * g:16 * g + 16], Stripe(ids[s:e], scores[s:e])
