"""A measure's registry entry (:class:`Measure`) and the per-vector numbers
it prepares, for many vectors at once (:class:`_Rows`)."""
from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Optional

import numpy as np

__all__ = ["Measure"]

_INF = float("inf")


@dataclass(frozen=True)
class Measure:
    """One similarity measure: how to prepare vectors and score pairs.

    Attributes
    ----------
    name : str
        The ``--measure`` value.
    formula : str
        One line of ASCII for ``--help``.
    weights : str
        Which prepared weights are indexed: a property of :class:`_Rows`
        (``"raw"``, ``"binary"``, ``"unit"``, ``"centred_unit"``,
        ``"standardised"``).
    stat : str or None
        Which per-vector statistic travels with them, a property of
        :class:`_Rows` (``"count"``, ``"lognorm"``, ``"scorable"``,
        ``"mean_per_sd"``), or None.
    combine : callable
        ``combine(d, a, b, n_features)``: scores (before clamping) from the
        summed products ``d`` and the statistics ``a``, ``b`` (float64
        arrays that broadcast together).
    lo, hi : float
        The mathematical range; scores are clamped to it.
    needs_n_features : bool
        :func:`score` needs the corpus's number of distinct features (and
        :func:`prepare_rows` too where the weights depend on it:
        ``"standardised"``).
    counts : bool
        ``d``, ``a`` and ``b`` are counts (binary weights, ``nnz``); they are
        checked for consistency.
    index_zeros : bool
        A prepared weight of exactly 0.0 is still an entry of the vector (a
        pair that shares only such features gets a score).  False for
        ``pearson``: as in Mahout, which indexes the nonzero entries of the
        centred vectors, a feature whose weight equals the vector's centre is
        not an entry, and pairs that share only such features get no score.
    bound : callable or None
        ``bound(d, row_stats, lo, hi)``: at least the score of a row and any
        vector of a group, from a bound ``d`` on their dot products (the
        rows' statistics, the groups' smallest and largest); None: the
        measure cannot be pruned (:mod:`mrjobs.pairs.pruning`).
    """

    name: str
    formula: str
    weights: str
    stat: Optional[str]
    combine: Callable
    lo: float = -_INF
    hi: float = _INF
    needs_n_features: bool = False
    counts: bool = False
    index_zeros: bool = True
    bound: Optional[Callable] = None

    def prepare_rows(self, weights, lengths, n_features=None):
        """See :func:`prepare_rows`."""
        return self._prepare(_Rows(weights, lengths, n_features))

    def _prepare(self, rows):
        try:
            with np.errstate(under="ignore"):
                prepared = getattr(rows, self.weights)
                stats = None if self.stat is None else getattr(rows, self.stat)
        except _NFeaturesError as e:
            raise ValueError("measure %r: %s" % (self.name, e)) from None
        return prepared, stats

    def score(self, dots, self_stat, stats, n_features=None):
        """See :func:`score`."""
        d = np.asarray(dots, dtype=np.float64)
        a = None if self_stat is None else np.asarray(self_stat, dtype=np.float64)
        b = None if stats is None else np.asarray(stats, dtype=np.float64)
        if self.stat not in (None, "scorable") and (a is None or b is None):
            raise ValueError("measure %r needs the statistics of both vectors, got "
                             "self_stat=%r, stats=%r" % (self.name, self_stat, stats))
        if self.needs_n_features:
            if n_features is None:
                raise ValueError(
                    "measure %r needs n_features, the number of distinct features in the "
                    "corpus" % self.name)
            n_features = float(n_features)
        if self.counts:
            _check_counts(self.name, d, a, b)
        try:
            with np.errstate(all="raise", under="ignore"):
                s = self.combine(d, a, b, n_features)
        except FloatingPointError as e:
            raise ValueError("measure %r: %s in scoring: dots, statistics or n_features do "
                             "not come from prepared vectors" % (self.name, e)) from None
        if self.lo == -_INF and self.hi == _INF:
            return s  # no range (dot): sums pass through, overflow included
        if not np.isfinite(s).all():
            bad = np.flatnonzero(~np.isfinite(np.atleast_1d(s)))[0]
            raise ValueError("measure %r gave a non-finite score at position %d: dots, "
                             "statistics or n_features do not come from prepared vectors"
                             % (self.name, bad))
        return np.clip(s, self.lo, self.hi)

    def valid(self, stats):
        """True where a vector can be scored (see :func:`valid`)."""
        if self.stat not in _VALID or stats is None:
            return np.ones(np.shape(stats), dtype=bool)
        return _VALID[self.stat](np.asarray(stats))


