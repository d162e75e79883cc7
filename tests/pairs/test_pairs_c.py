"""The C kernels of the pair product (``_mrjobs_speedups``, from
``mrjobs/csrc/``) against the numpy path of :func:`mrjobs.pairs.kernel.pair_best`:
the same pairs, dot products and selections, to the bit, on random float
weights (tests/pairs/test_pairs.py checks both paths against a dense oracle)."""
import numpy as np
import pytest
import scipy.sparse as sp

import mrjobs.pairs.kernel
from mrjobs.counters import Counters
from mrjobs.pairs.kernel import COLUMNS, ROWS, PairSpec, pair_best
from mrjobs.scoring import Scorer

pytestmark = pytest.mark.asan


def _raw(A, C, k, limit, kernel, **kw):
    """Each direction's {group: [(other, score)]} as the ``kernel`` yields them
    (entries in the order they come, groups merged across results)."""
    scorer = Scorer(kw.pop("measure", "dot"), Counters(), kw.pop("threshold", None))
    spec = PairSpec(k, limit, prune=False, kernel=kernel, **kw)  # the full product on both
    results = pair_best(A, C, scorer, spec)
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
    pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
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
    got_c, work_c = _raw(A, C, k, limit, "c", **kw)
    got_np, work_np = _raw(A, C, k, limit, "numpy", **kw)
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
    a = mrjobs.pairs.kernel._csr_arrays(A)
    b = mrjobs.pairs.kernel._csr_arrays(A.T.tocsr())
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


# -- what mrjobs/csrc/ promises of malformed input: one test a promise ------

def _small():
    """A 2 x 2 block's CSR arrays, its transpose's, and outputs for 4 pairs."""
    A = sp.csr_matrix(np.array([[1.0, 2.0], [0.0, 3.0]]))
    a = mrjobs.pairs.kernel._csr_arrays(A)
    b = mrjobs.pairs.kernel._csr_arrays(A.T.tocsr())
    out = np.empty(4, np.int64), np.empty(4, np.int64), np.empty(4)
    return a, b, out


def _kept(n_g=2, cap=3):
    """Empty kept_offer buffers: (ks, ko, kn, floor)."""
    return (np.empty(n_g * cap), np.empty(n_g * cap, np.int64), np.zeros(n_g, np.int64),
            np.full(n_g, -np.inf))


def _topk(c, a, b, mode=0, kept=None, merge=False, k=2, cap=3, n_c=2):
    """pair_topk over the 2 x 2 block (scores of dot, no threshold): rows 0..2
    in ``mode``, the columns' buffers ``kept`` (None: no mirror); its rows'
    entries as a sorted list of (group, other, score)."""
    got = c.pair_topk(a=a, bt=b, n_c=n_c, start=0, end=2, mode=mode, k=k, kind=0,
                      threshold=-np.inf, limit=np.inf, counts=np.zeros(4, np.int64),
                      kept=None if kept is None else (1, cap, *kept), merge=merge)
    return _entries(got)


def _entries(got):
    g, o, s = got
    return sorted(zip(np.frombuffer(g, np.int64).tolist(), np.frombuffer(o, np.int64).tolist(),
                      np.frombuffer(s, np.float64).tolist()))


def _with(arrays, i, value):
    arrays = list(arrays)
    arrays[i] = np.asarray(value, dtype=arrays[i].dtype)
    return arrays


