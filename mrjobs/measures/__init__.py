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
correlation    x / (sqrt(N) s)  mean / s   x'.y' - a b (see below)                    [-1, 1]
tanimoto       w / |w|          log |w|    x.y / (|x|^2 + |y|^2 - x.y)                [-1/3, 1]
euclidean      w / |w|          log |w|    1 / (1 + |x - y|)                          [0, 1]
jaccard        1                nnz        k11 / (|X| + |Y| - k11)                    [0, 1]
overlap        1                nnz        k11 / min(|X|, |Y|)                        [0, 1]
cooccurrence   1                --         k11                                        [0, inf)
cityblock      1                nnz        1 / (1 + |X| + |Y| - 2 k11)                (0, 1]
loglikelihood  1                nnz        1 - 1 / (1 + LLR(k11, k12, k21, k22))      [0, 1)
=============  ===============  =========  =========================================  =========

``|w|`` is the Euclidean norm, ``X`` the set of features of ``x`` (its
nonzero entries), ``k11 = |X & Y|`` the number of shared features, ``N`` the
number of distinct features of the corpus (the vectors' length, zeros
included), ``s`` a vector's standard deviation over its ``N`` entries.

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
  such features get no Pearson score.  It is not the textbook correlation:
  that is ``correlation``.
* ``correlation`` is the textbook Pearson correlation coefficient of the
  two vectors as vectors of length ``N``, zeros included: what
  ``numpy.corrcoef`` gives for the dense vectors,
  ``(N x.y - sx sy) / sqrt((N sxx - sx^2) (N syy - sy^2))`` (``sx`` the sum
  of x's weights, ``sxx`` of their squares).  It is computed from the sparse
  vectors: ``x' = x / (sqrt(N) s)`` is indexed, ``a = mean / s`` (over the
  ``N`` entries) travels with it, and the score is ``x'.y' - a b``.  ``N``
  is needed to prepare and to score (:func:`prepare` and :func:`score` take
  it as ``n_features``); a vector with more nonzero weights than ``N``
  raises ``ValueError``, as does a score beyond [-1, 1] by more than
  rounding (the pair has more features than ``N``); a smaller ``N`` that
  shows in neither gives the correlation of shorter vectors.  A vector
  constant over all ``N`` features (it has every feature of the corpus,
  all with one weight) has no variance, hence no correlation (NaN in
  numpy): its statistic is NaN, its prepared weights are 0.0, every score
  it takes part in is 0.0 and :func:`valid` is False.  A vector with fewer
  than ``N`` nonzero weights always has a correlation.  As with every
  measure, only pairs that share a feature are scored: two vectors with no
  feature in common have a (usually small, negative) correlation that the
  job does not compute.  The variance is a sum of non-negative terms
  (``N^2 s^2 = (N - nnz) sxx + nnz sum (x - mean_nz)^2``), but ``x'.y' - a
  b`` cancels: its absolute error is about ``nnz eps sqrt((1 + a^2) (1 +
  b^2))``, near ``eps`` for sparse vectors (``a^2 <= nnz / (N - nnz)``),
  larger only for vectors nearly constant over all ``N`` features.
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
weights), so cosine, Pearson, correlation, Tanimoto and Euclidean scores
are right for weights like 1e-200 or 1e300.  Scores are clamped to their range, and a
sum of products of unit weights within :data:`UNIT_SNAP` (2**-44) of +-1,
which rounding cannot tell from +-1, is taken as +-1: two identical vectors
score exactly 1.0 (cosine, Pearson, Tanimoto, Euclidean, at any scale), not
1.0000000000000002 or 0.9999999999999998 (``correlation`` too, within
:data:`UNIT_SNAP`, which holds unless the vector is nearly constant over
all ``N`` features).  Only
``dot`` passes its sums through untouched: a dot product beyond float64's
range is +-inf (NaN if infinities of both signs meet); the job should count
non-finite ``dot`` scores.  Euclidean distances are derived from dot
products, so ``|x - y|^2`` carries an absolute error of a few ``nnz * eps *
(|x|^2 + |y|^2)``: distances below about ``1e-7 max(|x|, |y|)`` are
rounding noise (as in Mahout).  No numpy floating-point warning escapes this package; inputs
that cannot come from prepared vectors (a count larger than a vector's
number of features, a missing ``n_features``) raise ``ValueError``.

