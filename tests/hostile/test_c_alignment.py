"""The C kernels (``_mrjobs_speedups``) on arrays at any address (issue 44, item 5).

A buffer can start anywhere: a numpy view of bytes at an offset (a Stripe
decoded from the wire), a row ``merge_top_k`` hands back as it is.  Reading
an int64/int32/double there through a typed pointer is undefined behaviour
(UBSan: "load of misaligned address"), which ``make test-asan`` (ASan +
UBSan, halt_on_error) turns into a halt.  Each function is called here with
its arrays at offsets 1..7 from an 8-byte boundary and must give what it
gives on aligned arrays and what its numpy/Python twin gives; an output at
such an offset is refused.  Then the dot-products job itself, on the inline
runner (in this process, so on the sanitizer build under make test-asan),
on inputs that reach the rows step's merge and the JSON writer with such
rows, against the same job on the twins (MRCODECS_PUREPYTHON=1): the same
bytes.
"""
import ctypes
import json
import os
import subprocess
import sys
import uuid

import numpy as np
import pytest
import scipy.sparse as sp

import mrjobs._c
from mrcodecs.jobwire import Stripe
from mrjobs.pairs.idarrays import top_k_groups
from mrjobs.scoring import merge_rows

pytestmark = pytest.mark.asan

c = pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")

OFFSETS = range(1, 8)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _at(arr, k):
    """A writable copy of ``arr`` whose data starts k bytes past an 8-byte
    boundary (a numpy view of a uint8 buffer: flags.aligned False for k % 8
    not a multiple of the item size)."""
    arr = np.ascontiguousarray(arr)
    raw = np.zeros(arr.nbytes + 16, np.uint8)
    start = (k - raw.ctypes.data) % 8
    out = raw[start:start + arr.nbytes].view(arr.dtype)
    out[...] = arr
    assert out.ctypes.data % 8 == k % 8
    return out


def _bytes_at(data, k):
    """``data`` (bytes) in a memoryview of a bytearray starting k bytes past
    an 8-byte boundary."""
    buf = bytearray(len(data) + 16)
    address = ctypes.addressof((ctypes.c_char * len(buf)).from_buffer(buf))
    start = (k - address) % 8
    buf[start:start + len(data)] = data
    return memoryview(buf)[start:start + len(data)]


def _block(rng, n, n_f=30, density=0.2):
    m = sp.random(n, n_f, density=density, random_state=rng, format="csr")
    m.data = rng.standard_normal(m.nnz) * 10.0 ** rng.integers(-3, 4, m.nnz)
    m.sort_indices()
    return m


def _csr(m):
    return (m.indptr.astype(np.int64), m.indices.astype(np.int32), m.data.astype(np.float64))


def _pairs(rng):
    """A block A, another C, their CSR arrays (A's, C's transpose's) and the
    exact products: scipy's, whose doubles dots() promises."""
    A, C = _block(rng, 25), _block(rng, 20)
    Bt = C.T.tocsr()
    Bt.sort_indices()
    return A, C, _csr(A), _csr(Bt)


def _triples(r, c_, d):
    return sorted(zip(np.asarray(r).tolist(), np.asarray(c_).tolist(), np.asarray(d).tolist()))


def _dots(a, b, n_c, n_r, out_n=2000):
    out = np.empty(out_n, np.int64), np.empty(out_n, np.int64), np.empty(out_n)
    n = c.dots(*a, *b, n_c, 0, n_r, 0, *out)
    assert n >= 0
    return _triples(*(x[:n] for x in out))


@pytest.mark.parametrize("k", OFFSETS)
def test_dots_reads_arrays_at_any_offset(k):
    rng = np.random.default_rng(k)
    A, C, a, b = _pairs(rng)
    want = _dots(a, b, C.shape[0], A.shape[0])
    assert _dots([_at(x, k) for x in a], [_at(x, k) for x in b], C.shape[0], A.shape[0]) == want
    # the twin: scipy's product, the same doubles (pairs with a shared feature)
    P = (A @ C.T).tocoo()
    shared = ((abs(A) > 0).astype(np.int64) @ (abs(C) > 0).astype(np.int64).T).tocoo()
    assert len(want) == shared.nnz
    assert [w for w in want if w[2] != 0.0] == _triples(P.row, P.col, P.data)


