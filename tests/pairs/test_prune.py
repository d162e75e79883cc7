"""Pruning of block-pair products (mrjobs.pairs.pruning) against brute force.

Every test builds scipy matrices of prepared weights, multiplies them in
full, and checks that what the pruned plan skips could never be kept: the
same pairs survive the threshold and the same top-k lists come out.
"""
import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mrjobs import measures
from mrjobs.pairs import pruning as prune
from mrjobs.counters import Counters
from mrjobs.pairs.kernel import COLUMNS, ROWS, PairSpec, pair_best
from mrjobs.scoring import Scorer
from tests.pairs.test_pairs import CASES, _block, _oracle, _run

pytestmark = pytest.mark.twin

PRUNABLE = sorted(prune.SUPPORTED)


def corpus(seed, n_rows, n_feats=40, density=0.15, negative=False, float32=False,
           zipf=True):
    """Raw weights (CSR) of ``n_rows`` random vectors, seeded."""
    rng = np.random.default_rng(seed)
    p = np.full(n_feats, density)
    if zipf:
        p = np.minimum(1.0, density * 3.0 / np.arange(1, n_feats + 1) ** 0.7)
    mask = rng.random((n_rows, n_feats)) < p
    w = rng.exponential(1.0, (n_rows, n_feats)) * mask
    if negative:
        w *= np.where(rng.random((n_rows, n_feats)) < 0.3, -1.0, 1.0)
    if float32:
        w = w.astype(np.float32).astype(np.float64)
    return sp.csr_matrix(w)


def prepared(measure, raw):
    """(prepared weights as CSR, statistics) the way the job prepares them."""
    raw = raw.tocsr()
    raw.sort_indices()
    # N (correlation's): the width of the matrix, features no vector has included
    w, stats = measures.prepare_rows(measure, raw.data, np.diff(raw.indptr),
                                     n_features=raw.shape[1])
    M = sp.csr_matrix((np.asarray(w, np.float64), raw.indices.copy(), raw.indptr.copy()),
                      shape=raw.shape)
    M.has_sorted_indices = True
    return M, stats


def scorer_for(measure, row_stats, col_stats, n_features=None):
    def scorer(d, r, c):
        return measures.score(measure, d, None if row_stats is None else row_stats[r],
                              None if col_stats is None else col_stats[c],
                              n_features=n_features)
    return scorer


def all_pairs(A, C, diagonal, include_self, exact_zeros):
    r, c, d = prune.product(A, C, exact_zeros)
    if diagonal:
        keep = c >= r if include_self else c > r
        r, c, d = r[keep], c[keep], d[keep]
    return r, c, d


def emitted(r, c, scores, threshold, k, diagonal, mirror):
    """What the kernel would emit, as a set of (side, vector, other, score)."""
    keep = np.isfinite(scores)
    if threshold is not None:
        keep &= scores >= threshold
    r, c, scores = r[keep], c[keep], scores[keep]
    if diagonal:
        two = r != c
        sides = [(0, np.concatenate((r, c[two])), np.concatenate((c, r[two])),
                  np.concatenate((scores, scores[two])))]
    else:
        sides = [(0, r, c, scores)] + ([(1, c, r, scores)] if mirror else [])
    out = set()
    for side, g, o, s in sides:
        order = np.lexsort((o, -s, g))
        g, o, s = g[order], o[order], s[order]
        if k is not None:
            starts = np.flatnonzero(np.concatenate(([g.size > 0], g[1:] != g[:-1])))
            rank = np.arange(g.shape[0]) - np.repeat(starts, np.diff(np.append(starts, g.shape[0])))
            g, o, s = g[rank < k], o[rank < k], s[rank < k]
        out.update(zip([side] * g.shape[0], g.tolist(), o.tolist(), s.tolist()))
    return out


