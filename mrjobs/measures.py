"""Similarity measures: one registry entry per measure.

A measure is computed in two halves.  The vectors reducer *prepares* each
vector once: it chooses the weights that go into the index and one statistic of
the whole vector that travels with them.  The reducer that meets a pair
*scores* it from the summed products of prepared weights ``d`` and the two statistics.
Every measure of Mahout's ``RowSimilarityJob`` (``VectorSimilarityMeasures``)
is here, with Mahout's definitions, so that scores compare one for one:

=============  ===============  =========  =========================================  =========
measure        weights indexed  statistic  score of x, y                              range
=============  ===============  =========  =========================================  =========
dot            w                --         x.y                                        --
cosine         w / |w|          --         x.y / (|x| |y|)                            [-1, 1]
pearson        c / |c|          scorable   cosine of the centred c (see below)        [-1, 1]
tanimoto       w / |w|          log |w|    x.y / (|x|^2 + |y|^2 - x.y)                [-1/3, 1]
euclidean      w / |w|          log |w|    1 / (1 + |x - y|)                          [0, 1]
jaccard        1                nnz        k11 / (|X| + |Y| - k11)                    [0, 1]
overlap        1                nnz        k11 / min(|X|, |Y|)                        [0, 1]
cooccurrence   1                --         k11                                        [0, inf)
cityblock      1                nnz        1 / (1 + |X| + |Y| - 2 k11)                (0, 1]
loglikelihood  1                nnz        1 - 1 / (1 + LLR(k11, k12, k21, k22))      [0, 1)
=============  ===============  =========  =========================================  =========

``|w|`` is the Euclidean norm, ``X`` the set of features of ``x`` (its
nonzero entries), ``k11 = |X & Y|`` the number of shared features.

* ``jaccard`` is what Mahout calls the Tanimoto coefficient
  (``SIMILARITY_TANIMOTO_COEFFICIENT``); our ``tanimoto`` is the *extended*
  (weighted) Jaccard, which Mahout does not have.
* ``pearson`` is Mahout's ``PearsonCorrelationSimilarity``: each vector's
  nonzero entries are centred on ``|x|_1 / nnz(x)`` (the mean of their
  absolute values), zero entries stay zero, then the cosine is taken.  A
  vector whose nonzero entries are all equal and positive (for example a
  vector with one positive weight) centres to zero and has no Pearson score
  with any vector: its prepared weights are all zero, so every score it
  takes part in is 0.0 (never NaN), and :func:`valid` of its statistic is
  False so that the job can leave it out and count it.  An entry equal to
  the centre centres to exactly 0.0 whenever the centre is exact (integer
  weights with a whole-number centre: the vector is scaled by a power of
  two, which changes no bit, before the sum); as in Mahout, which indexes
  the nonzero entries of the centred vectors, such an entry is no longer an
  entry (:attr:`Measure.index_zeros` is False): two vectors that share only
  such features get no Pearson score.
* ``euclidean`` is ``1 / (1 + |x - y|)`` with ``|x - y|^2 = |x|^2 + |y|^2 -
  2 x.y`` clamped at 0, as in Mahout's ``EuclideanDistanceSimilarity``.
* ``loglikelihood`` is Mahout's ``LoglikelihoodSimilarity``: ``LLR`` is
  Dunning's log-likelihood ratio (``LogLikelihood.logLikelihoodRatio``) of
  the 2 x 2 table ``k11`` (shared), ``k12 = |X| - k11`` (only in x),
  ``k21 = |Y| - k11`` (only in y), ``k22 = N - k11 - k12 - k21`` (in
  neither), where ``N`` is the number of distinct features of the corpus
  (Mahout's ``numberOfColumns``), passed to :func:`score` as ``n_features``.
  ``1 - 1 / (1 + LLR)`` is computed as ``LLR / (1 + LLR)``.

Statistics are taken from the whole vector, before any ``--max-df`` cut;
the dot product ``d`` covers the shared features that survive the cut.  As
in Mahout's job, only pairs that share at least one feature get a score.

Robustness
----------
Norms never overflow or underflow for finite weights: a vector is divided
by its largest absolute weight before anything is squared, and the norm
travels as its natural logarithm (``-inf`` for a vector without nonzero
weights), so cosine, Pearson, Tanimoto and Euclidean scores are right for
weights like 1e-200 or 1e300.  Scores are clamped to their range, and a
sum of products of unit weights within :data:`UNIT_SNAP` (2**-44) of +-1,
which rounding cannot tell from +-1, is taken as +-1: two identical vectors
score exactly 1.0 (cosine, Pearson, Tanimoto, Euclidean, at any scale), not
1.0000000000000002 or 0.9999999999999998.  Only
``dot`` passes its sums through untouched: a dot product beyond float64's
range is +-inf (NaN if infinities of both signs meet); the job should count
non-finite ``dot`` scores.  Euclidean distances are derived from dot
products, so ``|x - y|^2`` carries an absolute error of a few ``nnz * eps *
(|x|^2 + |y|^2)``: distances below about ``1e-7 max(|x|, |y|)`` are
rounding noise (as in Mahout).  No numpy floating-point warning escapes this module; inputs
that cannot come from prepared vectors (a count larger than a vector's
number of features, a missing ``n_features``) raise ``ValueError``.

Adding a measure is one :class:`Measure` entry in :data:`REGISTRY` -- its score,
its statistic and, for pruning, its ``bound`` (:data:`PRUNABLE` follows) -- (and, if
it needs new per-vector numbers, one property of :class:`_Rows`).

In a job
--------
* Where whole vectors are (the dot-products job: the vectors reducer):
  :func:`prepare_rows` for a buffer of vectors, or ``w, stat =
  prepare(measure, weights)`` for one.
  Index ``w`` (same features, same order); send ``stat`` with every entry
  when :func:`has_stats`.
* ``pearson``: a vector with ``not valid("pearson", stat)`` (it centres to
  zero) has no score with any vector.  Count it (e.g. "vector centres to
  zero (no pearson scores)") and do not index it; its scores would all be
  0.0, never NaN, so a job that indexes it anyway must drop the pairs where
  ``valid`` of either statistic is False and count them, rather than write
  them.
* ``loglikelihood``: :func:`score` needs ``n_features=N``, the number of
  distinct features of the whole input (corpus and queries, before any
  ``--max-df`` cut), i.e. the number of posting lists of the index step.
  The job must count it before scoring (a counting pass, or an option that
  states it) and pass it to every scoring reducer.
* Reducer: ``score(measure, dots, self_stat, stats, n_features=N)`` on the
  summed products (one vector against many, or pairs element-wise).

Examples
--------
>>> import numpy as np
>>> w, s = prepare("cosine", np.array([3.0, 4.0]))
>>> w.tolist(), s
([0.6, 0.8], None)
>>> get("jaccard").formula
'|X&Y| / (|X| + |Y| - |X&Y|) over the sets of features (Mahout: Tanimoto coefficient)'
"""
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Callable, Optional

