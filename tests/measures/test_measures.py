"""mrjobs.measures against references computed another way.

Each measure is scored from pair dots that the tests compute themselves
(dense numpy products of the prepared weights), and compared with a
reference built from the raw dense vectors: scipy.spatial.distance, numpy
for Pearson (Mahout's) and numpy.corrcoef for the correlation, Dunning's
entropies in exact decimal arithmetic for the log-likelihood ratio.  Corpora are Zipf-distributed with a fixed seed and
carry the awkward cases (one-feature vectors, identical, scaled and negated
copies, a feature in every vector, vectors that centre to zero).
"""
import math
from decimal import Decimal, localcontext

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cdist

from mrjobs import measures
from mrjobs.measures import measure as measure_entry
from mrjobs.measures import (MEASURES, REGISTRY, get, has_stats, help_text,
                             log_likelihood_ratio, prepare, prepare_rows, score, valid)

RTOL = 1e-9
ATOL = 1e-12  # cancellation in a sum of products of mixed signs, both sides


# -- corpora ------------------------------------------------------------------

def zipf_corpus(seed, n_vectors=150, n_features=300):
    """Dense matrix (vectors x features) with Zipfian features and awkward rows."""
    rng = np.random.default_rng(seed)
    rows = []
    every = n_features - 1  # a feature in every vector
    for _ in range(n_vectors):
        nnz = int(min(rng.zipf(1.7), 30))
        feats = np.unique(np.minimum(rng.zipf(1.3, size=nnz), every) - 1)
        x = np.zeros(n_features)
        w = rng.lognormal(0.0, 1.0, size=feats.shape[0])
        kind = rng.integers(4)
        if kind == 1:
            w = rng.integers(1, 4, size=w.shape[0]).astype(float)  # ties, exact means
        elif kind == 2:
            w *= np.where(rng.random(w.shape[0]) < 0.3, -1.0, 1.0)
        x[feats] = w
        x[every] = rng.lognormal()
        rows.append(x)
    base = np.array(rows)

    def only(w):
        x = np.zeros(n_features)
        x[every] = w
        return x

    def equal(k, w):
        x = np.zeros(n_features)
        x[rng.choice(every, size=k, replace=False)] = w
        x[every] = w
        return x

    extra = [
        base[3], base[3], base[10],           # identical vectors
        3.0 * base[5], -base[7], -base[7],    # scaled and negated copies
        only(2.0), only(0.5), only(-3.0),     # one-feature vectors
        equal(4, 0.1), equal(2, 2.5),         # centre to zero (pearson)
        equal(3, -2.0),                       # equal but negative: centres to -2 each
    ]
    X = np.vstack([base] + extra)
    used = (X != 0).any(axis=0)
    return X[:, used]


CORPORA = [zipf_corpus(seed) for seed in (11, 12)]


def csr_parts(X):
    """Concatenated nonzero weights and per-vector lengths, row by row."""
    mask = X != 0
    return X[mask], mask.sum(axis=1)


def prepared_dense(measure, X, n_features=None):
    """Dense prepared weights and the statistics, through prepare_rows."""
    w, lengths = csr_parts(X)
    pw, stats = prepare_rows(measure, w, lengths, n_features=n_features)
    P = np.zeros_like(X)
    P[X != 0] = pw
    return P, stats


def all_scores(measure, X, n_features=None):
    """Scores of every pair (i, j), from dense dots of the prepared weights."""
    P, stats = prepared_dense(measure, X, n_features)
    D = P @ P.T
    S = np.empty_like(D)
    for i in range(X.shape[0]):
        S[i] = score(measure, D[i], None if stats is None else stats[i], stats,
                     n_features=n_features)
    return S, stats


# -- references ---------------------------------------------------------------

def _dec_xlogx(k, cache={}):
    if k not in cache:
        cache[k] = Decimal(0) if k == 0 else Decimal(k) * Decimal(k).ln()
    return cache[k]


def dunning_llr(k11, k12, k21, k22):
    """LLR from unnormalised entropies (Dunning), in 50-digit decimals."""
    def h(*ks):
        return _dec_xlogx(sum(ks)) - sum(_dec_xlogx(k) for k in ks)
    with localcontext() as ctx:
        ctx.prec = 50
        return 2 * (h(k11 + k12, k21 + k22) + h(k11 + k21, k12 + k22) - h(k11, k12, k21, k22))


