"""The C kernels of the pair product (``_mrjobs_speedups``, from
``mrjobs/_speedups.c``) against the numpy path of :func:`mrjobs.pairs.pair_best`:
the same pairs, dot products and selections, to the bit, on random float
weights (tests/test_pairs.py checks both paths against a dense oracle)."""
import numpy as np
import pytest
import scipy.sparse as sp

import mrjobs.pairs
from mrjobs.counters import Counters
from mrjobs.pairs import COLUMNS, ROWS, pair_best
from mrjobs.scoring import Scorer


def _raw(A, C, k, limit, **kw):
    """Each direction's {group: [(other, score)]} as the kernel yields them
    (entries in the order they come, groups merged across results)."""
    results = pair_best(A, C, Scorer("dot", Counters(), kw.pop("threshold", None)), k, limit,
                        prune=False, **kw)  # the full product on both paths
    got = {ROWS: {}, COLUMNS: {}}
    while True:
        try:
            direction, groups, others, scores = next(results)
        except StopIteration as done:
            return got, done.value
        for g, o, s in zip(groups.tolist(), others.tolist(), scores.tolist()):
            got[direction].setdefault(g, []).append((o, s))


@pytest.mark.parametrize("diagonal,include_self,mirror", [
    (False, False, True), (True, False, True), (True, True, True), (False, False, False)])
@pytest.mark.parametrize("k,threshold,limit", [
    (1, None, 50), (5, None, 10**6), (5, 0.1, 200), (40, None, 300), (None, 0.2, 10**6)])
def test_c_kernels_give_the_numpy_paths_results_to_the_bit(k, threshold, limit, diagonal,
                                                           include_self, mirror):
    # random float weights: sums whose rounding depends on the order of the
    # terms, scores that tie only by equal dot products
    c = pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
    rng = np.random.default_rng(11)

    def block(n):
        m = sp.random(n, 40, density=0.15, random_state=rng, format="csr")
        m.data = rng.standard_normal(m.data.shape[0]) * 10.0 ** rng.integers(-3, 4, m.nnz)
        m.sort_indices()
        return m

    A = block(70)
    C = A if diagonal else block(55)
    kw = dict(threshold=threshold, diagonal=diagonal, include_self=include_self,
              mirror=mirror)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mrjobs.pairs, "_C", c)
        got_c, work_c = _raw(A, C, k, limit, **kw)
        mp.setattr(mrjobs.pairs, "_C", None)
        got_np, work_np = _raw(A, C, k, limit, **kw)
    for direction in (ROWS, COLUMNS):
        assert got_c[direction].keys() == got_np[direction].keys()
        for g, pairs in got_np[direction].items():
            # a group's entries come in no set order
            assert sorted(got_c[direction][g]) == sorted(pairs)
    assert work_c == work_np
    assert sum(map(len, got_c[ROWS].values())) > 0


def test_c_kernels_refuse_malformed_arrays_with_a_clear_error():
    c = pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
    A = sp.csr_matrix(np.array([[1.0, 2.0], [0.0, 3.0]]))
    a = mrjobs.pairs._csr_arrays(A)
    b = mrjobs.pairs._csr_arrays(A.T.tocsr())
    out = np.empty(4, np.int64), np.empty(4, np.int64), np.empty(4)
    assert c.dots(*a, *b, 2, 0, 2, 0, *out) == 4  # every column
    got = sorted(zip(out[0].tolist(), out[1].tolist(), out[2].tolist()))
    assert got == [(0, 0, 5.0), (0, 1, 6.0), (1, 0, 6.0), (1, 1, 9.0)]
    assert c.dots(*a, *b, 2, 0, 2, 1, *out) == 1  # above the diagonal
    assert (out[0][0], out[1][0], out[2][0]) == (0, 1, 6.0)
    assert c.dots(*a, *b, 2, 0, 2, 0, *(x[:3] for x in out)) == -1  # does not fit
    with pytest.raises(ValueError, match="a_indices: expected a contiguous array of int32"):
        c.dots(a[0], a[1].astype(np.int64), *a[2:], *b, 2, 0, 2, 0, *out)
    bad = a[1].copy()
    bad[0] = 7  # a feature beyond the transposed block's rows
    with pytest.raises(ValueError, match="malformed block: an index out of range"):
        c.dots(a[0], bad, a[2], *b, 2, 0, 2, 0, *out)
    neg = b[1].copy()
    neg[-1] = -1  # a column index below every row's first column
    with pytest.raises(ValueError, match="malformed block: an index out of range"):
        c.dots(*a, b[0], neg, b[2], 2, 0, 2, 0, *out)
    with pytest.raises(ValueError, match="malformed block: shapes"):
        c.dots(*a, *b, 2, 0, 3, 0, *out)  # rows beyond the block
    with pytest.raises(ValueError, match="kept_offer: a group out of range"):
        c.kept_offer(np.array([5]), np.array([0]), np.array([1.0]), False, 1, 2,
                     np.empty(4), np.empty(4, np.int64), np.zeros(2, np.int64),
                     np.full(2, -np.inf))
