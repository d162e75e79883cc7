"""A standing fuzz test of the pair kernel (mrjobs.pairs.kernel.pair_best) on hostile
arrays: the C kernels against their numpy twin, and the pruned path against
the full product, for every measure.

Blocks mix rows of every kind that has broken a kernel or a bound: zero
vectors (every weight 0.0, a log norm of -inf), empty vectors, subnormal
weights, float32's edges (its smallest subnormal and normal, its largest
finite), float64's largest, small integers (ties everywhere), both signs
(dot products that cancel to exactly 0.0).  Bounded in examples, never in
time, and derandomized: every run tries the same cases.

Results are compared as tests/pairs/test_pairs_c.py and tests/pairs/test_prune.py do:
each (direction, vector)'s entries, merged across results, ordered by score
descending then other index, cut to ``k``; scores to the bit.
"""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import mrjobs.pairs.kernel
from mrjobs import measures
from mrjobs.counters import Counters
from mrjobs.pairs.kernel import PairSpec, pair_best
from mrjobs.scoring import Scorer

pytestmark = pytest.mark.asan

FUZZ = settings(derandomize=True, max_examples=50, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])

F32_TINY, F32_NORMAL = float(np.finfo(np.float32).smallest_subnormal), \
    float(np.finfo(np.float32).tiny)
F32_MAX, F64_MAX = float(np.finfo(np.float32).max), float(np.finfo(np.float64).max)

#: weights of a row of each kind, from a generator and a count
ROWS = {
    "plain": lambda rng, n: rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n),
    "zero": lambda rng, n: np.zeros(n),
    "ties": lambda rng, n: rng.integers(1, 3, n).astype(np.float64),
    "subnormal": lambda rng, n: rng.choice([5e-324, 1e-320, 1e-310, 2.0 ** -1022], n),
    "float32 tiny": lambda rng, n: rng.choice([F32_TINY, F32_NORMAL, 1.0], n),
    "float32 huge": lambda rng, n: rng.choice([F32_MAX, 1e38, 1.0], n),
    "huge": lambda rng, n: rng.choice([F64_MAX, 1e300, 1.0], n),
    "mixed": lambda rng, n: rng.choice([0.0, 5e-324, F32_TINY, 1.0, F32_MAX, 1e300], n),
}
KINDS = sorted(ROWS)


def block(rng, kinds, n_features, density, negative):
    """Raw weights (CSR, indices sorted, explicit zeros kept): one row a kind,
    "empty" rows without entries."""
    indptr, indices, data = [0], [], []
    for kind in kinds:
        cols = np.flatnonzero(rng.random(n_features) < density)
        if kind == "empty":
            cols, w = cols[:0], np.zeros(0)
        else:
            w = ROWS[kind](rng, cols.shape[0])
        if negative:
            w = w * np.where(rng.random(cols.shape[0]) < 0.3, -1.0, 1.0)
        indices.extend(cols.tolist())
        data.extend(w.tolist())
        indptr.append(len(indices))
    M = sp.csr_matrix((np.array(data, np.float64), np.array(indices, np.int32),
                       np.array(indptr, np.int64)), shape=(len(kinds), n_features))
    M.has_sorted_indices = True
    return M


def prepared(measure, raw):
    """(prepared weights as CSR, statistics), as the vectors step prepares them."""
    w, stats = measures.prepare_rows(measure, raw.data, np.diff(raw.indptr),
                                     n_features=raw.shape[1])
    M = sp.csr_matrix((np.asarray(w, np.float64), raw.indices.copy(), raw.indptr.copy()),
                      shape=raw.shape)
    M.has_sorted_indices = True
    return M, stats


def collect(A, C, measure, stats, k, threshold, shape, float32, n_features, spec):
    """{(direction, vector): [(other, score)]} best first, cut to k, and the
    counters and work of the run."""
    counts = Counters()
    scorer = Scorer(measure, counts, threshold, n_features=n_features, float32=float32)
    spec = PairSpec(k, spec["limit"], diagonal=shape in ("diagonal", "self"),
                    include_self=shape == "self", mirror=shape != "queries",
                    prune=spec["prune"], kernel=spec["kernel"])
    results = pair_best(A, C, scorer, spec, stats_a=stats[0], stats_c=stats[1])
    got = {}
    while True:
        try:
            direction, groups, others, scores = next(results)
        except StopIteration as done:
            work = done.value
            break
        for g, o, s in zip(groups.tolist(), others.tolist(), scores.tolist()):
            got.setdefault((direction, g), []).append((o, s))
    return {key: sorted(v, key=lambda p: (-p[1], p[0]))[:k] for key, v in got.items()}, \
        counts, work


