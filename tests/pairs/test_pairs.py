"""The pair kernel (mrjobs.pairs.kernel.pair_best) with scipy matrices alone, against
a dense numpy oracle: both directions, the diagonal block, top-k with ties,
the threshold, exact zeros, every chunking."""
import ast
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import mrjobs.pairs.chunks
import mrjobs.pairs.fused
import mrjobs.pairs.kernel
from mrjobs.counters import Counters
from mrjobs.pairs.kernel import COLUMNS, ROWS, PairSpec, pair_best
from mrjobs.scoring import Scorer

pytestmark = pytest.mark.asan


#: the kernel _run asks for (PairSpec.kernel), set by the fixture below
_KERNEL = {"name": "auto"}


@pytest.fixture(autouse=True, params=["c", "numpy"])
def kernel(request, monkeypatch):
    """Every test on both paths: the C kernels and the numpy twin."""
    if request.param == "c":
        pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
    monkeypatch.setitem(_KERNEL, "name", request.param)
    return request.param


def _block(rng, n, n_features, density):
    """A CSR block of small integer weights (some negative): dot products are
    exact, ties and exact zeros frequent."""
    dense = rng.integers(-3, 4, size=(n, n_features)).astype(float)
    dense[rng.random((n, n_features)) > density] = 0.0
    m = sp.csr_matrix(dense)
    m.sort_indices()
    return m


def _oracle(A, C, k, threshold, diagonal, include_self):
    """{row: [(col, score)]} and {col: [(row, score)]}, each best first (ties
    by smaller index), from dense numpy products."""
    Ad, Cd = A.toarray(), C.toarray()
    dots = Ad @ Cd.T
    shared = (Ad != 0).astype(int) @ (Cd != 0).T.astype(int) > 0
    if diagonal:
        n = Ad.shape[0]
        upper = np.triu(np.ones((n, n), bool), 0 if include_self else 1)
        shared &= upper
    if threshold is not None:
        shared &= dots >= threshold

    def best(matrix, mask):
        out = {}
        for g in range(mask.shape[0]):
            others = np.flatnonzero(mask[g])
            if others.shape[0]:
                pairs = sorted(((int(o), float(matrix[g, o])) for o in others),
                               key=lambda p: (-p[1], p[0]))
                out[g] = pairs[:k] if k is not None else pairs
        return out

    rows = best(dots, shared)
    mirror = shared.copy()
    if diagonal:
        np.fill_diagonal(mirror, False)
    cols = best(dots.T, mirror.T)
    return rows, cols


def _run(A, C, k, threshold, limit, diagonal=False, include_self=False, mirror=True,
         prune=False, merge=False, measure="dot"):
    counts = Counters()
    spec = PairSpec(k, limit, diagonal=diagonal, include_self=include_self, mirror=mirror,
                    prune=prune, kernel=_KERNEL["name"], merge=merge)
    results = pair_best(A, C, Scorer(measure, counts, threshold), spec)
    got = {ROWS: {}, COLUMNS: {}}
    while True:
        try:
            direction, groups, others, scores = next(results)
        except StopIteration as done:
            products = done.value.products
            break
        for g, o, s in zip(groups.tolist(), others.tolist(), scores.tolist()):
            got[direction].setdefault(g, []).append((o, s))
    order = (lambda p: (-p[1], p[0]))
    for direction in got:
        for g, pairs in got[direction].items():
            got[direction][g] = sorted(pairs, key=order)[:k] if k else sorted(pairs, key=order)
    return got, products, counts


CASES = [  # (k, threshold, limit)
    (None, None, 10**6), (None, None, 7), (3, None, 10**6), (3, None, 5), (1, 0.0, 40),
    (2, 2.0, 3), (10, None, 11), (None, -1.0, 13)]


@pytest.mark.parametrize("k,threshold,limit", CASES)
def test_two_blocks_match_the_dense_oracle(k, threshold, limit):
    rng = np.random.default_rng(5)
    A, C = _block(rng, 23, 9, 0.3), _block(rng, 31, 9, 0.3)
    got, products, counts = _run(A, C, k, threshold, limit)
    rows, cols = _oracle(A, C, k, threshold, False, False)
    assert got[ROWS] == rows
    assert got[COLUMNS] == cols
    shared = ((A != 0).astype(int) @ (C != 0).T.astype(int)).nnz
    assert products == shared
    assert counts[("mrsparse work", "pairs scored")] == shared


@pytest.mark.parametrize("include_self", [False, True])
@pytest.mark.parametrize("k,threshold,limit", CASES)
def test_diagonal_block_scores_each_pair_once(k, threshold, limit, include_self):
    rng = np.random.default_rng(6)
    A = _block(rng, 29, 8, 0.35)
    got, products, counts = _run(A, A, k, threshold, limit, diagonal=True,
                                 include_self=include_self)
    rows, cols = _oracle(A, A, k, threshold, True, include_self)
    assert got[ROWS] == rows
    assert got[COLUMNS] == cols
    shared = (A != 0).astype(int) @ (A != 0).T.astype(int)
    upper = sp.triu(shared, 0 if include_self else 1)
    assert counts[("mrsparse work", "pairs scored")] == upper.nnz
    assert products == upper.nnz