@pytest.mark.parametrize("k", OFFSETS)
def test_outputs_at_an_offset_are_refused(k):
    rng = np.random.default_rng(k)
    A, C, a, b = _pairs(rng)
    out = [np.empty(2000, np.int64), np.empty(2000, np.int64), np.empty(2000)]
    for i in range(3):
        bad = list(out)
        bad[i] = _at(bad[i], k)
        with pytest.raises(ValueError, match="expected an array aligned to 8 bytes"):
            c.dots(*a, *b, C.shape[0], 0, A.shape[0], 0, *bad)
    g, o, s = np.array([0, 0, 1]), np.array([1, 2, 0]), np.array([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="out_s: expected an array aligned"):
        c.top_k_rows(g, o, s, 1, np.empty(3, np.int64), np.empty(3, np.int64),
                     _at(np.empty(3), k))
    with pytest.raises(ValueError, match="ks: expected an array aligned"):
        c.kept_offer(g, o, s, False, 1, 2, _at(np.empty(4), k), np.empty(4, np.int64),
                     np.zeros(2, np.int64), np.full(2, -np.inf))


def _top_k_reference(groups, others, scores, k):
    order = top_k_groups(groups, others, scores, k)
    return _triples(groups[order], others[order], scores[order])


def _entries(rng, n=300, n_g=12):
    groups = np.sort(rng.integers(0, n_g, n)).astype(np.int64)
    others = rng.permutation(n).astype(np.int64)
    scores = rng.integers(-5, 6, n) / 4.0  # ties: broken by other
    return groups, others, scores


@pytest.mark.parametrize("k", OFFSETS)
@pytest.mark.parametrize("top", [1, 5, 1000])
def test_top_k_rows_reads_arrays_at_any_offset(k, top):
    groups, others, scores = _entries(np.random.default_rng(k))
    n = groups.shape[0]
    out = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n)
    m = c.top_k_rows(_at(groups, k), _at(others, k), _at(scores, k), top, *out)
    assert _triples(*(x[:m] for x in out)) == _top_k_reference(groups, others, scores, top)


@pytest.mark.parametrize("k", OFFSETS)
@pytest.mark.parametrize("top", [1, 5, 40])
def test_kept_offer_reads_entries_at_any_offset(k, top):
    groups, others, scores = _entries(np.random.default_rng(k))
    groups = np.random.default_rng(k).permutation(groups)  # (kept_offer: any order)
    n_g, cap = 12, top + (top // 2 if top > 16 else 8)
    ks, ko = np.empty(n_g * cap), np.empty(n_g * cap, np.int64)
    kn, floor = np.zeros(n_g, np.int64), np.full(n_g, -np.inf)
    half = groups.shape[0] // 2  # offered in two calls, each at the offset
    for s in (slice(None, half), slice(half, None)):
        c.kept_offer(_at(groups[s], k), _at(others[s], k), _at(scores[s], k), False, top, cap,
                     ks, ko, kn, floor)
    n = groups.shape[0]
    out = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n)
    m = c.kept_take(top, ks, ko, kn, *out)
    assert _triples(*(x[:m] for x in out)) == _top_k_reference(groups, others, scores, top)


def _pair_topk(a, b, n_c, n_r, mode, top, mirror=False, merge=False, seeds=None):
    """pair_topk's rows (and with mirror, its columns' kept best) as sorted
    (group, other, score) triples."""
    cap = top + (top // 2 if top > 16 else 8)
    kept = (np.empty(n_c * cap), np.empty(n_c * cap, np.int64), np.zeros(n_c, np.int64),
            np.full(n_c, -np.inf))
    g, o, s = c.pair_topk(a=a, bt=b, n_c=n_c, start=0, end=n_r, mode=mode, k=top, kind=0,
                          threshold=-np.inf, limit=np.inf, counts=np.zeros(4, np.int64),
                          kept=(top, cap, *kept) if mirror else None, merge=merge,
                          seeds=seeds)
    rows = _triples(np.frombuffer(g, np.int64), np.frombuffer(o, np.int64),
                    np.frombuffer(s, np.float64))
    if not mirror or merge:
        return rows, []
    n = n_c * cap
    out = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n)
    m = c.kept_take(top, *kept[:3], *out)
    return rows, _triples(*(x[:m] for x in out))