def reference(measure, X):
    """Scores of every pair from the raw dense vectors (NaN where undefined)."""
    B = (X != 0).astype(float)
    nnz = B.sum(axis=1)
    C = B @ B.T
    D = X @ X.T
    sq = (X * X).sum(axis=1)
    if measure == "dot":
        return D
    if measure == "cosine":
        return 1.0 - cdist(X, X, "cosine")
    if measure == "tanimoto":
        return D / (sq[:, None] + sq[None, :] - D)
    if measure == "euclidean":
        return 1.0 / (1.0 + cdist(X, X, "euclidean"))
    if measure == "jaccard":
        return 1.0 - cdist(B.astype(bool), B.astype(bool), "jaccard")
    if measure == "overlap":
        return C / np.minimum(nnz[:, None], nnz[None, :])
    if measure == "cooccurrence":
        return C
    if measure == "cityblock":
        return 1.0 / (1.0 + cdist(B, B, "cityblock"))
    if measure == "pearson":
        # Mahout: centre the nonzero entries on mean |x|, then cosine
        mean = np.abs(X).sum(axis=1) / nnz
        Z = np.where(X != 0, X - mean[:, None], 0.0)
        ok = ~pearson_undefined(X)
        S = np.full(D.shape, np.nan)
        S[np.ix_(ok, ok)] = 1.0 - cdist(Z[ok], Z[ok], "cosine")
        return S
    if measure == "correlation":
        # the textbook coefficient over all features; NaN for a constant vector
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.corrcoef(X)
    if measure == "loglikelihood":
        n = X.shape[1]
        S = np.empty(D.shape)
        for i in range(X.shape[0]):
            for j in range(X.shape[0]):
                k11 = int(C[i, j])
                llr = dunning_llr(k11, int(nnz[i]) - k11, int(nnz[j]) - k11,
                                  n - int(nnz[i]) - int(nnz[j]) + k11)
                with localcontext() as ctx:
                    ctx.prec = 50
                    S[i, j] = float(1 - 1 / (1 + llr))
        return S
    raise AssertionError("no reference for %r" % measure)


def pearson_undefined(X):
    """Vectors whose nonzero weights are all equal and positive."""
    out = []
    for x in X:
        w = x[x != 0]
        out.append(bool(w.size) and (w > 0).all() and (w == w[0]).all())
    return np.array(out)


REFERENCED = ("dot", "cosine", "pearson", "correlation", "tanimoto", "euclidean", "jaccard",
              "overlap", "cooccurrence", "cityblock", "loglikelihood")


# -- tests --------------------------------------------------------------------

def test_every_measure_has_a_reference():
    # a measure added to the registry without a reference here fails this test
    assert set(REFERENCED) == set(MEASURES)


def test_registry():
    assert MEASURES[0] == "dot"
    assert len(set(MEASURES)) == len(MEASURES)
    # Mahout's VectorSimilarityMeasures, by our names
    assert {"cooccurrence", "loglikelihood", "jaccard", "cityblock", "cosine", "pearson",
            "euclidean"} <= set(MEASURES)
    lines = help_text().splitlines()
    assert len(lines) == len(MEASURES)
    for name, line in zip(MEASURES, lines):
        assert line.startswith("%r: " % name)
        assert get(name) is REGISTRY[name]
        assert line.isascii() and "%" not in line  # argparse help
    for m in REGISTRY.values():
        assert hasattr(measure_entry._Rows, m.weights)
        assert m.stat is None or hasattr(measure_entry._Rows, m.stat)
        assert has_stats(m.name) == (m.stat is not None)
    with pytest.raises(ValueError, match="unknown measure 'cosin'.*cosine"):
        get("cosin")
    with pytest.raises(ValueError, match="unknown measure"):
        prepare("nope", np.ones(2))


def test_dot_products_job_offers_every_measure():
    from mrjobs.dot_products import MRSparseDotProducts
    job = MRSparseDotProducts([])
    action = next(a for a in job.arg_parser._actions if "--measure" in a.option_strings)
    assert tuple(action.choices) == MEASURES
    for m in REGISTRY.values():
        assert m.formula in action.help