import numpy as np

__all__ = ["MEASURES", "PRUNABLE", "REGISTRY", "Measure", "get", "help_text", "has_stats",
           "stat_bound",
           "log_likelihood_ratio", "prepare", "prepare_rows", "score", "valid"]

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


# -- scores ------------------------------------------------------------------

def _check_counts(name, d, a, b):
    lo = np.minimum(a, b)
    if (d < 0).any() or (d > lo).any() or (d != np.round(d)).any():
        raise ValueError(
            "measure %r scores from counts of shared features, but a summed product is "
            "negative, not a whole number, or larger than a vector's number of features "
            "(were the weights prepared for %r?)" % (name, name))


def _dot(d, a, b, n):
    return d


def _ratio(a, b):
    """min(|x|, |y|) / max(|x|, |y|) from log norms, and log max(|x|, |y|)."""
    hi = np.maximum(a, b)
    lo = np.minimum(a, b)
    diff = np.full(np.broadcast(lo, hi).shape, -_INF)
    np.subtract(lo, hi, out=diff, where=np.broadcast_to(hi > -_INF, diff.shape))
    return np.exp(diff), hi


#: a product of unit vectors this close to +-1 is +-1 (rounding in a sum of
#: n products moves it by up to about n * eps; 2**-44 is 256 eps)
UNIT_SNAP = 2.0 ** -44