def _index_cases():
    a, b, out = _small()  # a: indptr [0 2 3], indices [0 1 1]; b: indptr [0 1 3]
    g1, o1, s1 = np.array([1]), np.array([0]), np.array([1.0])
    return {
        "a_indptr negative": lambda c: c.dots(*_with(a, 0, [-1, 2, 3]), *b, 2, 0, 2, 0, *out),
        "a_indptr decreasing": lambda c: c.dots(*_with(a, 0, [0, 3, 2]), *b, 2, 0, 2, 0, *out),
        "a_indptr beyond a_indices": lambda c: c.dots(*_with(a, 0, [0, 2, 9]), *b, 2, 0, 2, 0,
                                                      *out),
        "a_indices beyond bt_indptr": lambda c: c.dots(*_with(a, 1, [0, 2, 1]), *b, 2, 0, 2, 0,
                                                       *out),
        "a_indices negative": lambda c: c.dots(*_with(a, 1, [0, -1, 1]), *b, 2, 0, 2, 0, *out),
        "bt_indptr beyond bt_indices": lambda c: c.dots(*a, *_with(b, 0, [0, 1, 7]), 2, 0, 2, 0,
                                                        *out),
        "bt_indptr decreasing": lambda c: c.dots(*a, *_with(b, 0, [0, 3, 1]), 2, 0, 2, 0, *out),
        "bt_indices beyond n_c": lambda c: c.dots(*a, *_with(b, 1, [0, 0, 2]), 2, 0, 2, 0, *out),
        "bt_indices negative": lambda c: c.dots(*a, *_with(b, 1, [-3, 0, 1]), 2, 0, 2, 0, *out),
        "kept_offer group beyond kn": lambda c: c.kept_offer(np.array([2]), o1, s1, False, 1, 3,
                                                             *_kept()),
        "kept_offer group negative": lambda c: c.kept_offer(np.array([-1]), o1, s1, False, 1, 3,
                                                            *_kept()),
        "kept_offer kn beyond cap": lambda c: c.kept_offer(
            g1, o1, s1, False, 1, 3, *_with(_kept(), 2, [0, 3])),
        "kept_offer kn negative": lambda c: c.kept_offer(
            g1, o1, s1, False, 1, 3, *_with(_kept(), 2, [0, -5])),
        "kept_take kn beyond cap": lambda c: c.kept_take(
            1, *_with(_kept(), 2, [0, 4])[:3], *out),
        "kept_take kn negative": lambda c: c.kept_take(
            1, *_with(_kept(), 2, [-1, 0])[:3], *out),
        "pair_topk a_indptr beyond a_indices": lambda c: _topk(c, _with(a, 0, [0, 2, 9]), b),
        "pair_topk a_indices beyond bt_indptr": lambda c: _topk(c, _with(a, 1, [0, 2, 1]), b),
        "pair_topk bt_indptr decreasing": lambda c: _topk(c, a, _with(b, 0, [0, 3, 1])),
        "pair_topk bt_indices beyond n_c": lambda c: _topk(c, a, _with(b, 1, [0, 0, 2])),
        "pair_topk kn beyond cap": lambda c: _topk(c, a, b, kept=_with(_kept(), 2, [3, 3])),
        "pair_topk kn negative": lambda c: _topk(c, a, b, kept=_with(_kept(), 2, [-1, 0])),
        "pair_topk merged kn beyond cap": lambda c: _topk(
            c, a, b, mode=1, merge=True, kept=_with(_kept(), 2, [7, 0])),
    }


@pytest.mark.parametrize("case", sorted(_index_cases()), ids=lambda case: case.replace(" ", "-"))
def test_c_kernels_check_every_index_they_read(case):
    c = pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
    with pytest.raises(ValueError, match="^malformed block: .*(range|shapes)"):
        _index_cases()[case](c)


def test_c_kernels_refuse_arrays_of_another_type_or_layout():
    c = pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
    a, b, out = _small()
    strided = np.zeros(8)[::2]
    with pytest.raises(ValueError, match="a_data: expected a contiguous array of float64"):
        c.dots(a[0], a[1], a[2].astype(np.float32), *b, 2, 0, 2, 0, *out)
    with pytest.raises(ValueError, match="contiguous"):  # numpy's own message
        c.dots(*a, *b, 2, 0, 2, 0, out[0], out[1], strided)
    frozen = out[2].copy()
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        c.dots(*a, *b, 2, 0, 2, 0, out[0], out[1], frozen)


def test_c_kernels_check_every_size_they_compute():
    c = pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
    g, o, s = np.array([0, 0, 1]), np.array([1, 2, 0]), np.array([1.0, 2.0, 3.0])
    # len(kn) * cap wraps around to len(ks) (3 * 6148914691236517206 == 2**64 + 2):
    # the shapes seemed to match, and group 1's slots lay far beyond the buffers
    with pytest.raises(ValueError, match="malformed block: kept_offer: len.kn. \\* cap "
                                         "slots overflow"):
        c.kept_offer(np.array([1]), np.array([0]), np.array([1.0]), False, 1,
                     6148914691236517206, np.empty(2), np.empty(2, np.int64),
                     np.zeros(3, np.int64), np.full(3, -np.inf))
    # outputs shorter than the kernels write
    short = np.empty(2, np.int64), np.empty(2, np.int64), np.empty(2)
    with pytest.raises(ValueError, match="malformed block: top_k_rows: shapes"):
        c.top_k_rows(g, o, s, 1, *short)
    ks, ko, kn, floor = _kept(2, 3)
    c.kept_offer(g, o, s, False, 1, 3, ks, ko, kn, floor)
    assert kn.tolist() == [2, 1]
    with pytest.raises(ValueError, match="malformed block: kept_take: shapes"):
        c.kept_take(1, ks, ko, kn, *(x[:1] for x in short))
    with pytest.raises(ValueError, match="malformed block: kept_take: shapes"):
        c.kept_take(1, ks[:5], ko, kn, *short)  # slots not len(kn) * cap
    with pytest.raises(ValueError, match="16 id bytes a score expected"):
        c.neighbours_json(b"\0" * 15, np.array([1.0]))
    a, b, out = _small()
    assert c.dots(*a, *b, 2, 0, 2, 0, *(x[:3] for x in out)) == -1  # does not fit
    with pytest.raises(ValueError, match="malformed block: shapes"):
        c.dots(*a, *b, 2, 1, 0, 0, *out)  # r1 < r0