def _pair_reference(A, C, top, mode):
    """Each row's (and column's) top best of the exact products (scipy's
    doubles) of the pairs with a shared feature; mode 1: above the diagonal."""
    P = (A @ C.T).toarray()
    shared = ((abs(A) > 0).astype(np.int64) @ (abs(C) > 0).astype(np.int64).T).toarray()
    r, col = np.nonzero(shared)
    if mode == 1:
        keep = col > r
        r, col = r[keep], col[keep]
    s = P[r, col]
    return (_top_k_reference(r.astype(np.int64), col.astype(np.int64), s, top),
            _top_k_reference(col.astype(np.int64), r.astype(np.int64), s, top))


@pytest.mark.parametrize("k", OFFSETS)
@pytest.mark.parametrize("top", [1, 3, 25])
def test_pair_topk_reads_blocks_at_any_offset(k, top):
    rng = np.random.default_rng(k)
    A, C, a, b = _pairs(rng)
    a_k, b_k = [_at(x, k) for x in a], [_at(x, k) for x in b]
    n_c, n_r = C.shape[0], A.shape[0]
    rows_ref, cols_ref = _pair_reference(A, C, top, 0)
    for mirror in (False, True):
        want = _pair_topk(a, b, n_c, n_r, 0, top, mirror)
        assert _pair_topk(a_k, b_k, n_c, n_r, 0, top, mirror) == want
        assert want[0] == rows_ref
        if mirror:
            assert want[1] == cols_ref


@pytest.mark.parametrize("k", OFFSETS)
@pytest.mark.parametrize("top", [2, 25])
def test_pair_topk_diagonal_modes_read_blocks_at_any_offset(k, top):
    # one block with itself: the triangle with its mirror (merged, or with
    # the threads' seeds), and whole rows (mode 3)
    rng = np.random.default_rng(10 + k)
    A = _block(rng, 30)
    Bt = A.T.tocsr()
    Bt.sort_indices()
    a, b = _csr(A), _csr(Bt)
    a_k, b_k = [_at(x, k) for x in a], [_at(x, k) for x in b]
    n = A.shape[0]
    rows_ref = _pair_reference(A, A, top, 1)[0]
    # each vector's best among all the others (the triangle's pairs both ways)
    upper = _pair_reference(A, A, n, 1)[0]
    g, o, s = (np.array(x) for x in zip(*(upper + [(o, g, s) for g, o, s in upper])))
    both = _top_k_reference(g, o, s, top)
    got = _pair_topk(a_k, b_k, n, n, 1, top, mirror=True, merge=True)[0]
    assert got == _pair_topk(a, b, n, n, 1, top, mirror=True, merge=True)[0] == both
    # with seeds, a column keeps only what can beat its own row's k-th best:
    # each vector's best of its row and its column are the same
    got = _pair_topk(a_k, b_k, n, n, 1, top, mirror=True, seeds=np.full(n, -np.inf))
    assert got == _pair_topk(a, b, n, n, 1, top, mirror=True, seeds=np.full(n, -np.inf))
    assert got[0] == rows_ref
    g, o, s = (np.array(x) for x in zip(*(got[0] + got[1])))
    assert _top_k_reference(g, o, s, top) == both
    assert _pair_topk(a_k, b_k, n, n, 3, top)[0] == both
    with pytest.raises(ValueError, match="seeds: expected an array aligned"):
        _pair_topk(a, b, n, n, 1, top, mirror=True, seeds=_at(np.full(n, -np.inf), k))


def _ids(rng, n):
    return np.unique(rng.integers(0, 256, (n, 16), dtype=np.uint8).view("S16").ravel())