#: the largest magnitude a sum of products of unit weights can reach by rounding
UNIT_LIMIT = 1.0 + 2.0 ** -20


def _unit_dot(d):
    """The cosine from summed products of unit weights: clamped to [-1, 1],
    and exactly +-1 within :data:`UNIT_SNAP` of it."""
    d = np.asarray(d, dtype=np.float64)
    if d.size:
        hi, lo = d.max(), d.min()  # NaN in either: look at every entry
        if hi > UNIT_LIMIT or lo < -UNIT_LIMIT or (hi != hi and (np.abs(d) > UNIT_LIMIT).any()):
            raise ValueError("a sum of products of unit weights is %r, beyond rounding of "
                             "+-1: were the weights prepared for this measure?"
                             % float(d[np.abs(d) > UNIT_LIMIT][0]))
    c = np.clip(d, -1.0, 1.0)
    c[c >= 1.0 - UNIT_SNAP] = 1.0
    c[c <= UNIT_SNAP - 1.0] = -1.0
    return c


def _cosine(d, a, b, n):
    return _unit_dot(d)


def _tanimoto(d, a, b, n):
    # x.y / (|x|^2 + |y|^2 - x.y), divided through by max(|x|, |y|)^2; the
    # denominator is at least 3/4, so nothing overflows or divides by zero
    c = _unit_dot(d)
    t, _ = _ratio(a, b)
    ct = c * t
    return ct / (1.0 + t * t - ct)


def _euclidean(d, a, b, n):
    c = _unit_dot(d)
    t, hi = _ratio(a, b)
    # |x - y|^2 / max(|x|, |y|)^2, clamped at 0 against rounding
    q = np.maximum(1.0 + t * t - 2.0 * t * c, 0.0)
    some = (q > 0) & (hi > -_INF)
    # log |x - y|, and 1 / (1 + e^x) without overflow for either sign of x
    x = np.zeros(some.shape)
    x[some] = np.broadcast_to(hi, some.shape)[some] + 0.5 * np.log(q[some])
    e = np.exp(-np.abs(x))
    return np.where(some, np.where(x > 0, e / (1.0 + e), 1.0 / (1.0 + e)), 1.0)


def _jaccard(d, a, b, n):
    den = a + b - d
    return np.divide(d, den, out=np.zeros(np.broadcast(d, den).shape), where=den > 0)


def _overlap(d, a, b, n):
    den = np.minimum(a, b)
    return np.divide(d, den, out=np.zeros(np.broadcast(d, den).shape), where=den > 0)


def _cityblock(d, a, b, n):
    return 1.0 / (1.0 + a + b - 2.0 * d)


def _loglikelihood(d, a, b, n):
    llr = log_likelihood_ratio(d, a - d, b - d, n - a - b + d)
    return llr / (1.0 + llr)


def log_likelihood_ratio(k11, k12, k21, k22):
    """Dunning's log-likelihood ratio (G^2) of 2 x 2 tables of counts.

    The same quantity as Mahout's ``LogLikelihood.logLikelihoodRatio``,
    ``2 (H(rows) + H(columns) - H(table))`` with unnormalised entropies
    ``H(k) = xlogx(sum k) - sum xlogx(k)``, but computed as
    ``2 sum E f((k - E) / E)`` with ``f(u) = (1 + u) log(1 + u) - u >= 0``
    and ``k - E = +-(k11 k22 - k12 k21) / N``: a sum of non-negative terms,
    so a table close to independence keeps its small ratio to full
    relative precision instead of losing it to cancellation of the
    entropies.  Counts must be whole numbers >= 0 (exact below 2**53; the
    products ``k11 k22`` are exact below about 9.4e7 features).

    Examples
    --------
    >>> llr = log_likelihood_ratio(1.0, 0.0, 0.0, 1.0)
    >>> bool(np.isclose(llr, 4 * np.log(2)))
    True
    """
    k11, k12, k21, k22 = np.broadcast_arrays(*(np.asarray(k, dtype=np.float64)
                                              for k in (k11, k12, k21, k22)))
    if any((k < 0).any() for k in (k11, k12, k21, k22)):
        raise ValueError("a 2 x 2 table has a negative count: is n_features the number of "
                         "distinct features of the whole corpus?")
    n = k11 + k12 + k21 + k22
    r1, r2 = k11 + k12, k21 + k22
    c1, c2 = k11 + k21, k12 + k22
    det = k11 * k22 - k12 * k21
    total = np.zeros(k11.shape)
    for k, r, c, sign in ((k11, r1, c1, 1.0), (k12, r1, c2, -1.0),
                          (k21, r2, c1, -1.0), (k22, r2, c2, 1.0)):
        rc = r * c
        live = rc > 0  # rc == 0 means k == 0 and E == 0: no term
        u = np.zeros(k.shape)
        u[live] = sign * det[live] / rc[live]
        e = np.zeros(k.shape)
        e[live] = rc[live] / n[live]
        total += e * _f(u, k == 0)
    return 2.0 * total