def run_both(measure, A, C, rs, cs, threshold=None, k=None, diagonal=False, include_self=False,
             mirror=True, group_size=4, how="order", n_features=None, threads=1):
    if diagonal:
        C, cs = A, rs
    exact_zeros = bool((A.data < 0).any() or (C.data < 0).any())
    scorer = scorer_for(measure, rs, rs if diagonal else cs, n_features or A.shape[1])
    r, c, d = all_pairs(A, C, diagonal, include_self, exact_zeros)
    want = emitted(r, c, scorer(d, r, c), threshold, k, diagonal, mirror)
    plan = prune.PairPlan(A, C, scorer, prune.PruneSpec(
        measure, threshold=threshold, k=k, row_stats=rs, col_stats=cs, diagonal=diagonal,
        include_self=include_self, mirror=mirror, group_size=group_size, how=how,
        exact_zeros=exact_zeros, threads=threads))
    parts = [plan.first] if plan.first is not None else []
    order = plan.row_order()
    for s in range(0, order.shape[0], 7):
        parts.append(plan.pairs(order[s:s + 7]))
    pr, pc, pd = (np.concatenate(x) for x in zip(*parts)) if parts else (r[:0], c[:0], d[:0])
    key = pr * np.int64(C.shape[0] + 1) + pc
    assert np.unique(key).shape[0] == key.shape[0], "a pair computed twice"
    # every pair computed is a real pair with the same dot product, bit for bit
    ref = dict(zip((r * np.int64(C.shape[0] + 1) + c).tolist(), d.tolist()))
    assert all(ref[kk] == dd for kk, dd in zip(key.tolist(), pd.tolist()))
    got = emitted(pr, pc, scorer(pd, pr, pc), threshold, k, diagonal, mirror)
    assert got == want
    return plan, r.shape[0], pr.shape[0]


HYPOTHESIS = settings(derandomize=True, max_examples=25, deadline=None,
                      suppress_health_check=[HealthCheck.too_slow])
FEW = settings(HYPOTHESIS, max_examples=10)

COUNT_MEASURES = ("cooccurrence", "jaccard", "overlap", "cityblock")


def raw_for(measure, seed, n, negative=False, float32=False, scale=1.0, **kw):
    raw = corpus(seed, n, negative=negative and measure not in COUNT_MEASURES,
                 float32=float32, **kw)
    raw.data *= scale
    return raw


# -- the bounds themselves ------------------------------------------------------

@HYPOTHESIS
@given(seed=st.integers(0, 2**32 - 1), negative=st.booleans(), float32=st.booleans(),
       scale=st.sampled_from([1.0, 1e-160, 1e-300, 1e150, 3.0]),
       size=st.integers(1, 9))
def test_dot_bounds_are_at_least_every_computed_dot(seed, negative, float32, scale, size):
    A = raw_for("dot", seed, 30, negative, float32, scale)
    C = raw_for("dot", seed + 1, 25, negative, float32, scale)
    groups, n_groups = prune.group_rows(C, size)
    U = prune.dot_bounds(A, prune.feature_max(C, groups, n_groups))
    with np.errstate(over="ignore"):
        D = (A @ C.T).toarray()
    assert (D <= U[:, groups]).all()


@pytest.mark.parametrize("measure", PRUNABLE)
@HYPOTHESIS
@given(seed=st.integers(0, 2**32 - 1), negative=st.booleans(), float32=st.booleans(),
       size=st.integers(1, 9), how=st.sampled_from(["order", "heaviest", "length"]))
@pytest.mark.slow
def test_score_bounds_are_at_least_every_score(measure, seed, negative, float32, size, how):
    A, rs = prepared(measure, raw_for(measure, seed, 30, negative, float32))
    C, cs = prepared(measure, raw_for(measure, seed + 7, 25, negative, float32))
    groups, n_groups = prune.group_rows(C, size, how)
    S = prune.side_bounds(A, C, groups, n_groups, measure, rs, cs)
    r, c, d = prune.product(A, C, exact_zeros=True)
    s = scorer_for(measure, rs, cs, A.shape[1])(d, r, c)
    ok = np.isfinite(s)
    assert (s[ok] <= S[r[ok], groups[c[ok]]]).all()


@pytest.mark.parametrize("measure", ["tanimoto", "euclidean"])
@pytest.mark.parametrize("scale", [1e-200, 1e-8, 1.0, 1e8, 1e200])
def test_norm_measures_bounds_hold_at_extreme_scales(measure, scale):
    # near-identical vectors of very different or very large norms: the
    # scoring's rounding is largest there
    rng = np.random.default_rng(5)
    base = rng.exponential(1.0, (1, 30)) * (rng.random((1, 30)) < 0.5)
    rows = np.repeat(base, 12, axis=0) * np.geomspace(scale, scale * 1e3, 12)[:, None]
    rows[::3] *= 1.0 + 1e-9 * rng.random((4, 30))
    A, rs = prepared(measure, sp.csr_matrix(rows))
    groups, n_groups = prune.group_rows(A, 3, "length")
    S = prune.side_bounds(A, A, groups, n_groups, measure, rs, rs)
    r, c, d = prune.product(A, A)
    s = scorer_for(measure, rs, rs, A.shape[1])(d, r, c)
    assert (s <= S[r, groups[c]]).all()


