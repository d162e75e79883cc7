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

from mrjobs.counters import PAIRS_BELOW_THRESHOLD, PAIRS_NOT_FINITE, PAIRS_SCORED, WORK
from mrjobs.measures import score
from mrjobs.parsing import weight_limit

__all__ = ["Scorer"]


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