#: coefficients of f(u) / u^2 = sum_{j>=2} (-1)^j u^(j-2) / (j (j-1)) for |u| < 0.1
_F_SERIES = [(-1.0) ** j / (j * (j - 1)) for j in range(2, 18)]


def _f(u, empty):
    """(1 + u) log(1 + u) - u, accurate for small |u|; 1 where the cell is empty."""
    out = np.ones(u.shape)
    small = (np.abs(u) < 0.1) & ~empty
    us = u[small]
    acc = np.zeros(us.shape)
    for coef in reversed(_F_SERIES):
        acc = acc * us + coef
    out[small] = acc * us * us
    big = ~small & ~empty
    ub = u[big]
    out[big] = (1.0 + ub) * np.log1p(ub) - ub
    return out

# -- bounds: an upper bound on the score from one on the dot product (used by
# mrjobs.pairs.bounds; closed forms in its module doc) -------------------------

#: absolute slack on a euclidean ``|x - y|^2 / max(|x|, |y|)^2`` (the norms'
#: ratio is ``exp`` of a difference of logarithms up to ~710: relative error
#: ~1e-13 in the ratio)
Q_SLACK = 2.0 ** -36


def _unit(d):
    """The job's cosine from a bound on the sum: clamped, snapped up to 1."""
    c = np.clip(d, -1.0, 1.0)
    return np.where(c >= 1.0 - UNIT_SNAP, 1.0, c)


def _tanimoto_bound(d, a, lo, hi):
    # c t / (1 + t^2 - c t) grows with c, and with t for c >= 0: take the
    # group's norm closest to the row's; for c <= 0 the score is <= 0.  A
    # zero vector's log norm is -inf: -inf - -inf is NaN, and the ratio of
    # two equal norms (zero ones included) is at most 1
    c = _unit(d)
    near = np.clip(a, lo, hi)
    t = np.where(a == near, 1.0, np.exp(-np.abs(a - near)))
    ct = c * t
    return np.where(c > 0, ct / (1.0 + t * t - ct), 0.0)


def _euclidean_bound(d, a, lo, hi):
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


def _count_args(d, a, lo, hi):
    """(largest shared count, the group's count that maximises the score)."""
    k = np.minimum(np.floor(d), a)
    return k, np.clip(k, lo, hi)


def _jaccard_bound(d, a, lo, hi):
    k, b = _count_args(d, a, lo, hi)
    k = np.minimum(k, b)
    den = a + b - k
    return np.where(den > 0, k / np.where(den > 0, den, 1.0), 1.0)


def _overlap_bound(d, a, lo, hi):
    # min(k, b) / min(a, b) is largest at the group's smallest count
    k = np.minimum(np.minimum(np.floor(d), a), lo)
    den = np.minimum(a, lo)
    return np.where(den > 0, k / np.where(den > 0, den, 1.0), 1.0)


def _cityblock_bound(d, a, lo, hi):
    k, b = _count_args(d, a, lo, hi)
    return 1.0 / (1.0 + a + b - 2.0 * np.minimum(k, b))


