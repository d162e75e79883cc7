"""Faults in the computation: pairs whose dot product underflows, weights that
overflow when summed or cast, a query id that is also in the corpus, numbers
that are not numbers, block records with shifted entries, the order of the
output, and Pearson's exact zeros.  Every job case runs under both
strategies on the inline runner; the local runner where it could differ."""
import json
import os
import re
import uuid

import numpy as np
import pytest

from mrcodecs import DecodeError, ID_DTYPE
from mrcodecs.jobwire import Block, JobProtocol, block_pair_key
from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.parsing import InputError
from mrjobs.testing import run_job, write_lines

pytestmark = pytest.mark.twin

STRATEGIES = ["blocks", "stripes"]
U = [uuid.UUID(int=i) for i in range(40)]


def line(doc, feats):
    return json.dumps({"id": str(U[doc]), "features": {str(U[f]): w for f, w in feats.items()}})


def run(strategy, lines, args=(), **kw):
    return run_job(MRSparseDotProducts, lines, ["--strategy", strategy] + list(args), **kw)


def rows(result):
    return {k: v for k, v in result.output}


# -- pairs whose dot product is exactly 0.0 ---------------------------------

UNDERFLOW_CASES = [
    ("dot", [line(1, {10: 1e-200}), line(2, {10: 1e-200})]),
    ("cosine", [line(1, {10: 1, 11: 1e-200}), line(2, {11: 1e-200, 12: 1})]),
    ("tanimoto", [line(1, {10: 1, 11: 1e-200}), line(2, {11: 1e-200, 12: 1})]),
    ("euclidean", [line(1, {10: 1, 11: 1e-200}), line(2, {11: 1e-200, 12: 1})]),
]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("measure,lines", UNDERFLOW_CASES, ids=[c[0] for c in UNDERFLOW_CASES])
@pytest.mark.slow
def test_pairs_whose_dot_underflows_get_a_score(strategy, measure, lines):
    got = rows(run(strategy, lines + [line(3, {20: 1.0}), line(4, {20: 2.0})],
                   ["--measure", measure, "--blocks", "2"] if strategy == "blocks"
                   else ["--measure", measure]))
    assert set(got[U[1]]) == {U[2]} and set(got[U[2]]) == {U[1]}
    assert got[U[1]][U[2]] == got[U[2]][U[1]]
    if measure in ("dot", "cosine", "tanimoto"):
        assert got[U[1]][U[2]] == 0.0
    assert got[U[3]] == {U[4]: {"dot": 2.0, "cosine": 1.0, "tanimoto": 2 / 3,
                                "euclidean": 0.5}[measure]}


@pytest.mark.parametrize("blocks", ["1", "3"])
def test_underflow_with_top_k_and_many_pairs(blocks):
    # positive weights everywhere: the repair runs only in block pairs that can
    # hold an exact zero; every pair sharing a feature is scored under both
    lines = [line(i, {10: 1e-170 if i % 2 else 1e-160, 11 + i % 3: 1.0}) for i in range(1, 13)]
    outs = [rows(run(s, lines, ["--measure", "dot"] + (["--blocks", blocks] if s == "blocks"
                                                       else [])))
            for s in STRATEGIES]
    assert outs[0] == outs[1]
    assert all(len(r) == 11 for r in outs[0].values())


# -- weights that overflow when summed or cast --------------------------------

HUGE_LINES = [
    line(1, {10: 1.0, 11: 2.0}),
    line(2, {10: 3.0, 11: 1.0}),
    # a repeated feature inside one line (TSV) whose weights add up beyond float64
    "%s\t%s:1e308 %s:1e308 %s:1" % (U[3], U[10], U[10], U[11]),
    # duplicate lines of one vector: merged, the sum overflows
    line(4, {10: 1e308}), line(4, {10: 1e308, 11: 1.0}),
]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("measure", ["dot", "cosine", "jaccard", "pearson"])
def test_weights_that_overflow_when_summed_are_counted_and_skipped(strategy, measure):
    result = run(strategy, HUGE_LINES, ["--measure", measure])
    c = result.counters["mrsparse input"]
    assert c["summed weight not a finite number"] == 3  # one line, and two merged lines
    assert set(rows(result)) <= {U[1], U[2]}
    if measure != "pearson":
        assert set(rows(result)) == {U[1], U[2]}