# (zero vectors twice as often as the other kinds: every bound's -inf - -inf)
kinds = st.lists(st.sampled_from(KINDS + ["empty", "zero"]), min_size=2, max_size=24)
cases = dict(
    seed=st.integers(0, 2 ** 32 - 1), kinds_a=kinds, kinds_c=kinds,
    n_features=st.integers(1, 8), density=st.sampled_from([0.3, 0.6, 1.0]),
    negative=st.booleans(), shape=st.sampled_from(["pair", "diagonal", "self", "queries"]),
    k=st.sampled_from([None, 1, 2, 5, 2 ** 62]), limit=st.sampled_from([3, 40, 10 ** 6]),
    float32=st.booleans())


def _blocks(measure, seed, kinds_a, kinds_c, n_features, density, negative, shape):
    rng = np.random.default_rng(seed)
    negative = negative and not measures.get(measure).counts
    raw_a = block(rng, kinds_a, n_features, density, negative)
    A, sa = prepared(measure, raw_a)
    if shape in ("diagonal", "self"):
        return A, A, (sa, sa)
    C, sc = prepared(measure, block(rng, kinds_c, n_features, density, negative))
    return A, C, (sa, sc)


@pytest.mark.parametrize("measure", measures.MEASURES)
@FUZZ
@given(threshold=st.sampled_from([None, -1.0, 0.0, 5e-324, 0.5, 1.0]), **cases)
@pytest.mark.slow
@pytest.mark.smoke
def test_c_and_numpy_kernels_agree_on_hostile_blocks(measure, seed, kinds_a, kinds_c,
                                                    n_features, density, negative, shape, k,
                                                    threshold, limit, float32):
    pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
    A, C, stats = _blocks(measure, seed, kinds_a, kinds_c, n_features, density, negative,
                          shape)
    args = (A, C, measure, stats, k, threshold, shape, float32, n_features)
    got_c = collect(*args, dict(limit=limit, prune=False, kernel="c"))
    got_np = collect(*args, dict(limit=limit, prune=False, kernel="numpy"))
    assert got_c[0] == got_np[0]
    assert got_c[1] == got_np[1]  # the same pairs scored and dropped
    assert got_c[2] == got_np[2]


@pytest.mark.parametrize("measure", sorted(measures.PRUNABLE))
@FUZZ
@given(threshold=st.sampled_from([-1.0, 0.0, 0.0, 5e-324, 1e-300, 0.3, 0.9, 1.0]), **cases)
# a zero vector met in its own group: tanimoto's bound was -inf - -inf = NaN,
# which killed the cell (issue 24, finding 4)
@example(seed=0, kinds_a=["zero", "plain"], kinds_c=["plain"], n_features=2, density=1.0,
         negative=False, shape="diagonal", k=None, threshold=0.0, limit=40, float32=False)
@pytest.mark.slow
@pytest.mark.smoke
def test_pruned_and_full_products_agree_on_hostile_blocks(measure, seed, kinds_a, kinds_c,
                                                         n_features, density, negative, shape,
                                                         k, threshold, limit, float32):
    A, C, stats = _blocks(measure, seed, kinds_a, kinds_c, n_features, density, negative,
                          shape)
    if measure in ("dot", "cooccurrence") and threshold > 0:
        threshold *= 4.0
    args = (A, C, measure, stats, k, threshold, shape, float32, n_features)
    plans = []
    pruned_best = mrjobs.pairs.kernel._pruned_best

    def spy(plan, *rest):
        plans.append(plan)
        return (yield from pruned_best(plan, *rest))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mrjobs.pairs.kernel, "_pruned_best", spy)  # (to see the path taken)
        pruned = collect(*args, dict(limit=limit, prune="always", kernel="auto"))[0]
    assert len(plans) == 1  # the pruned path was taken
    assert pruned == collect(*args, dict(limit=limit, prune="never", kernel="auto"))[0]