def stat_bound(bound):
    """A measure's bound over a group's range of statistics: ``bound(d, a,
    lo, hi)`` on float64 arrays (rows' statistics as a column, groups' range
    as a row), ``-inf`` for an empty group (``lo > hi``)."""
    def over_stats(d, a, lo, hi):
        a = np.asarray(a, dtype=np.float64)[:, None]
        lo = np.asarray(lo, dtype=np.float64)[None, :]
        hi = np.asarray(hi, dtype=np.float64)[None, :]
        return np.where(lo <= hi, bound(d, a, lo, hi), -np.inf)
    return over_stats


def _dot_bound(d, a, lo, hi):
    return d.copy()


def _unit_bound(d, a, lo, hi):
    return _unit(d)


#: the measures, in the order ``--help`` lists them
REGISTRY = MappingProxyType({m.name: m for m in (
    Measure("dot", "x.y", "raw", None, _dot, bound=_dot_bound),
    Measure("cosine", "x.y / (|x| |y|)", "unit", None, _cosine, -1.0, 1.0, bound=_unit_bound),
    Measure("pearson", "cosine of x and y with their nonzero entries centred on |x|_1/nnz(x) "
            "(Mahout's, not the textbook correlation over all features: zero entries stay "
            "zero; a vector whose nonzero weights are all equal and positive has none)",
            "centred_unit", "scorable", _cosine, -1.0, 1.0, index_zeros=False,
            bound=_unit_bound),
    Measure("tanimoto", "x.y / (|x|^2 + |y|^2 - x.y), the extended (weighted) Jaccard",
            "unit", "lognorm", _tanimoto, -1.0 / 3.0, 1.0, bound=stat_bound(_tanimoto_bound)),
    Measure("euclidean", "1 / (1 + |x - y|)", "unit", "lognorm", _euclidean, 0.0, 1.0,
            bound=stat_bound(_euclidean_bound)),
    Measure("jaccard", "|X&Y| / (|X| + |Y| - |X&Y|) over the sets of features "
            "(Mahout: Tanimoto coefficient)", "binary", "count", _jaccard, 0.0, 1.0,
            counts=True, bound=stat_bound(_jaccard_bound)),
    Measure("overlap", "|X&Y| / min(|X|, |Y|) over the sets of features",
            "binary", "count", _overlap, 0.0, 1.0, counts=True,
            bound=stat_bound(_overlap_bound)),
    Measure("cooccurrence", "|X&Y|, the number of shared features",
            "binary", None, _dot, 0.0, _INF, bound=_dot_bound),
    Measure("cityblock", "1 / (1 + |X| + |Y| - 2 |X&Y|) over the sets of features",
            "binary", "count", _cityblock, 0.0, 1.0, counts=True,
            bound=stat_bound(_cityblock_bound)),
    Measure("loglikelihood", "1 - 1 / (1 + LLR), Dunning's log-likelihood ratio of the "
            "table of shared, only-x, only-y and neither features (needs the corpus's "
            "number of features)", "binary", "count", _loglikelihood, 0.0, 1.0,
            needs_n_features=True, counts=True),
)})

#: names of the measures, ``dot`` first
MEASURES = tuple(REGISTRY)
#: measures whose scores :mod:`mrjobs.pairs.bounds` bounds from a dot-product
#: bound: those with a ``bound`` (loglikelihood has none: it is not monotone in
#: the shared count)
PRUNABLE = frozenset(m.name for m in REGISTRY.values() if m.bound is not None)


def get(name):
    """The :class:`Measure` called ``name``.

    Raises
    ------
    ValueError
        For an unknown name.
    """
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError("unknown measure %r; expected one of %s"
                         % (name, ", ".join(MEASURES))) from None


def help_text(sep="\n"):
    """One ``'name': formula`` line per measure (ASCII), for ``--measure``'s help.

    Examples
    --------
    >>> print(help_text().splitlines()[0])
    'dot': x.y
    """
    return sep.join("%r: %s" % (m.name, m.formula) for m in REGISTRY.values())


def has_stats(measure):
    """True if the measure needs a per-vector statistic on the wire."""
    return get(measure).stat is not None