@pytest.mark.slow
def test_weights_that_overflow_on_the_local_runner():
    # task processes of their own: counted and skipped there too
    result = run("blocks", HUGE_LINES, ["--measure", "cosine"], runner="local")
    assert result.counters["mrsparse input"]["summed weight not a finite number"] == 3
    assert set(rows(result)) == {U[1], U[2]}


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_overflowing_sums_under_strict_name_the_line_or_vector(strategy, tmp_path):
    with pytest.raises(InputError, match="input.txt, line [0-9]+:? .*repeated feature %s add up beyond "
                                         "float64" % U[10]):
        run(strategy, HUGE_LINES[:3], ["--strict"])
    with pytest.raises(InputError, match="vector %s: the weights of feature %s, summed "
                                         "over its 2 lines" % (U[4], U[10])):
        run(strategy, HUGE_LINES[:2] + HUGE_LINES[3:], ["--strict"])


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_float32_weights_beyond_its_range(strategy):
    lines = [line(1, {10: 1.0, 11: 2.0}), line(2, {10: 3.0}),
             line(3, {10: 1e39}),                      # beyond float32
             "%s\t%s:2e38 %s:2e38" % (U[5], U[12], U[12]),   # sums beyond float32
             line(6, {20: 1e30}), line(7, {20: 1e30}),  # product beyond float32
             line(8, {20: 1e-30})]
    result = run(strategy, lines, ["--float32"])
    c = result.counters["mrsparse input"]
    assert c["weight beyond float32 range (--float32)"] == 1
    assert c["summed weight not a finite number"] == 1
    assert result.counters["mrsparse work"]["pairs dropped: score not a finite number"] == 1
    got = rows(result)
    assert got[U[1]] == {U[2]: 3.0}
    assert got[U[6]] == {U[8]: pytest.approx(1.0)} and got[U[7]] == {U[8]: pytest.approx(1.0)}
    assert set(got[U[8]]) == {U[6], U[7]}


@pytest.mark.parametrize("buffer", ["1", "1000"])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_dot_products_beyond_float64_are_dropped_not_fatal(strategy, buffer):
    # every product is finite, their sum is not: stripes sums partial products
    # in its buffers, blocks in scipy
    lines = [line(1, {10: 1e154, 11: 1e154, 12: 1e154}),
             line(2, {10: 1e154, 11: 1e154, 12: 1e154}), line(3, {10: 1.0})]
    result = run(strategy, lines, ["--buffer-entries", buffer])
    assert result.counters["mrsparse work"]["pairs dropped: score not a finite number"] == 1
    got = rows(result)
    assert got[U[3]] == {U[1]: 1e154, U[2]: 1e154}
    assert got[U[1]] == {U[3]: 1e154}


# -- numbers that are not numbers ---------------------------------------------

NOT_NUMBERS = ["0x1p3", "1_000", "\u0663", "\uff11", "one", "1e5e5"]
NOT_FINITE = ["nan", "inf", "-Infinity", "1e999"]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_weights_are_counted_as_what_they_are(strategy):
    lines = ["%s\t%s:%s" % (U[20 + i], U[10], w) for i, w in enumerate(NOT_NUMBERS + NOT_FINITE)]
    lines += ['{"id": "%s", "features": {"%s": "2"}}' % (U[1], U[10]),
              '{"id": "%s", "features": {"%s": true}}' % (U[2], U[10]),
              '{"id": "%s", "features": {"%s": NaN}}' % (U[3], U[10]),
              '{"id": "%s", "features": {"%s": 1e999}}' % (U[4], U[10]),
              line(5, {10: 1.0}), line(6, {10: 2.0})]
    result = run(strategy, lines)
    c = result.counters["mrsparse input"]
    assert c["weight not a number"] == len(NOT_NUMBERS) + 2
    assert c["weight not a finite number"] == len(NOT_FINITE) + 2
    assert rows(result) == {U[5]: {U[6]: 2.0}, U[6]: {U[5]: 2.0}}


def test_skipped_counters_are_the_parsers_kinds():
    from mrjobs.counters import SKIPPED
    from mrjobs.parsing import BAD_KINDS
    assert set(SKIPPED) == set(BAD_KINDS)