def test_pair_topk_checks_its_sizes_and_arguments():
    c = pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
    a, b, out = _small()
    counts = np.zeros(4, np.int64)
    # the rows' best, and the columns' (mirror); counts: scored, not finite, below, products
    ks, ko, kn, floor = _kept(2, 3)
    got = c.pair_topk(a=a, bt=b, n_c=2, start=0, end=2, mode=0, k=2, kind=0, threshold=5.5,
                      limit=np.inf, counts=counts, kept=(1, 3, ks, ko, kn, floor))
    assert _entries(got) == [(0, 1, 6.0), (1, 0, 6.0), (1, 1, 9.0)]
    assert counts.tolist() == [4, 0, 1, 4] and kn.tolist() == [1, 2]  # (cut at 3)
    with pytest.raises(ValueError, match="malformed block: pair_topk: shapes"):
        _topk(c, a, b, k=0)
    with pytest.raises(ValueError, match="malformed block: pair_topk: the columns' buffers"):
        _topk(c, a, b, kept=_kept(2, 3), cap=1)  # cap <= k_c
    with pytest.raises(ValueError, match="malformed block: pair_topk: the columns' buffers"):
        _topk(c, a, b, kept=_kept(3, 3), n_c=2)  # a buffer a column
    with pytest.raises(ValueError, match="merge needs a diagonal block and its mirror"):
        _topk(c, a, b, mode=0, kept=_kept(), merge=True)
    with pytest.raises(ValueError, match="merge needs a diagonal block and its mirror"):
        _topk(c, a, b, mode=1, merge=True)
    # a k beyond the columns keeps them all (no k * rows nor k + k / 2 overflow)
    for k in (3, 6148914691236517206, 2 ** 63 - 1):
        assert _topk(c, a, b, k=k) == [(0, 0, 5.0), (0, 1, 6.0), (1, 0, 6.0), (1, 1, 9.0)]


@pytest.mark.parametrize("k", [3, 16, 6148914691236517206, 2 ** 63 - 1])
def test_a_k_beyond_the_entries_keeps_them_all(k):
    # k + k / 2 overflowed from k = 6148914691236517206 (--top-k): SIGSEGV
    c = pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
    g, o, s = np.array([0, 0, 1]), np.array([1, 2, 0]), np.array([1.0, 2.0, 3.0])
    out = np.empty(3, np.int64), np.empty(3, np.int64), np.empty(3)
    assert c.top_k_rows(g, o, s, k, *out) == 3
    assert sorted(zip(*(x.tolist() for x in out))) == [(0, 1, 1.0), (0, 2, 2.0), (1, 0, 3.0)]
    ks, ko, kn, floor = _kept(2, k + 1 if k < 2 ** 62 else 3)
    if k < 2 ** 62:
        c.kept_offer(g, o, s, False, k, k + 1, ks, ko, kn, floor)
        assert c.kept_take(k, ks, ko, kn, *out) == 3
        assert sorted(zip(*(x.tolist() for x in out))) == [(0, 1, 1.0), (0, 2, 2.0),
                                                           (1, 0, 3.0)]
    # and through the pair kernel, on both paths, as --top-k gives it
    A = sp.csr_matrix(np.array([[1.0, 2.0], [0.0, 3.0], [4.0, 0.0]]))
    got = []
    for kernel, top in (("c", k), ("numpy", k), ("numpy", None)):
        raw = _raw(A, A, top, 50, kernel, diagonal=True)[0]
        got.append({d: {g: sorted(v) for g, v in groups.items()}
                    for d, groups in raw.items()})
    assert got[0] == got[1] == got[2]
    assert got[0][ROWS] == {0: [(1, 6.0), (2, 4.0)]}


@pytest.mark.parametrize("mode", [1, 2])
def test_dots_checks_the_column_order_it_relies_on(mode):
    # on a diagonal block a feature's walk stops at the first column below the
    # row: columns out of order lost pairs silently
    c = pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
    A = sp.csr_matrix(np.ones((4, 1)))
    a = mrjobs.pairs.kernel._csr_arrays(A)
    b = mrjobs.pairs.kernel._csr_arrays(A.T.tocsr())
    out = np.empty(16, np.int64), np.empty(16, np.int64), np.empty(16)
    assert c.dots(*a, *b, 4, 0, 4, mode, *out) == (6 if mode == 1 else 10)
    unsorted = np.array([2, 0, 3, 1], np.int32)
    with pytest.raises(ValueError, match="malformed block: a feature's columns "
                                         ".bt_indices. not ascending"):
        c.dots(*a, b[0], unsorted, b[2], 4, 0, 4, mode, *out)
    # every column is read in mode 0: any order gives every pair
    assert c.dots(*a, b[0], unsorted, b[2], 4, 0, 4, 0, *out) == 16


