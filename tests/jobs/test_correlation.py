"""--measure correlation, the textbook Pearson correlation over all N features,
through the dot-products job against numpy.corrcoef of the dense vectors, and
its --num-features: required, checked against the vectors, taken by the
planner.  (tests/measures/test_measures.py and test_job_measures.py hold it to
its reference among every measure; tests/pairs its pruning bound.)"""
import json
import subprocess
import sys
import uuid

import numpy as np
import pytest

from mrjobs.counters import INPUT, NOT_SCORABLE
from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.runtime.failures import TaskFailed
from tests.jobs_helpers import run


def _uuid(rng):
    return str(uuid.UUID(bytes=rng.bytes(16)))


def sparse_vectors(seed, n=60, vocab=25, most=8):
    """(ids, dense matrix, feature ids, JSON lines): random sparse vectors with
    weights of both signs (some whole numbers), each with 1 to ``most`` features."""
    rng = np.random.default_rng(seed)
    feats = [_uuid(rng) for _ in range(vocab)]
    ids = [_uuid(rng) for _ in range(n)]
    X = np.zeros((n, vocab))
    for i in range(n):
        cols = rng.choice(vocab, size=rng.integers(1, most + 1), replace=False)
        w = rng.normal(0.0, 2.0, cols.shape[0])
        if i % 3 == 0:
            w = np.round(w) + np.where(np.round(w) == 0, 1.0, 0.0)  # whole numbers, no zero
        X[i, cols] = w
    return ids, X, feats, to_lines(ids, X, feats)


def to_lines(ids, X, feats):
    return [json.dumps({"id": d, "features": {feats[j]: float(x[j]) for j in np.flatnonzero(x)}})
            for d, x in zip(ids, X)]


def expected(ids, X, n_features, include_self=False):
    """Every pair sharing a feature: numpy.corrcoef over ``n_features`` columns
    (the features no vector has are zeros); vectors without variance get nothing."""
    dense = np.hstack([X, np.zeros((X.shape[0], n_features - X.shape[1]))])
    with np.errstate(divide="ignore", invalid="ignore"):
        R = np.corrcoef(dense)
    B = (X != 0).astype(float)
    shared = B @ B.T > 0
    out = {}
    for i, d in enumerate(ids):
        row = {ids[j]: float(R[i, j]) for j in np.flatnonzero(shared[i])
               if (include_self or j != i) and not np.isnan(R[i, j])}
        if row:
            out[d] = row
    return out


def check(result, want):
    got = {str(k): {str(n): s for n, s in row.items()} for k, row in result.output}
    assert set(got) == set(want)
    for d, row in want.items():
        assert set(got[d]) == set(row), d
        np.testing.assert_allclose([got[d][n] for n in row], list(row.values()),
                                   rtol=1e-9, atol=1e-12, err_msg=d)


def args(n_features, *more):
    return ["--measure", "correlation", "--num-features", str(n_features), *more]


@pytest.mark.parametrize("strategy", ["blocks", "stripes"])
@pytest.mark.parametrize("extra", [0, 40])
@pytest.mark.slow
@pytest.mark.smoke
def test_matches_numpy_corrcoef(strategy, extra):
    # N counts the features no vector has too: the same vectors correlate
    # differently with 40 more
    ids, X, feats, lines = sparse_vectors(1)
    n = X.shape[1] + extra
    result = run(args(n, "--blocks", "3") if strategy == "blocks" else args(n),
                 lines=lines, strategy=strategy)
    check(result, expected(ids, X, n))
    assert NOT_SCORABLE not in result.counters.get(INPUT, {})


def test_include_self_and_top_k():
    ids, X, feats, lines = sparse_vectors(2, n=30)
    n = X.shape[1] + 3
    want = expected(ids, X, n, include_self=True)
    result = run(args(n, "--include-self", "--top-k", "4"), lines=lines)
    got = {str(k): {str(m): s for m, s in row.items()} for k, row in result.output}
    assert set(got) == set(want)
    for d, row in want.items():
        best = sorted(row.items(), key=lambda kv: (-kv[1], kv[0]))[:4]
        assert list(got[d]) == [m for m, _ in best], d
        np.testing.assert_allclose(list(got[d].values()), [v for _, v in best],
                                   rtol=1e-9, atol=1e-12)
        assert got[d][d] == 1.0  # a vector with itself: exactly 1.0, its best