# -- block records with entries shifted between vectors -----------------------

VECTORS = os.path.join(os.path.dirname(__file__), "..", "..", "codecs", "vectors")


def _twins():
    from mrcodecs import _pyimpl
    twins = [pytest.param(_pyimpl, id="python")]
    try:
        import _mrcodecs_speedups
    except ImportError:
        return twins
    return twins + [pytest.param(_mrcodecs_speedups, id="c")]


def _decode_with(twin, line_bytes):
    from mrcodecs.block_record import decode_block_raw
    raw = twin.unescape(line_bytes.partition(b"\t")[2])
    assert raw.__class__ is bytes
    return decode_block_raw(raw, "record value")


def _invalid_blocks():
    with open(os.path.join(VECTORS, "manifest.json")) as f:
        return json.load(f)["invalid_blocks"]


@pytest.mark.parametrize("twin", _twins())
@pytest.mark.parametrize("case", _invalid_blocks(), ids=lambda c: c["name"])
def test_stored_invalid_block_records_raise(case, twin):
    with open(os.path.join(VECTORS, "invalid", case["name"] + ".line"), "rb") as f:
        data = f.read()
    with pytest.raises(DecodeError, match="^" + re.escape(case["error"])):
        JobProtocol().read(data)
    with pytest.raises(DecodeError, match="^" + re.escape(case["error"])):
        _decode_with(twin, data)
    # the valid record it was made from decodes
    with open(os.path.join(VECTORS, "block_two_vectors.line"), "rb") as f:
        assert _decode_with(twin, f.read()).lengths.tolist() == [2, 1]


def _block(lengths, feats):
    ids = np.array([bytes([0x0a, i]) * 8 for i in range(len(lengths))], ID_DTYPE)
    feats = np.array([f.to_bytes(16, "big") for f in feats], ID_DTYPE)
    return Block(ids, np.array(lengths, "u4"), feats, np.ones(feats.shape[0]))


@pytest.mark.parametrize("twin", _twins())
def test_block_decoding_checks_ids_ascending_within_each_vector(twin):
    proto = JobProtocol()
    key = block_pair_key(0, 0)
    # valid: empty vectors anywhere, ids that only differ in the low half or
    # the high half, each vector starting low again
    for lengths, feats in [([0, 2, 0, 1, 0], [1, 2, 1]), ([3], [1, 2 << 64, (2 << 64) + 1]),
                           ([1, 1, 1], [5, 5, 5]), ([], []), ([1], [2 ** 128 - 1])]:
        block = _block(lengths, feats)
        assert _decode_with(twin, proto.write(key, block)) == block
    # invalid: equal ids, descending low halves, descending high halves
    for lengths, feats, entry, vector in [([2], [3, 3], 1, 0),
                                          ([1, 2], [9, 4, 3], 2, 1),
                                          ([0, 3], [1, 2 << 64, 1 << 64], 2, 1)]:
        block = _block(lengths, feats)
        offset = 10 + 20 * len(lengths) + 16 * entry
        with pytest.raises(DecodeError, match="feature id %d \\(of vector %d\\) at byte "
                                              "offset %d " % (entry, vector, offset)):
            _decode_with(twin, proto.write(key, block))


# -- a query id that is also in the corpus ------------------------------------

def _queries_case(tmp_path):
    corpus = [line(1, {10: 1.0, 11: 2.0}), line(2, {10: 2.0, 11: 1.0}),
              line(3, {10: 1.0, 12: 5.0}), line(4, {12: 1.0})]
    queries = [line(1, {10: 1.0, 11: 2.0}),    # also in the corpus, identical
               line(4, {12: 3.0, 10: 1.0}),    # also in the corpus, different
               line(9, {10: 1.0})]             # only a query
    cdir, qdir = tmp_path / "corpus", tmp_path / "queries"
    cdir.mkdir()
    qdir.mkdir()
    write_lines(str(cdir / "c.jsonl"), corpus)
    write_lines(str(qdir / "q.jsonl"), queries)
    return str(cdir), str(qdir)