def prepare(measure, weights):
    """The weights to index and the vector's statistic (or None).

    Parameters
    ----------
    measure : str
    weights : numpy.ndarray
        The vector's nonzero weights (1-D, finite), the whole vector.

    Returns
    -------
    (numpy.ndarray, float or None)
        Prepared weights, one per entry, and the statistic, None exactly
        when :func:`has_stats` is False.  Identical, bit for bit, to the
        vector's part of :func:`prepare_rows`.

    Examples
    --------
    >>> import numpy as np
    >>> w, s = prepare("cosine", np.array([3.0, 4.0]))
    >>> w.tolist(), s
    ([0.6, 0.8], None)
    >>> prepare("jaccard", np.array([3.0, 4.0]))[1]
    2.0
    """
    m = get(measure)
    if m.weights == "raw":
        return weights, None
    w = np.asarray(weights, dtype=np.float64)
    prepared, stats = m.prepare_rows(w, np.array([w.shape[0]] if w.ndim == 1 else [-1]))
    return prepared, None if stats is None else float(stats[0])


def prepare_rows(measure, weights, lengths):
    """:func:`prepare` for many vectors at once.

    Parameters
    ----------
    measure : str
    weights : numpy.ndarray
        The vectors' nonzero weights, concatenated (1-D, finite).
    lengths : numpy.ndarray
        Number of entries of each vector (integers >= 0, summing to
        ``len(weights)``); empty vectors are allowed.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray or None)
        Prepared weights (float64, aligned with ``weights``) and one float64
        statistic per vector (None if the measure has none), equal bit for
        bit to calling :func:`prepare` on each vector.

    Examples
    --------
    >>> import numpy as np
    >>> w, s = prepare_rows("tanimoto", np.array([3.0, 4.0, 2.0]), np.array([2, 0, 1]))
    >>> w.tolist(), np.exp(s).round(12).tolist()
    ([0.6, 0.8, 1.0], [5.0, 0.0, 2.0])
    """
    return get(measure).prepare_rows(weights, lengths)


def score(measure, dots, self_stat, stats, *, n_features=None):
    """Scores from summed products of prepared weights, clamped to the range.

    Parameters
    ----------
    measure : str
    dots : numpy.ndarray
        Sum of the products of prepared weights over the shared features,
        one per pair.
    self_stat : float, numpy.ndarray or None
        The first vector's statistic: a number (one vector against many) or
        an array as long as ``dots`` (pairs element by element).
    stats : numpy.ndarray or None
        The second vectors' statistics, as long as ``dots``.
    n_features : int, optional
        ``loglikelihood`` only (ignored by the others): the number of
        distinct features of the corpus, Mahout's ``numberOfColumns``.  The
        job has to count them (features of all input vectors, before any
        ``--max-df`` cut, e.g. the number of step-1 reducer keys, in a step
        or a counter of its own) and pass the count to the scoring reducers.

    Returns
    -------
    numpy.ndarray
        float64 scores.  For ``pearson`` the scores of pairs where either
        vector is not :func:`valid` are 0.0; the job must drop and count them.

    Raises
    ------
    ValueError
        For an unknown measure, missing statistics or ``n_features``, or
        numbers that cannot come from prepared vectors.

    Examples
    --------
    >>> import numpy as np
    >>> score("jaccard", np.array([1.0]), 2.0, np.array([3.0])).tolist()
    [0.25]
    >>> score("cosine", np.array([1.0000000000000002]), None, None).tolist()
    [1.0]
    """
    return get(measure).score(dots, self_stat, stats, n_features)


def valid(measure, stats):
    """Which vectors have scores under ``measure``, from their statistics.

    Only ``pearson`` has vectors without scores (those that centre to zero:
    all nonzero weights equal and positive, e.g. one positive weight);
    every other measure gives all True.  Works on a single statistic (a
    0-d result) or an array.

    Examples
    --------
    >>> import numpy as np
    >>> bool(valid("pearson", prepare("pearson", np.array([2.0, 2.0]))[1]))
    False
    >>> bool(valid("pearson", prepare("pearson", np.array([1.0, 2.0]))[1]))
    True
    """
    return get(measure).valid(stats)
