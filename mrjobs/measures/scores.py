"""The measures' scores: each ``combine(d, a, b, n_features)`` of the
registry, from summed products ``d`` and the two vectors' statistics, and
Dunning's log-likelihood ratio."""
import numpy as np

__all__ = ["UNIT_SNAP", "UNIT_LIMIT", "log_likelihood_ratio", "dot", "cosine", "tanimoto",
           "euclidean", "jaccard", "overlap", "cityblock", "loglikelihood", "correlation",
           "CORR_ROUNDING"]

_INF = float("inf")


def dot(d, a, b, n):
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
    return _snap(d)


def _snap(d):
    """Clamped to [-1, 1], and exactly +-1 within :data:`UNIT_SNAP` of it."""
    c = np.clip(d, -1.0, 1.0)
    c[c >= 1.0 - UNIT_SNAP] = 1.0
    c[c <= UNIT_SNAP - 1.0] = -1.0
    return c


def cosine(d, a, b, n):
    return _unit_dot(d)


def tanimoto(d, a, b, n):
    # x.y / (|x|^2 + |y|^2 - x.y), divided through by max(|x|, |y|)^2; the
    # denominator is at least 3/4, so nothing overflows or divides by zero
    c = _unit_dot(d)
    t, _ = _ratio(a, b)
    ct = c * t
    return ct / (1.0 + t * t - ct)


def euclidean(d, a, b, n):
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


def jaccard(d, a, b, n):
    den = a + b - d
    return np.divide(d, den, out=np.zeros(np.broadcast(d, den).shape), where=den > 0)


def overlap(d, a, b, n):
    den = np.minimum(a, b)
    return np.divide(d, den, out=np.zeros(np.broadcast(d, den).shape), where=den > 0)


def cityblock(d, a, b, n):
    return 1.0 / (1.0 + (a + b) - 2.0 * d)  # (a + b): the score of (x, y) is (y, x)'s


def loglikelihood(d, a, b, n):
    llr = log_likelihood_ratio(d, a - d, b - d, n - a - b + d)
    return llr / (1.0 + llr)


#: a correlation beyond [-1, 1] by more than this times ``sqrt((1 + a^2) (1 +
#: b^2))`` (the scale of its rounding, ``|x'| |y'|``) is not rounding
CORR_ROUNDING = 2.0 ** -20


def correlation(d, a, b, n):
    # r = x'.y' - a b with x' = x / (sqrt(N) sd(x)), a = mean(x) / sd(x): the
    # covariance over the N features divided by both standard deviations.  A
    # NaN statistic (no variance) scores 0.0, as pearson's vectors that centre
    # to zero do: the job leaves such vectors out
    ok = ~(np.isnan(a) | np.isnan(b))
    a = np.where(ok, a, 0.0)
    b = np.where(ok, b, 0.0)
    r = d - a * b
    # |x'|^2 = 1 + a^2: the products' scale, what rounding is relative to
    beyond = np.abs(r) > 1.0 + CORR_ROUNDING * np.sqrt((1.0 + a * a) * (1.0 + b * b))
    if beyond.any():
        raise ValueError("a correlation of %r, beyond rounding of [-1, 1]: is n_features the "
                         "number of distinct features of the whole corpus?"
                         % float(np.broadcast_to(r, beyond.shape)[beyond][0]))
    return np.where(ok, _snap(r), 0.0)


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
    terms = []
    for k, r, c, sign in ((k11, r1, c1, 1.0), (k12, r1, c2, -1.0),
                          (k21, r2, c1, -1.0), (k22, r2, c2, 1.0)):
        rc = r * c
        live = rc > 0  # rc == 0 means k == 0 and E == 0: no term
        u = np.zeros(k.shape)
        u[live] = sign * det[live] / rc[live]
        e = np.zeros(k.shape)
        e[live] = rc[live] / n[live]
        terms.append(e * _f(u, k == 0))
    # the diagonal cells and the two off-diagonal ones summed apart: swapping
    # k12 and k21 (x and y) swaps two terms of a sum of two, so the ratio of
    # (x, y) is that of (y, x) to the bit
    return 2.0 * ((terms[0] + terms[3]) + (terms[1] + terms[2]))


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