#: the statistics that tell vectors without scores: pearson's (0.0: centres
#: to zero), correlation's (NaN: no variance over the N features)
_VALID = {"scorable": lambda s: s > 0, "mean_per_sd": lambda s: ~np.isnan(s)}


class _NFeaturesError(ValueError):
    """Weights that need ``n_features`` without it, or with too few."""


# -- per-vector numbers, for many vectors at once --------------------------

class _Rows:
    """Many vectors given as concatenated weights and per-vector lengths.

    Each property is one kind of prepared weights (per entry) or statistic
    (per vector), computed with segmented reductions, never a Python loop
    over vectors.  Sums are sequential within a vector (``np.add.reduceat``),
    so a vector gives the same bits wherever it sits in the batch.
    """

    def __init__(self, weights, lengths, n_features=None):
        w = np.asarray(weights, dtype=np.float64)
        n = np.asarray(lengths)
        if w.ndim != 1 or n.ndim != 1:
            raise ValueError("weights and lengths must be 1-D arrays, got shapes %s and %s"
                             % (w.shape, n.shape))
        if n.shape[0] and (n.dtype.kind not in "iu" or n.min() < 0):
            raise ValueError("lengths must be non-negative integers, got %r" % (n[:5],))
        n = n.astype(np.int64)
        if int(n.sum()) != w.shape[0]:
            raise ValueError("lengths add up to %d but there are %d weights"
                             % (int(n.sum()), w.shape[0]))
        if not np.isfinite(w).all():
            raise ValueError("weights must be finite, found %r"
                             % w[np.flatnonzero(~np.isfinite(w))[0]])
        self.w = w
        self.lengths = n
        self.n_features = n_features
        nonempty = n > 0
        starts = np.zeros(n.shape[0], dtype=np.int64)
        np.cumsum(n[:-1], out=starts[1:])
        self._nonempty = nonempty
        self._starts = starts[nonempty]

    def _sum(self, x):
        out = np.zeros(self.lengths.shape[0])
        if self._starts.shape[0]:
            # only non-empty segments: reduceat gives x[i] for an empty one
            out[self._nonempty] = np.add.reduceat(x, self._starts)
        return out

    def _max(self, x):
        out = np.zeros(self.lengths.shape[0])
        if self._starts.shape[0]:
            out[self._nonempty] = np.maximum.reduceat(x, self._starts)
        return out

    def _spread(self, per_vector):
        return np.repeat(per_vector, self.lengths)

    def _unit(self, x):
        """(x / |x| per vector, max |x|, sum of (x / max|x|)^2); zeros stay zeros."""
        m = self._max(np.abs(x))
        s = x / self._spread(np.where(m > 0, m, 1.0))
        # |s| <= 1 and the largest entry is +-1: the sum is in [1, nnz]
        ss = self._sum(s * s)
        return s / self._spread(np.sqrt(np.where(ss > 0, ss, 1.0))), m, ss

    # prepared weights

    @property
    def raw(self):
        return self.w

    @property
    def binary(self):
        return (self.w != 0).astype(np.float64)

    @property
    def unit(self):
        return self._unit_w[0]

    @property
    def centred_unit(self):
        return self._centred[0]

    @property
    def standardised(self):
        return self._standard[0]

    # statistics

    @property
    def count(self):
        return self._sum(self.binary)

    @property
    def lognorm(self):
        _, m, ss = self._unit_w
        out = np.full(m.shape, -_INF)
        pos = m > 0
        out[pos] = np.log(m[pos]) + 0.5 * np.log(ss[pos])
        return out

    @property
    def scorable(self):
        return (self._centred[1] > 0).astype(np.float64)

    @property
    def mean_per_sd(self):
        return self._standard[1]

    @cached_property
    def _unit_w(self):
        return self._unit(self.w)

    @cached_property
    def _centred(self):
        w = self.w
        # scaled by a power of two (exactly: the largest |x| into [0.5, 1)) so
        # that the sum cannot overflow and changes no bit: a weight equal to
        # the mean -- integer weights whose mean is a whole number -- centres
        # to exactly 0.0, not to +-1e-16 of a rounded division
        _, e = np.frexp(self._max(np.abs(w)))
        s = np.ldexp(w, -self._spread(e))
        nz = w != 0
        cnt = self._sum(nz.astype(np.float64))
        # Mahout's centre: |x|_1 / nnz
        mean = self._sum(np.abs(s)) / np.where(cnt > 0, cnt, 1.0)
        c = np.where(nz, s - self._spread(mean), 0.0)
        u, cm, _ = self._unit(c)
        return u, cm

    @cached_property
    def _standard(self):
        """(x / (sqrt(N) sd), mean / sd) over all ``N`` features, zeros
        included (``sd``: the population standard deviation); zero weights
        and NaN for a vector without variance."""
        w = self.w
        nz = w != 0
        k = self._sum(nz.astype(np.float64))
        n = self._n_at_least(k)
        # scaled by a power of two (the largest |x| into [0.5, 1)): nothing
        # overflows, and the scale cancels out of both numbers
        _, e = np.frexp(self._max(np.abs(w)))
        s = np.ldexp(w, -self._spread(e))
        sx = self._sum(s)
        ss = self._sum(s * s)
        # N^2 var = N sum s^2 - (sum s)^2 = (N - k) sum s^2 + k sum (s - mean_nz)^2
        # over the k nonzero entries: a sum of non-negative terms, exactly 0
        # only for a vector constant over all N features
        dev = np.where(nz, s - self._spread(sx / np.where(k > 0, k, 1.0)), 0.0)
        # nonzero entries all equal: exactly no spread (the rounded mean may
        # differ from them by an ulp)
        equal = self._max(np.where(nz, s, -_INF)) == -self._max(np.where(nz, -s, -_INF))
        spread = np.where(equal, 0.0, self._sum(dev * dev))
        v = np.sqrt((n - k) * ss + k * spread)
        ok = v > 0
        v1 = np.where(ok, v, 1.0)
        prepared = s * self._spread(np.where(ok, np.sqrt(n) / v1, 0.0))
        return prepared, np.where(ok, sx / v1, np.nan)

    def _n_at_least(self, k):
        """``n_features`` as a float, checked against each vector's number
        ``k`` of nonzero weights."""
        n = self.n_features
        if n is None:
            raise _NFeaturesError("needs n_features, the number of distinct features of the "
                                  "corpus (the length of the vectors, zeros included)")
        n = float(n)
        if not n >= 1:
            raise _NFeaturesError("n_features must be at least 1, not %r" % (self.n_features,))
        if k.shape[0] and k.max() > n:
            raise _NFeaturesError(
                "a vector has %d features, more than n_features=%d: n_features must be the "
                "number of distinct features of the whole corpus" % (int(k.max()), int(n)))
        return n


# -- checks ------------------------------------------------------------------

def _check_counts(name, d, a, b):
    lo = np.minimum(a, b)
    if (d < 0).any() or (d > lo).any() or (d != np.round(d)).any():
        raise ValueError(
            "measure %r scores from counts of shared features, but a summed product is "
            "negative, not a whole number, or larger than a vector's number of features "
            "(were the weights prepared for %r?)" % (name, name))
