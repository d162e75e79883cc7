"""The measures' bounds: an upper bound on a score from one on the dot
product, for pruning (used by :mod:`mrjobs.pairs.pruning`; closed forms in its
module doc)."""
import numpy as np

from mrjobs.measures.scores import UNIT_SNAP

__all__ = ["Q_SLACK", "stat_bound", "dot_bound", "unit_bound", "tanimoto_bound",
           "euclidean_bound", "jaccard_bound", "overlap_bound", "cityblock_bound",
           "correlation_bound"]


#: absolute slack on a euclidean ``|x - y|^2 / max(|x|, |y|)^2`` (the norms'
#: ratio is ``exp`` of a difference of logarithms up to ~710: relative error
#: ~1e-13 in the ratio)
Q_SLACK = 2.0 ** -36


def _unit(d):
    """The job's cosine from a bound on the sum: clamped, snapped up to 1."""
    c = np.clip(d, -1.0, 1.0)
    return np.where(c >= 1.0 - UNIT_SNAP, 1.0, c)


def tanimoto_bound(d, a, lo, hi):
    # c t / (1 + t^2 - c t) grows with c, and with t for c >= 0: take the
    # group's norm closest to the row's; for c <= 0 the score is <= 0.  A
    # zero vector's log norm is -inf: -inf - -inf is NaN, and the ratio of
    # two equal norms (zero ones included) is at most 1
    c = _unit(d)
    near = np.clip(a, lo, hi)
    t = np.where(a == near, 1.0, np.exp(-np.abs(a - near)))
    ct = c * t
    return np.where(c > 0, ct / (1.0 + t * t - ct), 0.0)


def euclidean_bound(d, a, lo, hi):
    # |x - y|^2 = |x|^2 + |y|^2 - 2 |x| |y| c is smallest at |y| = |x| c
    # (clamped into the group's range; the smallest |y| for c <= 0)
    c = _unit(d)
    b = np.where(c > 0, np.clip(a + np.log(np.where(c > 0, c, 1.0)), lo, hi), lo)
    top = np.maximum(a, b)
    t = np.exp(np.minimum(a, b) - top)
    q = np.maximum(1.0 + t * t - 2.0 * t * c - Q_SLACK, 0.0)
    x = top + 0.5 * np.log(np.where(q > 0, q, 1.0))
    e = np.exp(-np.abs(x))
    s = np.where(x > 0, e / (1.0 + e), 1.0 / (1.0 + e))
    return np.where((q > 0) & (top > -np.inf), s, 1.0)


def correlation_bound(d, a, lo, hi):
    # r = d - a b is largest where a b is smallest: at an end of the group's
    # range of b.  Rounding is monotone, so with a b* <= a b the rounded
    # d_bound - a b* is at least the job's rounded d - a b; clamping and
    # snapping up to 1 are those of the score
    b = np.where(a >= 0, lo, hi)
    return _unit(d - a * b)


def _count_args(d, a, lo, hi):
    """(largest shared count, the group's count that maximises the score)."""
    k = np.minimum(np.floor(d), a)
    return k, np.clip(k, lo, hi)


def jaccard_bound(d, a, lo, hi):
    k, b = _count_args(d, a, lo, hi)
    k = np.minimum(k, b)
    den = a + b - k
    return np.where(den > 0, k / np.where(den > 0, den, 1.0), 1.0)


def overlap_bound(d, a, lo, hi):
    # min(k, b) / min(a, b) is largest at the group's smallest count
    k = np.minimum(np.minimum(np.floor(d), a), lo)
    den = np.minimum(a, lo)
    return np.where(den > 0, k / np.where(den > 0, den, 1.0), 1.0)


def cityblock_bound(d, a, lo, hi):
    k, b = _count_args(d, a, lo, hi)
    return 1.0 / (1.0 + a + b - 2.0 * np.minimum(k, b))


def stat_bound(bound):
    """A measure's bound over a group's range of statistics: ``bound(d, a,
    lo, hi)`` on float64 arrays (rows' statistics as a column, groups' range
    as a row), ``-inf`` for an empty group (``lo > hi``); NaN where a range is
    NaN (it holds a NaN statistic: see :func:`~mrjobs.pairs.pruning.stat_range`)."""
    def over_stats(d, a, lo, hi):
        a = np.asarray(a, dtype=np.float64)[:, None]
        lo = np.asarray(lo, dtype=np.float64)[None, :]
        hi = np.asarray(hi, dtype=np.float64)[None, :]
        return np.where(lo > hi, -np.inf, bound(d, a, lo, hi))
    return over_stats


def dot_bound(d, a, lo, hi):
    return d.copy()


def unit_bound(d, a, lo, hi):
    return _unit(d)