Adding a measure is one :class:`Measure` entry in :data:`REGISTRY` -- its score,
its statistic and, for pruning, its ``bound`` (:data:`PRUNABLE` follows) -- (and, if
it needs new per-vector numbers, one property of :class:`~mrjobs.measures.measure._Rows`).
The entry type and the per-vector numbers are in :mod:`~mrjobs.measures.measure`, the
scores in :mod:`~mrjobs.measures.scores`, the bounds in :mod:`~mrjobs.measures.ceilings`;
the registry and the functions below are here.

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
* ``correlation``: as ``pearson``, leave out and count the vectors with
  ``not valid("correlation", stat)``; :func:`prepare_rows` and :func:`score`
  both need ``n_features=N`` (see ``loglikelihood``).
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
from types import MappingProxyType

import numpy as np

from mrjobs.measures.ceilings import (Q_SLACK, cityblock_bound, correlation_bound, dot_bound,
                                    euclidean_bound, jaccard_bound, overlap_bound, stat_bound,
                                    tanimoto_bound, unit_bound)
from mrjobs.measures.measure import Measure
from mrjobs.measures.scores import (UNIT_LIMIT, UNIT_SNAP, cityblock, correlation, cosine, dot,
                                    euclidean, jaccard, log_likelihood_ratio, loglikelihood,
                                    overlap, tanimoto)

__all__ = ["MEASURES", "PRUNABLE", "REGISTRY", "Measure", "get", "help_text", "has_stats",
           "stat_bound",
           "log_likelihood_ratio", "prepare", "prepare_rows", "score", "valid",
           # constants of the scores and bounds, as the one module had them
           "UNIT_SNAP", "UNIT_LIMIT", "Q_SLACK"]

_INF = float("inf")


#: the measures, in the order ``--help`` lists them
REGISTRY = MappingProxyType({m.name: m for m in (
    Measure("dot", "x.y", "raw", None, dot, bound=dot_bound),
    Measure("cosine", "x.y / (|x| |y|)", "unit", None, cosine, -1.0, 1.0, bound=unit_bound),
    Measure("pearson", "Mahout's Pearson: cosine of x and y with their nonzero entries "
            "centred on |x|_1/nnz(x), zero entries staying zero (not the textbook "
            "correlation over all features: see 'correlation'; a vector whose nonzero "
            "weights are all equal and positive has none)",
            "centred_unit", "scorable", cosine, -1.0, 1.0, index_zeros=False,
            bound=unit_bound),
    Measure("correlation", "the textbook Pearson correlation coefficient of x and y over "
            "all N features, zeros included, as numpy.corrcoef of the dense vectors (needs "
            "N, the corpus's number of features; a vector constant over all N features has "
            "none)", "standardised", "mean_per_sd", correlation, -1.0, 1.0,
            needs_n_features=True, bound=stat_bound(correlation_bound)),
    Measure("tanimoto", "x.y / (|x|^2 + |y|^2 - x.y), the extended (weighted) Jaccard",
            "unit", "lognorm", tanimoto, -1.0 / 3.0, 1.0, bound=stat_bound(tanimoto_bound)),
    Measure("euclidean", "1 / (1 + |x - y|)", "unit", "lognorm", euclidean, 0.0, 1.0,
            bound=stat_bound(euclidean_bound)),
    Measure("jaccard", "|X&Y| / (|X| + |Y| - |X&Y|) over the sets of features "
            "(Mahout: Tanimoto coefficient)", "binary", "count", jaccard, 0.0, 1.0,
            counts=True, bound=stat_bound(jaccard_bound)),
    Measure("overlap", "|X&Y| / min(|X|, |Y|) over the sets of features",
            "binary", "count", overlap, 0.0, 1.0, counts=True,
            bound=stat_bound(overlap_bound)),
    Measure("cooccurrence", "|X&Y|, the number of shared features",
            "binary", None, dot, 0.0, _INF, bound=dot_bound),
    Measure("cityblock", "1 / (1 + |X| + |Y| - 2 |X&Y|) over the sets of features",
            "binary", "count", cityblock, 0.0, 1.0, counts=True,
            bound=stat_bound(cityblock_bound)),
    Measure("loglikelihood", "1 - 1 / (1 + LLR), Dunning's log-likelihood ratio of the "
            "table of shared, only-x, only-y and neither features (needs the corpus's "
            "number of features)", "binary", "count", loglikelihood, 0.0, 1.0,
            needs_n_features=True, counts=True),
)})

