"""Similarity measures derived from dot products and per-vector statistics.

Each measure says how the mapper prepares a vector's weights, which
statistic travels with it, and how the reducer turns a summed dot product
into a score:

=========  ===================  ==========  ====================================
measure    weights sent         statistic   score of x, y with d = <x', y'>
=========  ===================  ==========  ====================================
dot        w                    --          d
cosine     w / ||w||            --          d  (= x.y / (||x|| ||y||))
jaccard    1 (binary)           nnz         d / (nnz x + nnz y - d)
overlap    1 (binary)           nnz         d / min(nnz x, nnz y)
tanimoto   w                    ||w||^2     d / (||x||^2 + ||y||^2 - d)
=========  ===================  ==========  ====================================

Statistics are taken from the whole vector, before any ``--max-df`` cut.
"""
import numpy as np

__all__ = ["MEASURES", "prepare", "score", "has_stats"]

MEASURES = ("dot", "cosine", "jaccard", "overlap", "tanimoto")
_STATS = {"jaccard", "overlap", "tanimoto"}


def has_stats(measure):
    """True if the measure needs a per-vector statistic on the wire."""
    return measure in _STATS


def prepare(measure, weights):
    """The weights to index and the vector's statistic (or None).

    Examples
    --------
    >>> import numpy as np
    >>> w, s = prepare("cosine", np.array([3.0, 4.0]))
    >>> w.tolist(), s
    ([0.6, 0.8], None)
    """
    if measure == "dot":
        return weights, None
    if measure == "cosine":
        norm = float(np.sqrt(np.dot(weights, weights)))
        return (weights / norm if norm else weights), None
    if measure in ("jaccard", "overlap"):
        return np.ones_like(weights), float(weights.shape[0])
    if measure == "tanimoto":
        return weights, float(np.dot(weights, weights))
    raise ValueError("unknown measure %r; expected one of %s" % (measure, MEASURES))


def score(measure, dots, self_stat, stats):
    """Scores from summed dot products (float64 arrays).

    Examples
    --------
    >>> import numpy as np
    >>> score("jaccard", np.array([1.0]), 2.0, np.array([3.0])).tolist()
    [0.25]
    """
    if measure in ("dot", "cosine"):
        return dots
    if measure in ("jaccard", "tanimoto"):
        return dots / (self_stat + stats - dots)
    if measure == "overlap":
        return dots / np.minimum(self_stat, stats)
    raise ValueError("unknown measure %r; expected one of %s" % (measure, MEASURES))