@pytest.mark.parametrize("prune", [False, "always"])
@pytest.mark.parametrize("include_self", [False, True])
@pytest.mark.parametrize("k,threshold,limit", [c for c in CASES if c[0] is not None])
def test_merged_diagonal_block_gives_each_vector_one_row(k, threshold, limit, include_self,
                                                         prune):
    # merge: a vector's best among the rows above it and among those below it
    # in one result, each vector once; no columns
    rng = np.random.default_rng(16)
    A = _block(rng, 29, 8, 0.35)
    if prune:
        A.data = np.abs(A.data)  # (the bounds of dot need no negative weight)
        threshold = 1.0 if threshold is None else threshold
    got, products, counts = _run(A, A, k, threshold, limit, diagonal=True,
                                 include_self=include_self, merge=True, prune=prune)
    rows, cols = _oracle(A, A, k, threshold, True, include_self)
    both = {g: sorted(rows.get(g, []) + cols.get(g, []), key=lambda p: (-p[1], p[0]))[:k]
            for g in set(rows) | set(cols)}
    assert got[COLUMNS] == {}
    assert got[ROWS] == both
    unmerged, products_unmerged, counts_unmerged = _run(
        A, A, k, threshold, limit, diagonal=True, include_self=include_self, prune=prune)
    assert (products, counts) == (products_unmerged, counts_unmerged)


def test_merge_leaves_two_blocks_and_no_k_as_they_are():
    rng = np.random.default_rng(17)
    A, C = _block(rng, 13, 6, 0.4), _block(rng, 11, 6, 0.4)
    assert _run(A, C, 3, None, 9, merge=True) == _run(A, C, 3, None, 9)
    assert _run(A, A, None, None, 9, diagonal=True, merge=True) == _run(
        A, A, None, None, 9, diagonal=True)


def test_cosine_of_weights_not_prepared_is_refused_on_both_paths():
    # a sum of products of unit weights beyond rounding of 1: the weights were
    # not scaled to unit length (the scorer's check, in the C kernel too)
    A = sp.csr_matrix(np.array([[2.0, 0.0], [1.0, 1.0]]))
    with pytest.raises(ValueError, match="a sum of products of unit weights is 2.0, beyond "
                                         "rounding of"):
        _run(A, A, 1, None, 100, diagonal=True, measure="cosine")


def test_without_mirror_only_rows_come_back():
    rng = np.random.default_rng(7)
    A, C = _block(rng, 12, 6, 0.4), _block(rng, 15, 6, 0.4)
    got, _, _ = _run(A, C, 2, None, 4, mirror=False)
    assert got[COLUMNS] == {}
    assert got[ROWS] == _oracle(A, C, 2, None, False, False)[0]


def test_exact_zero_dot_products_are_scored():
    # rows 0 and 1 share two features whose products cancel: 1*1 + 1*(-1) = 0
    A = sp.csr_matrix(np.array([[1.0, 1.0, 0.0]]))
    C = sp.csr_matrix(np.array([[1.0, -1.0, 0.0], [0.0, 0.0, 2.0]]))
    got, products, _ = _run(A, C, None, None, 100)
    assert got[ROWS] == {0: [(0, 0.0)]}
    assert got[COLUMNS] == {0: [(0, 0.0)]}
    assert products == 1


@pytest.mark.slow
def test_kernel_imports_neither_mrjob_nor_the_job():
    imported = set()
    for module in (mrjobs.pairs.kernel, mrjobs.pairs.chunks, mrjobs.pairs.fused):
        tree = ast.parse(pathlib.Path(module.__file__).read_text())
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import)
                     for a in n.names}
        imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert imported == {"dataclasses", "typing", "itertools", "threading", "concurrent.futures",
                        "numpy", "mrjobs.pairs.idarrays", "mrjobs", "mrjobs.pairs",
                        "mrjobs.pairs.chunks", "mrjobs.pairs.fused"}  # _c, pruning
    code = ("import sys, mrjobs.pairs.kernel; print(sorted(m for m in sys.modules "
            "if m.startswith('mrjobs.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    # mrjobs.pairs.pruning (and scipy) only once a threshold asks for a plan
    assert out.split() == ["['mrjobs._c',", "'mrjobs.pairs',", "'mrjobs.pairs.chunks',",
                           "'mrjobs.pairs.fused',", "'mrjobs.pairs.idarrays',",
                           "'mrjobs.pairs.kernel']"]



@pytest.mark.parametrize("prune", ["never", "always"])
@pytest.mark.parametrize("diagonal,include_self", [(False, False), (True, False), (True, True)])
def test_progress_tells_the_multiply_adds_of_the_pair_product(diagonal, include_self, prune):
    # planned: Σ_f dfA_f·dfC_f, on a diagonal block Σ_f df_f(df_f∓1)/2 (the upper
    # triangle); told before the first chunk, after each, and done at the end
    rng = np.random.default_rng(7)
    A = _unit_rows(_block(rng, 40, 12, 0.3))
    C = A if diagonal else _unit_rows(_block(rng, 30, 12, 0.3))
    told = []
    spec = PairSpec(3, 17, diagonal=diagonal, include_self=include_self, prune=prune,
                    kernel=_KERNEL["name"])
    results = pair_best(A, C, Scorer("cosine", Counters(), 0.5), spec,
                        progress=lambda done, planned: told.append((done, planned)))
    for _ in results:
        pass
    df_a = np.bincount(A.indices, minlength=12)
    df_c = np.bincount(C.indices, minlength=12)
    if diagonal:
        planned = int((df_a * (df_a + (1 if include_self else -1)) // 2).sum())
    else:
        planned = int((df_a * df_c).sum())
    assert told[0] == (0, planned) and told[-1] == (planned, planned)
    assert all(p == planned for _, p in told)
    assert len(told) > 3 or prune == "always"  # (a pruned pair's rows: in fewer chunks)
    assert all(a <= b for (a, _), (b, _) in zip(told, told[1:]))


def _unit_rows(m):
    """``m`` with rows of norm 1 (cosine's prepared weights)."""
    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    m = sp.csr_matrix(sp.diags(np.where(norms > 0, 1 / np.maximum(norms, 1e-300), 0.0)) @ m)
    m.sort_indices()
    return m