def _json_line(key, ids, scores):
    """What json.dumps writes for the row (ids: S16, scores: float64)."""
    raw = ids.tobytes()  # (not tolist(): S16 drops trailing NUL bytes)
    body = json.dumps({str(uuid.UUID(bytes=raw[16 * i:16 * i + 16])): s
                       for i, s in enumerate(scores.tolist())})
    return b'"%s"\t%s' % (str(uuid.UUID(bytes=key)).encode(), body.encode())


@pytest.mark.parametrize("k", OFFSETS)
def test_neighbours_json_reads_rows_at_any_offset(k):
    rng = np.random.default_rng(k)
    ids = _ids(rng, 40)
    scores = rng.standard_normal(ids.shape[0]) * 10.0 ** rng.integers(-300, 300, ids.shape[0])
    key = bytes(range(16))
    want = _json_line(key, ids, scores)
    assert c.neighbours_json(_at(ids, k), _at(scores, k), key) == want
    # a row as the rows step has it: memoryviews of bytes objects
    mv = _bytes_at(scores.tobytes(), k).cast("d")
    assert c.neighbours_json(_bytes_at(ids.tobytes(), k), mv, key) == want
    assert c.neighbours_json(ids, mv) == want.split(b"\t", 1)[1][1:-1]
    assert c.repr_floats(_at(scores, k)) == [repr(s) for s in scores.tolist()]
    bad = scores.copy()
    bad[-1] = np.nan  # None: the caller's own way (json.dumps refuses it)
    assert c.neighbours_json(_at(ids, k), _at(bad, k), key) is None


@pytest.mark.parametrize("k", OFFSETS)
@pytest.mark.parametrize("top", [20, 1000])
def test_merge_top_k_and_the_writer_on_pieces_at_any_offset(k, top):
    # pieces as the rows step decodes them: views of bytes at any offset; one
    # piece already in order comes back as it is, and is then written
    rng = np.random.default_rng(k)
    ids = _ids(rng, 120)
    pieces = []
    for part in np.array_split(rng.permutation(ids.shape[0]), 3):
        pieces.append(Stripe(ids[part], rng.integers(-4, 5, part.shape[0]) / 8.0))
    want = merge_rows(pieces, top, 10**6)
    got = c.merge_top_k([_bytes_at(p.ids.tobytes(), k) for p in pieces],
                        [_bytes_at(p.values.tobytes(), k) for p in pieces], top)
    assert bytes(got[0]) == want.ids.tobytes() and bytes(got[1]) == want.values.tobytes()
    whole = merge_rows(pieces, None, 10**6)  # one piece in order: handed back
    row_ids, row_sc = _bytes_at(whole.ids.tobytes(), k), _bytes_at(whole.values.tobytes(), k)
    got = c.merge_top_k([row_ids], [row_sc], top)
    if top >= whole.ids.shape[0]:
        assert got[0] is row_ids and got[1] is row_sc
    key = bytes(16)
    line = c.neighbours_json(np.frombuffer(got[0], "S16"), np.frombuffer(got[1], np.float64),
                             key)
    kept = min(top, whole.ids.shape[0])
    assert line == _json_line(key, whole.ids[:kept], whole.values[:kept])


# -- the job, on the inline runner: the rows step and the JSON writer -------------

def _lines(n, fpv, vocab, edge_cases):
    from tests.jobs_helpers import corpus
    return corpus(n, fpv=fpv, vocab=vocab, seed=3, edge_cases=edge_cases)


#: few, sparse vectors (no generated edge cases): many a vector's row comes
#: from one block pair, one piece, which merge_top_k hands back as it is -- a
#: view of the wire's record, whose scores sit 2 mod 8 from the record's start
SPARSE = (90, 2, 150, False)
#: every vector's row pieced together from several block pairs
DENSE = (90, 8, 270, True)