@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.slow
def test_a_query_is_never_its_own_neighbour(strategy, runner, tmp_path):
    if runner == "local" and strategy == "stripes":
        pytest.skip("one local-runner case (blocks) is enough: the rule is in the reducers")
    cdir, qdir = _queries_case(tmp_path)
    outs = {}
    for k in (None, "1"):
        args = ["--strategy", strategy, "--measure", "cosine", "--queries", qdir]
        args += ["--top-k", k] if k else []
        if strategy == "blocks":
            args += ["--blocks", "2"]
        result = run_job(MRSparseDotProducts, None, args, input_paths=[cdir], runner=runner)
        outs[k] = got = rows(result)
        for q, row in got.items():
            assert q not in row, "query %s is its own neighbour" % q
    assert set(outs[None]) == {U[1], U[4], U[9]}
    assert set(outs[None][U[1]]) == {U[2], U[3]}
    assert set(outs[None][U[4]]) == {U[1], U[2], U[3]}
    assert set(outs[None][U[9]]) == {U[1], U[2], U[3]}
    # with --top-k 1 the best neighbour other than itself
    assert list(outs["1"][U[1]]) == [U[2]]


# -- pearson: entries equal to the centre --------------------------------------

def test_pearson_centres_integer_weights_to_exact_zeros():
    from mrjobs.measures import prepare, prepare_rows
    # each has an entry equal to its whole-number mean, which a division by the
    # largest weight centred to +-1e-16
    cases = [[19.0, 13.0, 15.0, 12.0, 6.0], [4.0, 12.0, 12.0, 4.0, 8.0], [8.0, 18.0, 3.0, 3.0],
             [12.0, 18.0, 6.0, 11.0, 8.0], [3e300, 1e300, 2e300], [3e-300, 1e-300, 2e-300]]
    for w in cases:
        w = np.array(w)
        mean = np.abs(w).sum() / w.shape[0]
        prepared, _ = prepare("pearson", w)
        assert (prepared == 0.0).sum() == (w == mean).sum() >= 1, w
    rows_, _ = prepare_rows("pearson", np.concatenate(cases), np.array([len(c) for c in cases]))
    assert (rows_ == np.concatenate([prepare("pearson", np.array(c))[0] for c in cases])).all()


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_pearson_pairs_sharing_only_centred_zeros_get_no_score(strategy):
    lines = [line(1, {10: 19, 11: 13, 12: 15, 13: 12, 14: 6}),   # 13 is its mean
             line(2, {11: 4, 20: 12, 21: 12, 22: 4, 23: 8}),     # 8 is its mean
             line(3, {23: 1, 24: 5, 25: 3}),                     # 3 is its mean
             line(4, {10: 1, 13: 2, 24: 4})]
    got = rows(run(strategy, lines, ["--measure", "pearson"]))
    # 1-2 share only feature 11 (centred 0 in 1), 2-3 only feature 23 (centred 0 in 2)
    assert U[2] not in got.get(U[1], {}) and U[1] not in got.get(U[2], {})
    assert U[3] not in got.get(U[2], {}) and U[2] not in got.get(U[3], {})
    assert set(got[U[4]]) == {U[1], U[3]}
    assert set(got[U[1]]) == {U[4]}


# -- the order of the output ---------------------------------------------------

def _stdout(tmp_path, args):
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-m", "mrjobs.dot_products", "-q", "--no-conf"]
                          + args, cwd=str(tmp_path), capture_output=True, check=True)
    return proc.stdout


@pytest.mark.slow
@pytest.mark.smoke
def test_output_is_the_same_bytes_for_any_partitioning(tmp_path):
    from examples.generate import generate_lines
    data = tmp_path / "c.jsonl"
    write_lines(str(data), generate_lines(1500, 8, 2000, 1.1, 5, fmt="json",
                                          edge_cases=False, progress=False))
    base = [str(data), "--measure", "cosine", "--top-k", "3"]
    runs = [["--blocks", "1"], ["--blocks", "7", "--buffer-entries", "500"],
            ["-r", "local", "--num-cores", "2", "--blocks", "3"]]
    outs = [_stdout(tmp_path, base + r) for r in runs]
    keys = [l.partition(b"\t")[0] for l in outs[0].splitlines()]
    assert len(keys) > 1000 and keys == sorted(keys)
    for r, out in zip(runs[1:], outs[1:]):
        assert out == outs[0], r