@pytest.mark.parametrize("measure", MEASURES)
@pytest.mark.parametrize("X", CORPORA, ids=["seed11", "seed12"])
@pytest.mark.slow
def test_against_reference(measure, X):
    n_features = X.shape[1]
    got, stats = all_scores(measure, X, n_features=n_features)
    want = reference(measure, X)
    assert np.isfinite(got).all()
    m = get(measure)
    assert (got >= m.lo).all() and (got <= m.hi).all()
    ok = ~np.isnan(want)
    if measure == "pearson":
        bad = pearson_undefined(X)
        assert bad.sum() >= 4  # the corpus has the cases (two one-feature, two equal)
        assert (valid(measure, stats) == ~bad).all()
        assert (got[bad] == 0).all() and (got[:, bad] == 0).all()
        assert ok.sum() == (~bad).sum() ** 2
    else:
        assert ok.all()
        assert valid(measure, stats).all()
    if measure == "euclidean":
        # distances come from dot products: |x - y|^2 has an absolute error of
        # order nnz eps (|x|^2 + |y|^2), so compare near-identical pairs that way
        sq = (X * X).sum(axis=1)
        scale = sq[:, None] + sq[None, :]
        d2_ref = cdist(X, X, "euclidean") ** 2
        near = d2_ref < 1e-4 * scale
        assert near.sum() > X.shape[0]  # the diagonal and the identical copies
        d2_got = (1.0 / got - 1.0) ** 2
        assert (np.abs(d2_got - d2_ref)[near] <= 1e-12 * scale[near]).all()
        ok &= ~near
    np.testing.assert_allclose(got[ok], want[ok], rtol=RTOL, atol=ATOL)


def test_awkward_cases_score_exactly():
    X = CORPORA[0]
    n = X.shape[0]
    ident = (n - 12, n - 11)   # base[3] twice
    neg = (n - 8, n - 7)       # -base[7] twice
    scaled = (n - 9, 5)        # 3 * base[5] and base[5]
    for measure in ("cosine", "tanimoto", "euclidean", "jaccard", "overlap", "cityblock"):
        S, _ = all_scores(measure, X)
        assert S[ident] == 1.0, measure
        assert S[neg] == 1.0, measure
        assert (np.diag(S) == 1.0).all(), measure
    cos, _ = all_scores("cosine", X)
    assert cos[scaled] == 1.0
    assert cos[neg[0], 7] == -1.0
    # correlation too: invariant under scaling, -1 with the negated copy
    cor, _ = all_scores("correlation", X, n_features=X.shape[1])
    assert cor[ident] == cor[neg] == cor[scaled] == 1.0
    assert (np.diag(cor) == 1.0).all()
    assert cor[neg[0], 7] == -1.0
    tan, _ = all_scores("tanimoto", X)
    assert tan[neg[0], 7] == -1.0 / 3.0
    # the feature in every vector: every pair shares at least one feature
    co, _ = all_scores("cooccurrence", X)
    assert (co >= 1).all()


def test_score_broadcasts_rows_and_pairs_alike():
    X = CORPORA[1]
    for measure in MEASURES:
        P, stats = prepared_dense(measure, X, X.shape[1])
        D = P @ P.T
        rows, _ = all_scores(measure, X, n_features=X.shape[1])
        i, j = np.triu_indices(X.shape[0])
        pairs = score(measure, D[i, j], None if stats is None else stats[i],
                      None if stats is None else stats[j], n_features=X.shape[1])
        assert pairs.tobytes() == rows[i, j].tobytes(), measure


@pytest.mark.parametrize("measure", MEASURES)
@pytest.mark.parametrize("X", CORPORA, ids=["seed11", "seed12"])
def test_the_score_of_x_y_is_the_score_of_y_x_bit_for_bit(measure, X):
    # a pair is scored once, with either vector first (the row of its block
    # pair or of a diagonal block's upper triangle): which one depends on
    # --blocks, and the job's bytes must not
    n = X.shape[1]
    P, stats = prepared_dense(measure, X, n)
    i, j = np.triu_indices(X.shape[0], 1)
    d = (P @ P.T)[i, j]
    a, b = (None, None) if stats is None else (stats[i], stats[j])
    xy = score(measure, d, a, b, n_features=n)
    yx = score(measure, d, b, a, n_features=n)
    differ = np.flatnonzero(xy.view(np.uint64) != yx.view(np.uint64))
    assert not differ.shape[0], (measure, differ.shape[0], xy[differ[0]], yx[differ[0]])