def _twin_lines(args, lines, tmp_path):
    """The job's output lines on the Python twins of both C extensions
    (MRCODECS_PUREPYTHON=1, another process), inline, sorted."""
    path = tmp_path / "input.jsonl"
    path.write_bytes(b"".join((x if isinstance(x, bytes) else x.encode()) + b"\n"
                              for x in lines))
    code = ("import sys\n"
            "import mrjobs._c as c\n"
            "assert c.C is None, c.REASON\n"
            "from mrjobs.dot_products import MRSparseDotProducts\n"
            "from mrjobs.testing import run_job\n"
            "run = run_job(MRSparseDotProducts, None, sys.argv[2:], input_paths=[sys.argv[1]])\n"
            "sys.stdout.buffer.write(b''.join(x + b'\\n' for x in run.lines))\n")
    env = dict(os.environ, MRCODECS_PUREPYTHON="1")
    env.pop("LD_PRELOAD", None)  # (no sanitized code runs there)
    done = subprocess.run([sys.executable, "-c", code, str(path)] + list(args), cwd=ROOT,
                          env=env, capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    return done.stdout.splitlines()


JOB_CASES = {
    # the reported case: each vector's row one piece of one block pair, in
    # order, handed back by merge_top_k as it is, then written
    "blocks 3 on 3 vectors top-k 20": ((3, 8, 20, False), ["--blocks", "3", "--top-k", "20"]),
    "blocks 3 on 3 vectors cosine include-self": (
        (3, 8, 20, False), ["--blocks", "3", "--top-k", "25", "--measure", "cosine",
                            "--include-self"]),
    "sparse blocks 3 top-k 20": (SPARSE, ["--blocks", "3", "--top-k", "20"]),
    "sparse blocks 4 top-k 1000 cosine": (SPARSE, ["--blocks", "4", "--top-k", "1000",
                                                   "--measure", "cosine"]),
    "sparse blocks 3 top-k 20 float32": (SPARSE, ["--blocks", "3", "--top-k", "20",
                                                  "--float32"]),
    # rows merged from several block pairs' pieces (merge_top_k, k >= 20)
    "blocks 3 top-k 20": (DENSE, ["--blocks", "3", "--top-k", "20"]),
    "blocks 3 top-k 20 json wire": (DENSE, ["--blocks", "3", "--top-k", "20", "--wire",
                                            "json"]),
    # the numpy batches (k < 20), rows without --top-k (a threshold, every pair)
    "blocks 3 top-k 5": (DENSE, ["--blocks", "3", "--top-k", "5"]),
    "sparse blocks 3 threshold": (SPARSE, ["--blocks", "3", "--threshold", "0.2", "--measure",
                                           "cosine"]),
    "blocks 3 threshold": (DENSE, ["--blocks", "3", "--threshold", "0.2", "--measure",
                                   "cosine"]),
    "blocks 3 every pair": (DENSE, ["--blocks", "3"]),
    # one block: no rows step; whole rows (mode 3), the triangle with seeds
    "one block top-k 25 threads": (DENSE, ["--blocks", "1", "--top-k", "25",
                                           "--pair-threads", "2"]),
    "one block top-k 10 threads cosine": (DENSE, ["--blocks", "1", "--top-k", "10",
                                                  "--pair-threads", "2", "--measure",
                                                  "cosine"]),
}


def test_the_inline_runner_runs_this_process_c_extension():
    # what makes the job tests below run the sanitizer build under make
    # test-asan: the inline runner's tasks run here, on this process's module
    assert mrjobs._c.C is c, mrjobs._c.REASON
    first = os.environ.get("PYTHONPATH", "").split(os.pathsep)[0]
    if "libasan" in os.environ.get("LD_PRELOAD", "") and first:
        assert os.path.dirname(os.path.abspath(c.__file__)) == os.path.abspath(first)


@pytest.mark.parametrize("case", sorted(JOB_CASES), ids=lambda case: case.replace(" ", "-"))
@pytest.mark.slow
def test_the_job_writes_the_twins_bytes(case, tmp_path):
    from tests.jobs_helpers import run
    corpus, args = JOB_CASES[case]
    lines = _lines(*corpus)
    assert mrjobs._c.C is c
    got = run(args, lines=lines)
    assert got.lines, "no output: the case reaches nothing"
    assert got.lines == _twin_lines(args, lines, tmp_path)