#: names of the measures, ``dot`` first
MEASURES = tuple(REGISTRY)
#: measures whose scores :mod:`mrjobs.pairs.pruning` bounds from a dot-product
#: bound: those with a ``bound`` (loglikelihood has none: it is not monotone in
#: the shared count; correlation's is ``d - a b`` at an end of the group's range of ``b``)
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


def prepare(measure, weights, *, n_features=None):
    """The weights to index and the vector's statistic (or None).

    Parameters
    ----------
    measure : str
    weights : numpy.ndarray
        The vector's nonzero weights (1-D, finite), the whole vector.
    n_features : int, optional
        ``correlation`` only (ignored by the others): the number of distinct
        features of the corpus, the length ``N`` of the vectors.

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
    prepared, stats = m.prepare_rows(w, np.array([w.shape[0]] if w.ndim == 1 else [-1]),
                                     n_features)
    return prepared, None if stats is None else float(stats[0])


def prepare_rows(measure, weights, lengths, *, n_features=None):
    """:func:`prepare` for many vectors at once.

    Parameters
    ----------
    measure : str
    weights : numpy.ndarray
        The vectors' nonzero weights, concatenated (1-D, finite).
    lengths : numpy.ndarray
        Number of entries of each vector (integers >= 0, summing to
        ``len(weights)``); empty vectors are allowed.
    n_features : int, optional
        ``correlation`` only: see :func:`prepare`.

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
    return get(measure).prepare_rows(weights, lengths, n_features)


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
        ``loglikelihood`` and ``correlation`` only (ignored by the others):
        the number of distinct features of the corpus, Mahout's
        ``numberOfColumns`` (``correlation``'s was already taken by
        :func:`prepare`; the score checks it is given all the same).  The
        job has to count them (features of all input vectors, before any
        ``--max-df`` cut, e.g. the number of step-1 reducer keys, in a step
        or a counter of its own) and pass the count to the scoring reducers.

    Returns
    -------
    numpy.ndarray
        float64 scores.  For ``pearson`` and ``correlation`` the scores of
        pairs where either vector is not :func:`valid` are 0.0; the job must
        drop and count them.

    Raises
    ------
    ValueError
        For an unknown measure, missing statistics or ``n_features``, or
        numbers that cannot come from prepared vectors (for ``correlation``,
        a score beyond [-1, 1] by more than rounding: ``n_features`` is
        smaller than the features of the pair).

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
    all nonzero weights equal and positive, e.g. one positive weight), and
    ``correlation`` (vectors constant over all ``N`` features: every feature
    of the corpus, with equal weights); every other measure gives all True.
    Works on a single statistic (a 0-d result) or an array.

    Examples
    --------
    >>> import numpy as np
    >>> bool(valid("pearson", prepare("pearson", np.array([2.0, 2.0]))[1]))
    False
    >>> bool(valid("pearson", prepare("pearson", np.array([1.0, 2.0]))[1]))
    True
    """
    return get(measure).valid(stats)