def test_loglikelihood_is_not_pruned():
    # LLR grows when two vectors share far *fewer* features than expected as
    # well as far more: no bound from an upper bound on the shared count
    assert not prune.supports("loglikelihood")
    llr = measures.log_likelihood_ratio
    assert llr(0.0, 50.0, 50.0, 900.0) > llr(2.5, 47.5, 47.5, 902.5)
    with pytest.raises(ValueError, match="cannot be pruned"):
        prune.score_bounds("loglikelihood", np.zeros((1, 1)))


def test_feature_max_and_heaviest_grouping():
    M = sp.csr_matrix(np.array([[0.0, -5.0, 1.0], [2.0, 0.0, 0.0], [0.0, 1.0, 4.0],
                                [0.0, 0.0, 0.0]]))
    S = prune.feature_max(M, np.array([0, 1, 0, 1]), 2)
    assert S.toarray().tolist() == [[0.0, 5.0, 4.0], [2.0, 0.0, 0.0]]
    groups, n = prune.group_rows(M, 2, "heaviest")
    # heaviest features: 1, 0, 2, none (-1): sorted -1, 0, 1, 2
    assert (n, groups.tolist()) == (2, [1, 0, 1, 0])
    with pytest.raises(ValueError, match="how must be"):
        prune.group_rows(M, 2, "random")


# -- the plan against brute force ------------------------------------------------

SHAPES = {"diagonal": dict(diagonal=True), "pair": dict(), "queries": dict(mirror=False),
          "self": dict(diagonal=True, include_self=True)}


@pytest.mark.parametrize("measure", PRUNABLE)
@pytest.mark.parametrize("shape", sorted(SHAPES))
@FEW
@given(seed=st.integers(0, 2**32 - 1), negative=st.booleans(), float32=st.booleans(),
       threshold=st.sampled_from([None, 0.05, 0.3, 0.6, 0.9]),
       k=st.sampled_from([None, 1, 3, 10]), size=st.integers(1, 12),
       how=st.sampled_from(["order", "heaviest", "length"]))
@pytest.mark.slow
def test_plan_keeps_everything_the_job_keeps(measure, shape, seed, negative, float32,
                                             threshold, k, size, how):
    if threshold is None and k is None:
        k = 2
    if measure in ("dot", "cooccurrence") and threshold is not None:
        threshold *= 4.0
    A, rs = prepared(measure, raw_for(measure, seed, 40, negative, float32))
    C, cs = prepared(measure, raw_for(measure, seed + 3, 30, negative, float32))
    run_both(measure, A, C, rs, cs, threshold, k, group_size=size, how=how, **SHAPES[shape])


@pytest.mark.parametrize("measure", PRUNABLE)
@pytest.mark.parametrize("shape", ["diagonal", "pair"])
@pytest.mark.slow
def test_thresholds_at_just_above_and_just_below_real_scores(measure, shape):
    raw = raw_for(measure, 11, 40, negative=True)
    # exact duplicates: ties at the threshold and in the top-k lists
    raw = sp.vstack([raw, raw[:6]]).tocsr()
    A, rs = prepared(measure, raw)
    C, cs = (A, rs) if shape == "diagonal" else prepared(measure, raw_for(measure, 12, 30))
    diag = shape == "diagonal"
    r, c, d = all_pairs(A, C, diag, False, True)
    s = scorer_for(measure, rs, rs if diag else cs, A.shape[1])(d, r, c)
    real = np.unique(s[np.isfinite(s)])
    for q in (0.5, 0.8, 0.95, 1.0):
        t = float(real[min(int(q * real.shape[0]), real.shape[0] - 1)])
        for threshold in (t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf)):
            for k in (None, 1, 2):
                run_both(measure, A, C, rs, cs, float(threshold), k, diagonal=diag,
                         group_size=3, how="heaviest")