@pytest.mark.slow
def test_a_huge_k_on_many_short_rows_holds_what_the_rows_keep():
    # pair_topk's outputs grow with what the rows keep: sized rows x k up front,
    # 20,000 rows of a chunk at --top-k 2**40 asked for 20,000 x 20,000 slots
    pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
    n = 20000
    A = sp.csr_matrix((np.ones(n), np.arange(n) // 2, np.arange(n + 1)), shape=(n, n // 2))
    got, work = _raw(A, A, 2 ** 40, 10 ** 6, "c", diagonal=True, merge=True)
    assert work.products == n // 2
    assert got[ROWS] == {r: [(r ^ 1, 1.0)] for r in range(n)} and got[COLUMNS] == {}


def _by_pair(r, col, s):
    """(row * 2**32 + column, sum) of pairs, in that order."""
    key = np.asarray(r, np.int64) * 2 ** 32 + np.asarray(col, np.int64)
    order = np.argsort(key, kind="stable")
    return key[order], np.asarray(s, np.float64)[order]


def _dots_all(c, a, b, n_c, n_r, mode):
    """Every pair dots() gives (:func:`_by_pair`)."""
    cap = n_r * n_c
    out = np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap)
    n = c.dots(*a, *b, n_c, 0, n_r, mode, *out)
    return _by_pair(*(x[:n] for x in out))


def _topk_all(c, a, b, n_c, n_r, mode, counts=None, *zero_free):
    """Every pair pair_topk scores (dot, no threshold, a k beyond the columns;
    :func:`_by_pair`)."""
    counts = np.zeros(4, np.int64) if counts is None else counts
    g, o, s = c.pair_topk(a=a, bt=b, n_c=n_c, start=0, end=n_r, mode=mode, k=n_c + 1, kind=0,
                          threshold=-np.inf, limit=np.inf, counts=counts,
                          **dict(zip(["zero_free"], zero_free)))
    return _by_pair(np.frombuffer(g, np.int64), np.frombuffer(o, np.int64),
                    np.frombuffer(s, np.float64))


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.slow
def test_pair_topk_sums_long_rows_and_heavy_features_as_dots_does(mode):
    # long rows are summed densely, a chunk of columns at a time, and the
    # features held by many columns as dense rows of weights: the same pairs
    # and the same doubles as dots(), whose sums start at 0.0 and add each
    # row's products in its entries' order -- with products that underflow to
    # +-0.0 and sums that cancel to exactly 0.0 (such a pair is still scored)
    c = pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
    rng = np.random.default_rng(5)
    n, n_f = 2200, 60  # more columns than one dense chunk
    density = np.where(np.arange(n_f) < 6, 0.6, 0.01)  # 6 heavy features
    dense = (rng.random((n, n_f)) < density) * rng.standard_normal((n, n_f))
    dense *= 10.0 ** rng.integers(-3, 4, (n, n_f))
    dense[:40, 0] = 1e-200  # products of 1e-200 * 1e-200: +-0.0
    dense[40:80, 0] = -1e-200
    dense[80:90, 1], dense[80:90, 2] = 1.0, 0.0
    dense[90:100, 1], dense[90:100, 2] = 1.0, -1.0  # with rows 80..89: 1 - 1 = 0.0
    dense[90:100, 2] = np.where(np.arange(10) % 2, -1.0, 1.0)
    A = sp.csr_matrix(dense)
    A.sort_indices()
    a = mrjobs.pairs.kernel._csr_arrays(A)
    b = mrjobs.pairs.kernel._csr_arrays(A.T.tocsr())
    want = _dots_all(c, a, b, n, n, mode)
    counts = np.zeros(4, np.int64)
    got = _topk_all(c, a, b, n, n, mode, counts)
    assert np.array_equal(got[0], want[0])
    assert got[1].tobytes() == want[1].tobytes()  # (-0.0 and 0.0 differ here)
    assert counts[0] == counts[3] == want[0].shape[0]
    assert (want[1] == 0.0).any()


@pytest.mark.parametrize("weights", ["positive", "negative", "infinite"])
@pytest.mark.parametrize("mode", [0, 1, 2, 3])
@pytest.mark.slow
def test_pair_topk_without_hit_bytes_where_no_sum_is_zero(mode, weights):
    # where every weight of each side is finite and of one sign and no product
    # underflows, a sum not 0.0 is a pair that shares a feature: the dense
    # sums keep no hit bytes (zero_free, as fused_best finds it) -- the same
    # pairs, sums and counts as with them (not told: kept), and as dots()
    c = pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
    rng = np.random.default_rng(11)
    n, n_f = 2200, 60  # more columns than one dense chunk
    density = np.where(np.arange(n_f) < 6, 0.6, 0.01)  # 6 heavy features
    dense = (rng.random((n, n_f)) < density) * rng.random((n, n_f)) * 10.0 ** rng.integers(
        -3, 4, (n, n_f))
    if weights == "negative":
        dense = -dense
    A = sp.csr_matrix(dense)
    A.sort_indices()
    if weights == "infinite":  # inf * 0.0 is NaN: not zero-free, whatever the signs
        A.data[A.indices == 0] = np.inf
    a = mrjobs.pairs.kernel._csr_arrays(A)
    b = mrjobs.pairs.kernel._csr_arrays(A.T.tocsr())
    from mrjobs.pairs import fused

    told = fused._zero_free(a[2], b[2])
    assert told == (weights != "infinite")
    runs, best = {}, {}
    for zero_free in ((), (0,), (told,)):
        counts = np.zeros(4, np.int64)
        got = _topk_all(c, a, b, n, n, mode, counts, *zero_free)
        runs[zero_free] = (got[0].tobytes(), got[1].tobytes(), tuple(counts.tolist()))
        # a row's best 3: floors rise, quiet sums are passed over 8 at a time
        counts = np.zeros(4, np.int64)
        got = c.pair_topk(a=a, bt=b, n_c=n, start=0, end=n, mode=mode, k=3, kind=0,
                          threshold=-np.inf, limit=np.inf, counts=counts,
                          **dict(zip(["zero_free"], zero_free)))
        best[zero_free] = got + (tuple(counts.tolist()),)
    assert len(set(runs.values())) == 1 and len(set(best.values())) == 1
    got_pairs, got_sums, counts = runs[()]
    if mode != 3 and weights != "infinite":  # (whole rows are no mode of dots(); an
        want = _dots_all(c, a, b, n, n, mode)   # infinite score is not kept)
        assert got_pairs == want[0].tobytes() and got_sums == want[1].tobytes()
        assert counts[0] == want[0].shape[0]


def test_pair_topk_walks_a_heavy_feature_with_a_column_twice_as_dots_does():
    # a malformed block (a column twice in a feature's list) is not summed as
    # a dense row: both products are added, as dots() adds them
    c = pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
    bt_indptr = np.array([0, 5, 6], np.int64)
    bt_indices = np.array([0, 1, 1, 2, 3, 3], np.int32)
    bt_data = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    a = (np.array([0, 2, 3], np.int64), np.array([0, 1, 0], np.int32), np.array([1.0, 1.0, 2.0]))
    b = (bt_indptr, bt_indices, bt_data)
    got, want = _topk_all(c, a, b, 4, 2, 0), _dots_all(c, a, b, 4, 2, 0)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert dict(zip(*(x.tolist() for x in got))) == {
        0: 1.0, 1: 5.0, 2: 4.0, 3: 11.0, 2 ** 32: 2.0, 2 ** 32 + 1: 10.0, 2 ** 32 + 2: 8.0,
        2 ** 32 + 3: 10.0}


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("k", [100, 250])
@pytest.mark.parametrize("diagonal", [False, True])
@pytest.mark.slow
def test_large_k_buffers_cut_by_a_sampled_floor_keep_the_same_best(k, diagonal, ties):
    # a buffer of cap >= 128 slots is cut to the entries not below a score
    # sampled from it (exactly, to its k best, when the sample misses or ties
    # leave no room): rows and columns of hundreds of candidates each, with
    # scores from a few values (ties everywhere) or random floats
    c = pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
    rng = np.random.default_rng(k + 7 * diagonal + 3 * ties)

    def block(n):
        m = sp.random(n, 12, density=0.5, random_state=rng, format="csr")
        m.data = (rng.integers(1, 3, m.nnz).astype(float) if ties
                  else rng.standard_normal(m.nnz))
        m.sort_indices()
        return m

    A = block(900)
    C = A if diagonal else block(700)
    got_c, _ = _raw(A, C, k, 10 ** 6, "c", diagonal=diagonal)
    got_np, _ = _raw(A, C, k, 10 ** 6, "numpy", diagonal=diagonal)
    for direction in (ROWS, COLUMNS):
        assert got_c[direction].keys() == got_np[direction].keys()
        assert any(len(v) == k for v in got_np[direction].values()) or (
            diagonal and direction == COLUMNS)
        for g, pairs in got_np[direction].items():
            assert sorted(got_c[direction][g]) == sorted(pairs)
    # kept_offer and kept_take, the buffers the numpy path's columns use
    g = rng.integers(0, 3, 20000)
    s = rng.integers(0, 4, 20000).astype(float) if ties else rng.standard_normal(20000)
    o = np.arange(20000)
    cap = k + k // 2
    ks, ko, kn, floor = _kept(3, cap)
    for part in np.array_split(np.arange(20000), 7):
        c.kept_offer(g[part], o[part], s[part], False, k, cap, ks, ko, kn, floor)
    out = np.empty(3 * k, np.int64), np.empty(3 * k, np.int64), np.empty(3 * k)
    assert c.kept_take(k, ks, ko, kn, *out) == 3 * k
    for group in range(3):
        mine = np.flatnonzero(g == group)
        best = mine[np.lexsort((o[mine], -s[mine]))][:k]
        assert sorted(out[1][out[0] == group].tolist()) == sorted(best.tolist())


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("k", [1, 3, 10])
@pytest.mark.parametrize("measure", ["dot", "cosine"])
@pytest.mark.parametrize("diagonal,merge", [(False, False), (True, False), (True, True)])
def test_dense_blocks_small_k_keep_the_same_best(k, measure, diagonal, merge, ties):
    # every pair shares a feature (two heavy ones), so each row is summed
    # densely and most of its columns are quiet -- below its floor and its
    # column's -- where pair_topk passes 8 columns at a time; a small k cuts
    # its buffers at the k-th best score, ties kept: scores from a few values
    # (ties everywhere) or random floats
    pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
    from mrjobs.measures import prepare_rows

    rng = np.random.default_rng(k + 5 * ties + 11 * diagonal + 17 * merge)

    def block(n):
        m = sp.random(n, 30, density=0.2, random_state=rng, format="lil")
        m[:, :2] = 1.0  # two features every row holds
        m = m.tocsr()
        m.data = (rng.integers(1, 3, m.nnz).astype(float) if ties
                  else rng.standard_normal(m.nnz))
        m.sort_indices()
        if measure == "cosine":
            m.data = prepare_rows("cosine", m.data, np.diff(m.indptr))[0]
        return m

    A = block(400)
    C = A if diagonal else block(300)

    kw = dict(measure=measure, diagonal=diagonal, merge=merge)
    got_c, work_c = _raw(A, C, k, 10 ** 6, "c", **kw)
    got_np, work_np = _raw(A, C, k, 10 ** 6, "numpy", **kw)
    assert work_c.products == work_np.products == (400 * 399 // 2 if diagonal else 400 * 300)
    for direction in (ROWS, COLUMNS):
        assert got_c[direction].keys() == got_np[direction].keys()
        for g, pairs in got_np[direction].items():
            assert sorted(got_c[direction][g]) == sorted(pairs)
    assert len(got_np[ROWS]) == 400 - (diagonal and not merge)


@pytest.mark.parametrize("signs", ["positive", "signed"])
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("diagonal,merge", [(False, False), (True, False), (True, True)])
def test_dense_rows_among_columns_not_hit_keep_the_same_best(k, diagonal, merge, signs):
    # a sixth of the rows hold the same three features (walks long enough for
    # a dense row) and the rest one light feature each: a dense row's columns
    # are mostly not hit, and a column's floor is -inf until its buffer fills
    # -- the scan passes such columns over 8 at a time, and stops at each hit
    # one that is not quiet.  Signed (hit bytes, no zero_free): three rows
    # halfway whose sums are exactly 0.0 with every other of the sixth and
    # -3.0 with each other, the first with a positive sum first, so that its
    # floor and its columns' are above 0.0 when the 0.0 sums come: quiet hit
    # columns, counted as scored; ties everywhere
    pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
    rng = np.random.default_rng(k + 3 * diagonal + 7 * merge)

    def block(n, specials):
        dense = np.zeros((n, 40))
        held = np.arange(n) % 6 == 0
        dense[held, :3] = rng.choice([1.0, 2.0], (int(held.sum()), 3))
        if signs == "signed":
            dense[held, :3] = dense[held, :1]  # multiples of (1, 1, 1)
        dense[~held, 3 + rng.integers(0, 37, int((~held).sum()))] = 1.0
        if signs == "signed" and specials:
            dense[[1500, 1506, 1512], :3] = [[1, 1, -2], [-2, 1, 1], [1, -2, 1]]
            dense[1500, 39], dense[1503] = 10.0, np.eye(40)[39]
        m = sp.csr_matrix(dense)
        m.sort_indices()
        return m

    A = block(3000, True)
    C = A if diagonal else block(2500, False)
    kw = dict(diagonal=diagonal, merge=merge)
    got_c, work_c = _raw(A, C, k, 10 ** 6, "c", **kw)
    got_np, work_np = _raw(A, C, k, 10 ** 6, "numpy", **kw)
    assert work_c.products == work_np.products
    for direction in (ROWS, COLUMNS):
        assert got_c[direction].keys() == got_np[direction].keys()
        for g, pairs in got_np[direction].items():
            assert sorted(got_c[direction][g]) == sorted(pairs)
    if signs == "signed":  # sums of exactly 0.0 among the best
        assert any(s == 0.0 for pairs in got_np[ROWS].values() for _, s in pairs)


@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("k,threshold,limit", [
    (1, None, 10 ** 6), (3, 0.2, 40), (10, None, 200), (500, None, 10 ** 6), (4, -0.5, 10 ** 6)])
@pytest.mark.parametrize("measure", ["dot", "cosine"])
@pytest.mark.parametrize("path,threads,include_self", [
    ("whole rows", 2, False), ("triangle", 2, False), ("triangle", 3, True)])
@pytest.mark.slow
def test_rows_on_threads_give_the_merged_triangle(k, threshold, limit, measure, dense, path,
                                                  threads, include_self, monkeypatch):
    # --pair-threads: a diagonal block's chunks of rows at once on threads --
    # each row against every column but itself (whole rows), or the upper
    # triangle with a column buffer a thread, merged at the end (a small k) --
    # against the upper triangle merged with its column buffers on one
    # thread: the same rows, products and counters
    pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
    from mrjobs.measures import prepare_rows
    from mrjobs.pairs import fused

    monkeypatch.setattr(fused, "TRIANGLE_MAX_K", 10 ** 6 if path == "triangle" else 0)
    taken = []
    for name in ("_triangle", "_whole_rows"):
        monkeypatch.setattr(fused, name, lambda *a, _run=getattr(fused, name), _name=name: (
            taken.append(_name) or _run(*a)))

    rng = np.random.default_rng(k + 7 * dense)
    m = sp.random(350, 60, density=0.08, random_state=rng, format="lil")
    if dense:
        m[:, :2] = 1.0  # every pair shares a feature: rows summed densely
    m = m.tocsr()
    m.data = (rng.integers(-2, 3, m.nnz).astype(float) if dense  # ties
              else rng.standard_normal(m.nnz))
    m.eliminate_zeros()
    m.sort_indices()
    if measure == "cosine":
        keep = np.diff(m.indptr) > 0
        m = m[keep]
        m.data = prepare_rows("cosine", m.data, np.diff(m.indptr))[0]

    def run(threads):
        counts = Counters()
        spec = PairSpec(k, limit, diagonal=True, merge=True, prune=False, kernel="c",
                        threads=threads, include_self=include_self)
        results = pair_best(m, m, Scorer(measure, counts, threshold), spec)
        got = {}
        while True:
            try:
                direction, groups, others, scores = next(results)
            except StopIteration as done:
                return got, done.value, dict(counts)
            assert direction == ROWS
            for g, o, s in zip(groups.tolist(), others.tolist(), scores.tolist()):
                got.setdefault(g, []).append((o, s))

    one, work_one, counts_one = run(1)
    assert not taken
    two, work_two, counts_two = run(threads)
    assert taken == ["_" + path.replace(" ", "_")]
    assert one and {g: sorted(v) for g, v in two.items()} == {
        g: sorted(v) for g, v in one.items()}
    assert work_two == work_one and counts_two == counts_one
    assert list(two) == sorted(two)  # rows in order
    if path == "whole rows":  # each row's best in its output order
        assert all(v == sorted(v, key=lambda e: (-e[1], e[0])) for v in two.values())


@pytest.mark.parametrize("mode", [1, 2])
@pytest.mark.slow
def test_seeds_hold_each_rows_kth_best_and_are_checked(mode):
    # with seeds, pair_topk takes its rows bottom-up and leaves in seeds[r]
    # the k-th best score of row r's own columns (those after it; with mode 2
    # itself too), -inf where it has fewer than k; the same rows' best as
    # without (the columns' buffers may keep fewer: offers below a seed)
    c = pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
    rng = np.random.default_rng(mode)
    n, k = 120, 7
    m = sp.random(n, 30, density=0.15, random_state=rng, format="csr")
    m.data = rng.integers(1, 4, m.nnz).astype(float)  # ties
    m.sort_indices()
    a = mrjobs.pairs.kernel._csr_arrays(m)
    b = mrjobs.pairs.kernel._csr_arrays(m.T.tocsr())
    cap = k + 8

    def run(seeds):
        counts = np.zeros(4, np.int64)
        g, o, s = c.pair_topk(a=a, bt=b, n_c=n, start=0, end=n, mode=mode, k=k, kind=0,
                              threshold=-np.inf, limit=np.inf, counts=counts,
                              kept=(k, cap, *_kept(n, cap)), seeds=seeds)
        rows = {}
        for g, o, s in zip(*(np.frombuffer(x, t).tolist()
                             for x, t in ((g, np.int64), (o, np.int64), (s, np.float64)))):
            rows.setdefault(g, []).append((o, s))
        return rows, counts.tolist()

    seeds = np.full(n, -np.inf)
    with_seeds, counts = run(seeds)
    without, counts_without = run(None)
    assert counts == counts_without
    assert {g: sorted(v) for g, v in with_seeds.items()} == {
        g: sorted(v) for g, v in without.items()}
    P = (m @ m.T).toarray()
    for r in range(n):
        own = [P[r, j] for j in range(r + (mode == 1), n) if m[r].multiply(m[j]).nnz]
        assert seeds[r] == (sorted(own)[-k] if len(own) >= k else -np.inf), r
    assert np.isfinite(seeds).sum() > n // 2 and np.isinf(seeds).any()  # both kinds met
    for bad in (np.full(n - 1, -np.inf), np.full(n, -np.inf, np.float32)):
        with pytest.raises(ValueError):
            run(bad)
    with pytest.raises(ValueError, match="seeds"):
        c.pair_topk(a=a, bt=b, n_c=n, start=0, end=n, mode=mode, k=k, kind=0,
                    threshold=-np.inf, limit=np.inf, counts=np.zeros(4, np.int64),
                    seeds=np.full(n, -np.inf))  # no mirror


@pytest.mark.parametrize("k", [250, 400])
def test_whole_rows_come_best_first_through_ties_and_zeros(monkeypatch, k):
    # a whole row of at least 128 entries is ordered by a radix sort of its
    # scores' bits: ties (by other, as everywhere), zeros, tiny and negative
    # scores in the order sort_best gives
    pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
    from mrjobs.pairs import fused

    monkeypatch.setattr(fused, "TRIANGLE_MAX_K", 0)
    rng = np.random.default_rng(k)
    n = 300
    # one feature every row holds: every pair a candidate; products that
    # underflow to zero (of either sign), tiny ones, ties, both signs
    w = rng.choice([1e-200, -1e-200, 1e-170, 1.0, -1.0, 2.0, 0.5], n)
    m = sp.csr_matrix((w, np.zeros(n, np.int32), np.arange(n + 1)), shape=(n, 3))
    m.sort_indices()
    spec = PairSpec(k, 10 ** 6, diagonal=True, merge=True, prune=False, kernel="c",
                    threads=2)
    rows = {}
    for direction, groups, others, scores in pair_best(m, m, Scorer("dot", Counters()), spec):
        assert direction == ROWS
        for g, o, s in zip(groups.tolist(), others.tolist(), scores.tolist()):
            rows.setdefault(g, []).append((o, s))
    assert sorted(rows) == list(range(n))
    for g, row in rows.items():
        # a sum from 0.0: a product that underflowed to -0.0 scores 0.0
        expected = sorted(((o, 0.0 + w[g] * w[o]) for o in range(n) if o != g),
                          key=lambda e: (-e[1], e[0]))[:k]
        assert [(o, s, np.signbit(s)) for o, s in row] == [
            (o, s, np.signbit(s)) for o, s in expected], g
    best = [s for row in rows.values() for _, s in row]
    assert 0.0 in best and 1e-200 in best and -1.0 in best  # the cases were there


@pytest.fixture(params=[True, False], ids=["avx2", "plain"])
def simd(request):
    """The C kernels with their AVX2 paths on (where the processor has AVX2)
    and off; restored after the test."""
    c = pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
    before = c.avx2()
    c.avx2(request.param)
    yield request.param
    c.avx2(before)


@pytest.mark.parametrize("weights,zero_free", [
    (w, z) for w in ("sampled columns best", "ties", "random") for z in (0, 1)]
    + [("signed, not finite", 0)])  # (zero_free only where every weight is finite)
@pytest.mark.parametrize("mode,mirror", [(0, False), (1, False), (2, False), (3, False),
                                         (1, True), (2, True)])
@pytest.mark.parametrize("k", [20, 40])
@pytest.mark.slow
def test_a_dense_rows_first_floor_keeps_the_same_best(k, mode, mirror, weights, zero_free,
                                                       simd):
    # at k >= 20 a dense row starts with a floor read from an evenly spaced
    # sample of its sums, where at least k of them are not below it, and its
    # loud columns are listed under the row's floor and (mirror) the
    # columns' own: the same best (ties at the floor included) and counts as
    # keeping every sum and selecting after.  "sampled columns best": the
    # sampled columns (every 10th of 2,560 where a row's columns start at 0)
    # hold the best sums, so the sample's score is above all but a few
    # others and no floor is kept.  "signed, not finite": sums of both
    # signs, infinite and NaN ones among them (dropped and counted)
    c = pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")
    rng = np.random.default_rng(k + mode)
    n = 2560
    if weights == "sampled columns best":
        w = np.where(np.arange(n) % 10 == 0, 10.0, 1.0) + rng.random(n) * 1e-3
    elif weights == "ties":
        w = rng.integers(1, 4, n).astype(float)
    elif weights == "random":
        w = rng.random(n) + 1e-3
    else:
        w = rng.standard_normal(n)
        w[rng.choice(n, 12, replace=False)] = [np.inf, -np.inf, np.nan] * 4
    # every row holds feature 0 (a heavy feature: every pair is a candidate,
    # the rows dense) and a few light ones
    dense = np.zeros((n, 40))
    dense[:, 0] = w
    light = rng.random((n, 39)) < 0.05
    dense[:, 1:] = light * rng.random((n, 39))
    A = sp.csr_matrix(dense)
    A.sort_indices()
    a = mrjobs.pairs.kernel._csr_arrays(A)
    b = mrjobs.pairs.kernel._csr_arrays(A.T.tocsr())

    rows = 60  # (the first rows: their columns start at 0 or near)
    # with mirror, each column keeps its k best (the same offers in both runs:
    # a column's are those not below its floor) and a row takes its column's in
    cap = k + max(k // 2, 8) if mirror else 3

    def run(top):
        counts = np.zeros(4, np.int64)
        g, o, s = c.pair_topk(a=a, bt=b, n_c=n, start=0, end=rows, mode=mode, k=top, kind=0,
                              threshold=-np.inf, limit=np.inf, counts=counts,
                              kept=(k, cap, *_kept(n, cap)) if mirror else None,
                              merge=mirror, zero_free=zero_free)
        best = {}
        for g, o, s in zip(*(np.frombuffer(x, t).tolist()
                             for x, t in ((g, np.int64), (o, np.int64), (s, np.float64)))):
            best.setdefault(g, []).append((o, s))
        return best, counts.tolist()

    got, counts = run(k)
    every, counts_every = run(n + 1)
    assert counts == counts_every
    assert sorted(got) == sorted(every)
    if weights == "signed, not finite":
        assert counts[1] > 0  # (the sums that are not finite: met and counted)
    else:  # (a row of a NaN weight has no finite sum: no best)
        assert sorted(got) == list(range(rows))
    for g, row in every.items():
        best = sorted(row, key=lambda e: (-e[1], e[0]))[:k]
        assert sorted(got[g]) == sorted(best), g
        if mode == 3:  # whole rows: best first
            assert got[g] == best, g
    assert max(map(len, got.values())) == k