def test_a_vector_constant_over_all_features_has_no_score():
    # it holds every one of the N features, with one weight: no variance
    # (numpy.corrcoef gives NaN); with one feature more than the vectors
    # hold it is no longer constant, and correlates
    ids, X, feats, lines = sparse_vectors(3, n=25, vocab=12)
    const = np.full((1, X.shape[1]), 2.5)
    ids2, X2 = ids + [str(uuid.UUID(int=7))], np.vstack([X, const])
    lines2 = to_lines(ids2, X2, feats)
    n = X2.shape[1]
    result = run(args(n), lines=lines2)
    check(result, expected(ids2, X2, n))
    assert str(uuid.UUID(int=7)) not in {str(k) for k, _ in result.output}
    assert result.counters[INPUT][NOT_SCORABLE] == 1
    more = run(args(n + 1), lines=lines2)
    check(more, expected(ids2, X2, n + 1))
    assert NOT_SCORABLE not in more.counters.get(INPUT, {})


def test_pruned_threshold_join_is_exact():
    ids, X, feats, lines = sparse_vectors(4, n=80, vocab=40)
    n = X.shape[1] + 10
    want = {d: {k: v for k, v in row.items() if v >= 0.4}
            for d, row in expected(ids, X, n).items()}
    want = {d: row for d, row in want.items() if row}
    a = args(n, "--threshold", "0.4", "--blocks", "2")
    pruned, full = run(a, lines=lines), run(a + ["--no-prune"], lines=lines)
    assert pruned.lines == full.lines
    check(pruned, want)


@pytest.mark.slow
def test_local_runner():
    ids, X, feats, lines = sparse_vectors(5, n=30)
    n = X.shape[1] + 5
    check(run(args(n, "--strategy", "stripes", "--num-cores", "1"), lines=lines, runner="local"),
          expected(ids, X, n))


# -- --num-features -----------------------------------------------------------------

def test_without_num_features_is_refused():
    with pytest.raises(ValueError, match="correlation needs --num-features N"):
        MRSparseDotProducts(["--measure", "correlation"])


def test_num_features_below_a_vectors_features_fails_the_job():
    ids, X, feats, lines = sparse_vectors(6, n=20, most=8)
    most = int((X != 0).sum(axis=1).max())
    with pytest.raises(TaskFailed, match=r"a vector has %d features, more than n_features=%d.*"
                       r"\(is --num-features %d the number of distinct features of the "
                       r"corpus\?\)" % (most, most - 1, most - 1)):
        run(args(most - 1), lines=lines)


def test_num_features_below_a_pairs_features_fails_the_job():
    # x = (1, 2, 0), y = (0, 1, 2) over three features; with N = 2 each
    # vector fits, but their "correlation" is -5
    f = [str(uuid.UUID(int=i)) for i in range(1, 4)]
    lines = [json.dumps({"id": str(uuid.UUID(int=10)), "features": {f[0]: 1, f[1]: 2}}),
             json.dumps({"id": str(uuid.UUID(int=11)), "features": {f[1]: 1, f[2]: 2}})]
    with pytest.raises(TaskFailed, match=r"a correlation of -[45]\.\d*, beyond rounding of "
                       r"\[-1, 1\].*\(is --num-features 2 the number"):
        run(args(2), lines=lines)
    check(run(args(3), lines=lines), {str(uuid.UUID(int=10)): {str(uuid.UUID(int=11)): -0.5},
                                      str(uuid.UUID(int=11)): {str(uuid.UUID(int=10)): -0.5}})


# -- the planner --------------------------------------------------------------------

def plan(*argv):
    return subprocess.run([sys.executable, "-m", "mrjobs.plan", *argv, "--json"],
                          capture_output=True, text=True)


@pytest.mark.slow
def test_the_planner_takes_correlation(tmp_path):
    ids, X, feats, lines = sparse_vectors(7, n=200, vocab=60)
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(lines) + "\n")
    n = X.shape[1]
    p = plan(str(path), "--measure", "correlation", "--num-features", str(n + 100),
             "--threshold", "0.2", "--calibration", "/dev/null")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["plan"]["blocks"] >= 1
    p = plan(str(path), "--measure", "correlation")
    assert p.returncode == 2 and "--measure correlation needs --num-features N" in p.stderr
    p = plan(str(path), "--measure", "correlation", "--num-features", str(n - 1),
             "--calibration", "/dev/null")
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stderr.startswith("mrsparse plan: error: --num-features %d is fewer than the %d "
                               "distinct features of the sample" % (n - 1, n))