def test_pruning_skips_products_and_whole_block_pairs():
    A, rs = prepared("cosine", corpus(3, 200, n_feats=400, density=0.02))
    plan, total, computed = run_both("cosine", A, A, rs, rs, 0.8, None, diagonal=True,
                                     group_size=8, how="heaviest")
    assert computed < total / 2
    assert plan.cells_pruned > plan.cells / 2 and plan.rows_pruned > 0
    # two blocks over disjoint features: nothing can reach any threshold > 0
    B = sp.csr_matrix(np.hstack([A.toarray()[:, :200] * 0, A.toarray()[:, 200:]]))
    C = sp.csr_matrix(np.hstack([A.toarray()[:, :200], A.toarray()[:, 200:] * 0]))
    B.eliminate_zeros(), C.eliminate_zeros()
    plan = prune.PairPlan(B, C, None, prune.PruneSpec("cosine", threshold=0.01, group_size=8))
    assert plan.pair_pruned and plan.pairs(plan.row_order())[0].shape[0] == 0
    assert plan.products == 0


# -- the pair kernel with pruning (mrjobs.pairs.kernel.pair_best) ----------------------

@pytest.mark.parametrize("k,threshold,limit", CASES)
@pytest.mark.parametrize("shape", ["pair", "diagonal", "self", "queries"])
def test_pruned_kernel_matches_the_dense_oracle(shape, k, threshold, limit):
    rng = np.random.default_rng(5)
    A = _block(rng, 23, 9, 0.3)
    C = A if shape in ("diagonal", "self") else _block(rng, 31, 9, 0.3)
    diagonal, include_self = shape in ("diagonal", "self"), shape == "self"
    mirror = shape != "queries"
    got, products, _ = _run(A, C, k, threshold, limit, diagonal, include_self, mirror,
                            prune="always")
    unpruned, all_products, _ = _run(A, C, k, threshold, limit, diagonal, include_self,
                                     mirror)
    rows, cols = _oracle(A, C, k, threshold, diagonal, include_self)
    assert got[ROWS] == rows == unpruned[ROWS]
    assert got[COLUMNS] == (cols if mirror else {}) == unpruned[COLUMNS]


@pytest.mark.parametrize("measure", PRUNABLE)
@pytest.mark.parametrize("shape", ["pair", "diagonal"])
@pytest.mark.slow
def test_pruned_kernel_matches_unpruned_on_every_measure(measure, shape):
    raw = raw_for(measure, 21, 60, negative=True)
    A, rs = prepared(measure, raw)
    C, cs = (A, rs) if shape == "diagonal" else prepared(measure, raw_for(measure, 22, 50))
    for threshold, k in ((0.5, None), (0.8, None), (None, 3), (0.3, 2)):
        if measure in ("dot", "cooccurrence") and threshold is not None:
            threshold *= 4.0
        out = []
        for flag in (False, True):
            counts = Counters()
            spec = PairSpec(k, 50, diagonal=shape == "diagonal",
                            prune="always" if flag else "never")
            results = pair_best(A, C, Scorer(measure, counts, threshold, A.shape[1]), spec,
                                stats_a=rs, stats_c=cs)
            got = {}
            for direction, groups, others, scores in results:
                for g, o, s in zip(groups.tolist(), others.tolist(), scores.tolist()):
                    got.setdefault((direction, g), []).append((o, s))
            out.append({key: sorted(v, key=lambda p: (-p[1], p[0]))[:k]
                        for key, v in got.items()})
        assert out[0] == out[1]


# -- the job: pruning on by default under --threshold, --no-prune for comparison -------

def _sparse_corpus(n=1500):
    """Vectors of ~20 features over a vocabulary of 50,000 (Zipf 1.0), weighted
    tf-idf as text is: popular features weigh little, so bounds rule out most
    cells, and the bounds cost little beside the product (the pair kernel
    computes them only then)."""
    import json
    import math
    from examples.generate import generate_lines
    vectors = [json.loads(line) for line in generate_lines(
        n, 20, 50000, 1.0, 3, fmt="json", edge_cases=False, progress=False)]
    df = {}
    for v in vectors:
        for f in v["features"]:
            df[f] = df.get(f, 0) + 1
    return [json.dumps({"id": v["id"], "features": {
        f: w * math.log(n / df[f]) for f, w in v["features"].items() if df[f] < n}})
        for v in vectors]


@pytest.fixture(scope="module")
def sparse_corpus():
    return _sparse_corpus()


def _quantile_score(result, q):
    scores = sorted(v for _, row in result.output for v in row.values())
    return scores[int(q * (len(scores) - 1))]