@pytest.mark.parametrize("measure", MEASURES)
def test_prepare_rows_equals_prepare_bit_for_bit(measure):
    rng = np.random.default_rng(5)
    X = CORPORA[0]
    vectors = [x[x != 0] for x in X]
    # empty vectors at the start, the end, and between
    for p in (0, 7, 7, 40, len(vectors)):
        vectors.insert(p, np.zeros(0))
    vectors.append(rng.standard_normal(700) * 10.0 ** rng.integers(-200, 200, size=700))
    lengths = np.array([v.shape[0] for v in vectors])
    n = 1000  # correlation's N
    pw, stats = prepare_rows(measure, np.concatenate(vectors), lengths, n_features=n)
    assert pw.dtype == np.float64 and pw.shape == (lengths.sum(),)
    assert (stats is None) == (not has_stats(measure))
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    for k, v in enumerate(vectors):
        w, s = prepare(measure, v, n_features=n)
        assert w.tobytes() == pw[offsets[k]:offsets[k + 1]].tobytes()
        if stats is None:
            assert s is None
        else:
            assert isinstance(s, float)
            assert np.float64(s).tobytes() == stats[k].tobytes()
            assert not np.isnan(s) or (measure == "correlation" and not v.shape[0])


def test_prepare_rows_checks_its_input():
    with pytest.raises(ValueError, match="add up to 3 but there are 2 weights"):
        prepare_rows("cosine", np.ones(2), np.array([1, 2]))
    with pytest.raises(ValueError, match="non-negative integers"):
        prepare_rows("cosine", np.ones(2), np.array([3, -1]))
    with pytest.raises(ValueError, match="finite"):
        prepare_rows("tanimoto", np.array([1.0, np.inf]), np.array([2]))
    w, s = prepare_rows("pearson", np.zeros(0), np.zeros(0, dtype=int))
    assert w.shape == (0,) and s.shape == (0,)


def test_measure_clamps_to_its_range():
    m = measures.Measure("test", "x", "raw", None, lambda d, a, b, n: d, 0.0, 1.0)
    assert m.score(np.array([1.5, -0.5, 0.25]), None, None).tolist() == [1.0, 0.0, 0.25]
    # rounding just beyond +-1 is clamped; further out is a wiring error
    assert score("cosine", np.array([1 + 2e-16, -1 - 2e-16]), None, None).tolist() == [1, -1]
    with pytest.raises(ValueError, match="beyond rounding"):
        score("cosine", np.array([1.5]), None, None)
    with pytest.raises(ValueError, match="beyond rounding"):
        score("euclidean", np.array([-1.1]), 0.0, np.array([0.0]))


def test_loglikelihood_needs_n_features_and_sane_counts():
    d = np.array([1.0, 2.0])
    with pytest.raises(ValueError, match="needs n_features"):
        score("loglikelihood", d, 3.0, np.array([2.0, 4.0]))
    with pytest.raises(ValueError, match="negative count.*n_features"):
        score("loglikelihood", d, 3.0, np.array([2.0, 4.0]), n_features=4)
    with pytest.raises(ValueError, match="larger than a vector's number of features"):
        score("jaccard", np.array([3.0]), 2.0, np.array([5.0]))
    with pytest.raises(ValueError, match="not a whole number"):
        score("cityblock", np.array([0.5]), 2.0, np.array([5.0]))
    with pytest.raises(ValueError, match="needs the statistics"):
        score("tanimoto", d, None, None)


