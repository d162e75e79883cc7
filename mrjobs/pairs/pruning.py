"""Exact pruning of block-pair products: bounds that skip what cannot qualify.

With ``--threshold T`` or ``--top-k K`` most products of a block pair are
thrown away after they are computed.  This module finds, before the
product, the rows and columns of a block pair that *cannot* give a score
that is kept, from summaries of the other side (after All-Pairs, Bayardo,
Ma & Srikant 2007, and L2AP, Anastasiu & Karypis 2014):

* A *group* is a set of vectors of one block (the whole block, or a fine
  slice of it).  Its summary is the per-feature maximum of the absolute
  prepared weights, ``M[g, f] = max |y_f|`` over the vectors ``y`` of the
  group (:func:`feature_max`), and the range of the vectors' statistics
  (:func:`stat_range`).
* A vector ``x`` gets an upper bound on ``x . y`` against every vector of a
  group in one sparse product, ``sum_f |x_f| M[g, f]`` (:func:`dot_bounds`),
  and from it, with the statistics' ranges, an upper bound on the score
  (:func:`score_bounds`).
* A (row, column group) combination whose bound is below what a score must
  reach is not multiplied (:func:`live_cells`, :func:`pruned_products`).
  With a threshold that is ``T``; with top-k each vector gets its own floor,
  the k-th best score of a cheap first pass over its most promising group
  (:func:`topk_floors`): a pair scoring below both vectors' floors is in
  neither vector's top-k.

Everything here is a pure function of scipy CSR matrices of prepared
weights (rows: vectors, columns: features), numpy arrays of statistics and
the measure's name; nothing depends on a job.

Which measures
--------------
A measure can be pruned when its score is monotone non-decreasing in the
dot product for fixed statistics, and the worst case of the statistics
over a group is known in closed form (:data:`SUPPORTED`):

* ``dot``, ``cooccurrence``: the score is the dot product.
* ``cosine``, ``pearson``: the score is the (clamped) dot product of unit
  (or centred unit) weights.
* ``correlation``: the score is ``d - a b`` (``a``, ``b`` the vectors'
  ``mean / sd``), largest at the end of the group's range of ``b`` where
  ``a b`` is smallest.  A vector without variance has a NaN statistic (the
  job does not index it): its group's range is NaN, and so are its bounds,
  which keep their cells live.
* ``tanimoto``: ``c t / (1 + t^2 - c t)`` with ``c`` the cosine and ``t``
  the ratio of the smaller norm to the larger; for ``c >= 0`` it grows with
  ``c`` and with ``t``, so the group's norm closest to the row's gives the
  bound (``c < 0`` scores at most 0).
* ``euclidean``: ``1 / (1 + |x - y|)`` with ``|x - y|^2 = |x|^2 + |y|^2 -
  2 |x| |y| c``: smallest at ``|y| = |x| c`` clamped into the group's range.
* ``jaccard``, ``overlap``, ``cityblock``: counts of shared features; the
  bound on the count is exact, and the worst count of the group's vectors
  is found in closed form (see :func:`score_bounds`).
* ``loglikelihood`` is *not* pruned: the log-likelihood ratio is large for
  pairs that share far fewer features than expected as well as far more,
  so it is not monotone in the shared count.

Exactness in floating point
---------------------------
The job computes each dot product ``d^`` as a floating-point sum of at
most ``n = nnz(x)`` products.  Whatever the order of the additions, and
with or without fused multiply-adds, ``|d^ - x.y| <= g_n sum_f |x_f y_f| +
n eta``, ``g_n = n u / (1 - n u)``, ``u = 2**-53``, ``eta = 2**-1074`` for
underflow (Higham, *Accuracy and Stability of Numerical Algorithms*,
section 3.1).  Since ``|y_f| <= M[g, f]``, ``sum_f |x_f y_f| <= U = sum_f
|x_f| M[g, f]``, and the computed ``U^`` (also a sum of ``n`` products of
non-negative numbers) is at least ``U (1 - g_n) - n eta``.  So ``d^ <= U^
(1 + g_n) / (1 - g_n) + 3 n eta <= U^ (1 + 2.2 n u) + 3 n eta`` for ``n u
<= 0.01``: :func:`dot_bounds` returns ``U^ (1 + n 2**-40) + n 2**-1000``,
which is larger by a factor of several thousand in the slack.  The scores
are monotone in the dot product in exact arithmetic; the job's scoring is
monotone in floating point for every supported measure but ``tanimoto``
and ``euclidean`` (whose rounding stays far below a relative ``2**-30``,
see :func:`score_bounds`), and every score bound is raised by that
relative ``2**-30`` before it is compared.  A pruned pair therefore never
holds a score that the job would keep: the output is the same bytes.

The bounds are in :mod:`mrjobs.pairs.cellbounds`, the plan of a block pair
(:class:`PairPlan`) in :mod:`mrjobs.pairs.pairplan`; this module holds their
public names.
"""
from mrjobs.pairs.cellbounds import (DOT_SLACK, DOT_TINY, Q_SLACK, SCORE_SLACK, SUPPORTED,
                                      dot_bounds, feature_max, group_floor, group_rows,
                                      live_cells, score_bounds, side_bounds, stat_range,
                                      supports, topk_floors)
from mrjobs.pairs.pairplan import Layout, PairPlan, PruneSpec, product, product_t

__all__ = ["SUPPORTED", "supports", "group_rows", "feature_max", "stat_range",
           "dot_bounds", "score_bounds", "side_bounds", "group_floor", "live_cells",
           "topk_floors", "product", "Layout", "PairPlan", "PruneSpec",
           # the constants and product_t, as the one module had them
           "DOT_SLACK", "DOT_TINY", "SCORE_SLACK", "Q_SLACK", "product_t"]