@pytest.mark.parametrize("measure", sorted(measures.PRUNABLE))
@pytest.mark.slow
def test_job_output_is_the_same_with_and_without_pruning(measure, sparse_corpus):
    from tests.jobs_helpers import run
    import json
    measure_args = ["--measure", measure]
    if measures.get(measure).needs_n_features:
        n = len({f for line in sparse_corpus for f in json.loads(line)["features"]})
        measure_args += ["--num-features", str(n)]
    everything = run(measure_args + ["--blocks", "1"], lines=sparse_corpus)
    for q in (0.995, 0.9999):
        threshold = _quantile_score(everything, q)
        args = measure_args + ["--threshold", repr(threshold), "--blocks", "2"]
        pruned, full = run(args, lines=sparse_corpus), run(args + ["--no-prune"],
                                                          lines=sparse_corpus)
        assert pruned.lines == full.lines and len(pruned.lines) > 0
        work, full_work = pruned.counters["mrsparse work"], full.counters["mrsparse work"]
        assert not any(name.startswith("pruned:") for name in full_work)
        computed = work["products computed"]
        assert computed <= full_work["products computed"]
        # what was skipped is counted, and only then fewer products are computed
        assert (computed < full_work["products computed"]) == (
            work.get("pruned: (row x column group) cells", 0) > 0)


@pytest.mark.slow
def test_pruning_is_counted_and_the_same_on_the_local_runner(sparse_corpus):
    from tests.jobs_helpers import run
    args = ["--measure", "cosine", "--threshold", "0.3", "--top-k", "5", "--blocks", "3"]
    inline = run(args, lines=sparse_corpus)
    local = run(args, lines=sparse_corpus, runner="local")
    full = run(args + ["--no-prune"], lines=sparse_corpus, runner="local")
    assert inline.lines == local.lines == full.lines and len(inline.lines) > 10
    work = local.counters["mrsparse work"]
    assert work == inline.counters["mrsparse work"]
    assert work["pruned: (row x column group) cells"] > 0 and work["pruned: rows"] > 0
    assert work["products computed"] < full.counters["mrsparse work"]["products computed"] / 2



