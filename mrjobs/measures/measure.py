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
        (``"raw"``, ``"binary"``, ``"unit"``, ``"centred_unit"``).
    stat : str or None
        Which per-vector statistic travels with them, a property of
        :class:`_Rows` (``"count"``, ``"lognorm"``, ``"scorable"``), or None.
    combine : callable
        ``combine(d, a, b, n_features)``: scores (before clamping) from the
        summed products ``d`` and the statistics ``a``, ``b`` (float64
        arrays that broadcast together).
    lo, hi : float
        The mathematical range; scores are clamped to it.
    needs_n_features : bool
        :func:`score` needs the corpus's number of distinct features.
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
        measure cannot be pruned (:mod:`mrjobs.pairs.bounds`).
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

    def prepare_rows(self, weights, lengths):
        """See :func:`prepare_rows`."""
        return self._prepare(_Rows(weights, lengths))

    def _prepare(self, rows):
        with np.errstate(under="ignore"):
            prepared = getattr(rows, self.weights)
            stats = None if self.stat is None else getattr(rows, self.stat)
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
        if self.stat != "scorable" or stats is None:
            return np.ones(np.shape(stats), dtype=bool)
        return np.asarray(stats) > 0


# -- per-vector numbers, for many vectors at once --------------------------

class _Rows:
    """Many vectors given as concatenated weights and per-vector lengths.

    Each property is one kind of prepared weights (per entry) or statistic
    (per vector), computed with segmented reductions, never a Python loop
    over vectors.  Sums are sequential within a vector (``np.add.reduceat``),
    so a vector gives the same bits wherever it sits in the batch.
    """

    def __init__(self, weights, lengths):
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


# -- checks ------------------------------------------------------------------

def _check_counts(name, d, a, b):
    lo = np.minimum(a, b)
    if (d < 0).any() or (d > lo).any() or (d != np.round(d)).any():
        raise ValueError(
            "measure %r scores from counts of shared features, but a summed product is "
            "negative, not a whole number, or larger than a vector's number of features "
            "(were the weights prepared for %r?)" % (name, name))