def test_loglikelihood_matches_mahout_arithmetic():
    """Same quantity as Mahout's entropy form computed in float64 (with its
    rounding), including its argument order (k12 = only in the other vector)."""
    def xlogx(k):
        return np.where(k == 0, 0.0, k * np.log(np.where(k == 0, 1.0, k)))

    def mahout_llr(k11, k12, k21, k22):
        def h2(a, b):
            return xlogx(a + b) - xlogx(a) - xlogx(b)
        row = h2(k11 + k12, k21 + k22)
        col = h2(k11 + k21, k12 + k22)
        mat = xlogx(k11 + k12 + k21 + k22) - xlogx(k11) - xlogx(k12) - xlogx(k21) - xlogx(k22)
        return np.maximum(2.0 * (row + col - mat), 0.0)

    rng = np.random.default_rng(8)
    n = 5000.0
    na = rng.integers(1, 400, size=2000).astype(float)
    nb = rng.integers(1, 400, size=2000).astype(float)
    k11 = np.floor(rng.random(2000) * np.minimum(na, nb)) + 1
    ours = log_likelihood_ratio(k11, na - k11, nb - k11, n - na - nb + k11)
    theirs = mahout_llr(k11, nb - k11, na - k11, n - na - nb + k11)
    # Mahout's rounding: a few eps times the largest entropy term, n log n
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=64 * np.finfo(float).eps * n * np.log(n))
    got = score("loglikelihood", k11, na, nb, n_features=n)
    np.testing.assert_allclose(got, ours / (1 + ours), rtol=1e-15)


def test_loglikelihood_near_independence_keeps_precision():
    # a table close to independence: the entropy form loses most digits to
    # cancellation, the sum of non-negative terms does not
    n = 1000000
    for k11, na, nb in ((1, 1000, 1001), (10, 3163, 3162), (2, 1414, 1415)):
        want = float(dunning_llr(k11, na - k11, nb - k11, n - na - nb + k11))
        got = float(log_likelihood_ratio(k11, na - k11, nb - k11, n - na - nb + k11))
        assert 1e-12 < want < 1e-3
        assert math.isclose(got, want, rel_tol=1e-11), (k11, na, nb, got, want)
    # every cell large and close to its expectation (|u| ~ 1e-6): the terms
    # (1 + u) log(1 + u) - u need their series to keep 1e-11
    n = 10 ** 8
    k11, na, nb = 10 ** 4, 10 ** 6, 10 ** 6 + 1
    want = float(dunning_llr(k11, na - k11, nb - k11, n - na - nb + k11))
    got = float(log_likelihood_ratio(k11, na - k11, nb - k11, n - na - nb + k11))
    assert 1e-12 < want < 1e-6
    assert math.isclose(got, want, rel_tol=1e-11), (got, want)
    # exactly independent (k11 = E11 = 1): exactly 0
    n = 1000000
    assert float(log_likelihood_ratio(1, 999, 999, n - 1999)) == 0.0


# -- extreme weights ------------------------------------------------------------

EXTREME = np.array([
    [1e-200, 2e-200, 3e-200, 0.0],
    [1e-200, 2e-200, 3e-200, 0.0],
    [1e200, 2e200, 3e200, 0.0],
    [1e200, 2e200, 3e200, 0.0],
    [1e-200, 1e200, 0.0, 5e-300],
    [1e-200, 1e200, 0.0, 5e-300],
    [1.5e308, -1.7e308, 1e308, 1e308],  # even |x| overflows float64
    [1.5e308, -1.7e308, 1e308, 1e308],
    [5e-324, 1e-323, 0.0, 0.0],         # subnormal
    [5e-324, 1e-323, 0.0, 0.0],
    [1e200, 1e200, 1e200, 1e200],       # centres to zero
    [-1e-200, 3e-200, 2e-200, 0.0],
    [7.0, -1e200, 2e-300, 1.0],
])


def exact_reference(measure, x, y):
    """Score of one pair in 60-digit decimals from the exact float values,
    and the ratio of the smaller norm to the larger."""
    with localcontext() as ctx:
        ctx.prec = 60
        a = [Decimal(float(v)) for v in x]
        b = [Decimal(float(v)) for v in y]
        if measure == "pearson":
            def centre(v):
                nz = [e for e in v if e != 0]
                mean = sum(abs(e) for e in nz) / len(nz)
                return [e - mean if e != 0 else Decimal(0) for e in v]
            a, b = centre(a), centre(b)
        if measure == "correlation":  # centred over all entries, zeros included
            a = [e - sum(a) / len(a) for e in a]
            b = [e - sum(b) / len(b) for e in b]
        ab = sum(p * q for p, q in zip(a, b))
        aa = sum(p * p for p in a)
        bb = sum(q * q for q in b)
        t = float(min(aa, bb).sqrt() / max(aa, bb).sqrt())
        if measure in ("cosine", "pearson", "correlation"):
            return float(ab / (aa * bb).sqrt()), t
        if measure == "tanimoto":
            return float(ab / (aa + bb - ab)), t
        if measure == "euclidean":
            return float(1 / (1 + sum((p - q) ** 2 for p, q in zip(a, b)).sqrt())), t
    raise AssertionError(measure)