def test_bounds_are_computed_only_where_they_cost_little_beside_the_product(sparse_corpus):
    from mrjobs.pairs.kernel import _planning_pays
    from tests.jobs_helpers import read_corpus

    def block(n, features, vocabulary, seed):
        rng = np.random.default_rng(seed)
        cols = np.concatenate([np.sort(rng.choice(vocabulary, features, replace=False))
                               for _ in range(n)])
        return sp.csr_matrix((np.ones(n * features), cols, np.arange(n + 1) * features),
                             shape=(n, vocabulary))
    # rare features: the bounds' product is as large as the product itself
    assert not _planning_pays(block(2000, 20, 10 ** 6, 1), block(2000, 20, 10 ** 6, 2),
                              diagonal=False, mirror=True)
    # long rows over shared features: every row meets every group, the bounds
    # cost more than half the product
    assert not _planning_pays(block(2000, 200, 3000, 1), block(2000, 200, 3000, 2),
                              diagonal=False, mirror=True)
    # short tf-idf rows of a Zipfian vocabulary (the job tests above prune them)
    X = read_corpus(sparse_corpus)[1]
    halves = X[: X.shape[0] // 2], X[X.shape[0] // 2:]
    assert _planning_pays(*halves, diagonal=False, mirror=True)
    assert _planning_pays(halves[0], halves[0], diagonal=True, mirror=True)


# -- bounds that are not numbers never kill a pair ----------------------------------

def _with_zero_norm_rows(measure, seed, n):
    """Prepared weights of ``n`` vectors, the first third of them zero vectors
    (every weight 0.0: ``--float32`` makes weights below its range 0.0) and a
    few empty ones, with their statistics."""
    raw = raw_for(measure, seed, n)
    raw.data[: raw.indptr[n // 3]] = 0.0  # (stored entries, all 0.0)
    rows = np.repeat(np.arange(n), np.diff(raw.indptr))
    keep = (rows != n // 3) & (rows != n // 3 + 1)  # two empty vectors
    indptr = np.concatenate(([0], np.cumsum(np.bincount(rows[keep], minlength=n))))
    raw = sp.csr_matrix((raw.data[keep], raw.indices[keep], indptr), shape=raw.shape)
    return prepared(measure, raw)


@pytest.mark.parametrize("measure", PRUNABLE)
@pytest.mark.parametrize("shape", ["pair", "diagonal"])
@pytest.mark.slow
def test_pruning_keeps_the_pairs_of_zero_norm_vectors(measure, shape):
    # a zero vector's log norm is -inf: the tanimoto bound took -inf - -inf =
    # NaN, and a NaN bound counted as below every floor -- tanimoto
    # --threshold 0 kept no pair of zero vectors at all
    A, rs = _with_zero_norm_rows(measure, 31, 45)
    assert (A.data[: A.indptr[15]] == 0.0).all() and A.indptr[15] > 0
    diagonal = shape == "diagonal"
    C, cs = (A, rs) if diagonal else _with_zero_norm_rows(measure, 32, 36)
    for threshold, k in ((0.0, None), (-1.0, None), (0.0, 2), (1e-300, None)):
        run_both(measure, A, C, rs, cs, threshold, k, diagonal=diagonal, group_size=4)
        out = []
        for flag in (False, True):
            spec = PairSpec(k, 50, diagonal=diagonal, prune="always" if flag else "never")
            results = pair_best(A, C, Scorer(measure, Counters(), threshold, A.shape[1]),
                                spec, stats_a=rs, stats_c=cs)
            got = {}
            for direction, groups, others, scores in results:
                for g, o, s in zip(groups.tolist(), others.tolist(), scores.tolist()):
                    got.setdefault((direction, g), []).append((o, s))
            out.append({key: sorted(v, key=lambda p: (-p[1], p[0]))[:k]
                        for key, v in got.items()})
        assert out[0] == out[1]
        # the zero vectors' pairs are there (they share features: score 0.0 or more)
        assert any(g < 15 for _, g in out[1]) or threshold > 0


def test_a_bound_that_is_not_a_number_keeps_its_cell(monkeypatch):
    # whatever a measure's bound does with infinities, NaN never kills a pair
    nan = measures.stat_bound(lambda d, a, lo, hi: np.full(np.broadcast(d, a, lo).shape, np.nan))
    registry = dict(measures.REGISTRY, tanimoto=dataclasses.replace(
        measures.REGISTRY["tanimoto"], bound=nan))
    monkeypatch.setattr(measures, "REGISTRY", registry)
    s = prune.score_bounds("tanimoto", np.array([[0.5, 0.5]]), np.array([0.0]),
                           np.array([0.0, np.inf]), np.array([0.0, -np.inf]))
    assert s.tolist() == [[np.inf, -np.inf]]  # (the second group is empty)
    live = prune.live_cells(np.array([[np.nan, 0.1]]), np.array([0.0]), np.array([0.0, 0.0]),
                            np.array([0, 1]), 2)
    assert live.tolist() == [[True, True]]
    # the zero vectors' own bound is a number
    b = prune.score_bounds("tanimoto", np.array([[1e-300]]), np.array([-np.inf]),
                           np.array([-np.inf]), np.array([-np.inf]))
    assert b[0, 0] >= 0.0


@pytest.mark.parametrize("diagonal,k", [(True, None), (True, 3), (False, None), (False, 2)])
def test_the_bounds_in_chunks_of_a_few_rows_give_the_same_plan(monkeypatch, diagonal, k):
    # the plan computes its bounds a chunk of rows at a time (pairplan.CHUNK_BYTES),
    # on threads: chunks of 3 rows, on 1 or 3 threads, give the cells, floors
    # and pairs of one chunk for all
    from mrjobs.pairs import pairplan
    A, rs = prepared("cosine", corpus(11, 120, n_feats=60, density=0.08))
    C, cs = prepared("cosine", corpus(12, 90, n_feats=60, density=0.08))
    plans = []
    for chunk, threads in ((1 << 40, 1), (3 * 8 * 40, 1), (3 * 8 * 40, 3)):
        monkeypatch.setattr(pairplan, "CHUNK_BYTES", chunk)
        plans.append(run_both("cosine", A, C, rs, cs, 0.3, k, diagonal=diagonal,
                              group_size=3, threads=threads)[0])
    whole, chunked, threaded = plans
    assert np.array_equal(whole.live_r, threaded.live_r)
    assert np.array_equal(whole.live_r, chunked.live_r) and whole.cells_pruned > 0
    assert (whole.live_c is None) == (chunked.live_c is None)
    if whole.live_c is not None:
        assert np.array_equal(whole.live_c, chunked.live_c)
    assert np.array_equal(whole.theta_r, chunked.theta_r)