@pytest.mark.parametrize("measure", ["cosine", "pearson", "correlation", "tanimoto",
                                     "euclidean"])
def test_extreme_weights(measure):
    X = EXTREME
    # any floating-point event (but underflow, also in the dots here) not handled inside fails
    with np.errstate(all="raise", under="ignore"):
        got, stats = all_scores(measure, X, n_features=X.shape[1])
    ok = np.broadcast_to(valid(measure, stats), X.shape[:1])
    # the constant row: centres to zero (pearson), no variance over N = 4 (correlation)
    assert ok.tolist() == [True] * 10 + [measure not in ("pearson", "correlation"), True, True]
    for i in range(X.shape[0]):
        for j in range(X.shape[0]):
            if not (ok[i] and ok[j]):
                assert got[i, j] == 0.0
                continue
            if (X[i] == X[j]).all():
                assert got[i, j] == 1.0, (i, j)  # exactly
            want, t = exact_reference(measure, X[i], X[j])
            # cancellation in x.y is absolute: about eps for a cosine, eps * t
            # for a Tanimoto score (t = min(|x|, |y|) / max(|x|, |y|))
            atol = {"cosine": ATOL, "pearson": ATOL, "correlation": ATOL,
                    "tanimoto": ATOL * t}.get(measure, 0.0)
            assert math.isclose(got[i, j], want, rel_tol=RTOL, abs_tol=atol), (
                i, j, got[i, j], want)


def test_extreme_statistics_are_finite():
    # the log norm of a vector whose norm overflows float64 is finite
    _, s = prepare("tanimoto", np.array([1.7e308, 1.7e308, -1.7e308]))
    assert math.isclose(s, math.log(1.7e308) + 0.5 * math.log(3), rel_tol=1e-15)
    _, s = prepare("euclidean", np.array([5e-324]))
    assert math.isclose(s, math.log(5e-324), rel_tol=1e-15)
    _, s = prepare("euclidean", np.zeros(0))
    assert s == -math.inf


# -- any finite weights ---------------------------------------------------------

HYPOTHESIS = settings(derandomize=True, max_examples=150, deadline=None)
finite_weights = st.floats(allow_nan=False, allow_infinity=False).filter(lambda v: v != 0)
vectors = st.lists(st.lists(finite_weights, max_size=12), min_size=1, max_size=6)


@HYPOTHESIS
@given(vectors)
@pytest.mark.slow
def test_any_finite_weights(vecs):
    arrays = [np.array(v, dtype=np.float64) for v in vecs]
    lengths = np.array([a.shape[0] for a in arrays])
    flat = np.concatenate(arrays)
    n = 13  # longer than any vector: each has a zero entry (correlation, loglikelihood)
    for measure in MEASURES:
        with np.errstate(all="raise", under="ignore"):
            pw, stats = prepare_rows(measure, flat, lengths, n_features=n)
        assert np.isfinite(pw).all()
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        for k, a in enumerate(arrays):
            w, s = prepare(measure, a, n_features=n)
            assert w.tobytes() == pw[offsets[k]:offsets[k + 1]].tobytes()
            if s is not None:
                assert np.float64(s).tobytes() == stats[k].tobytes()
            if not a.shape[0] or measure == "dot":
                continue
            with np.errstate(all="raise", under="ignore"):
                self_dot = np.array([np.dot(w, w)])
                got = score(measure, self_dot, s, None if s is None else np.array([s]),
                            n_features=n)
            if measure in ("cosine", "correlation", "tanimoto", "euclidean", "jaccard",
                           "overlap", "cityblock") or (measure == "pearson" and valid(measure, s)):
                assert got.tolist() == [1.0], (measure, a)  # a vector with itself
            elif measure == "pearson":
                assert got.tolist() == [0.0] and not w.any()
            elif measure == "cooccurrence":
                assert got.tolist() == [a.shape[0]]
            else:
                assert measure == "loglikelihood" and 0.0 < got[0] < 1.0
