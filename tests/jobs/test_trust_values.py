"""Issue 24, findings 3, 7 and 8: weights float32 carries as 0, the planner's
option values, and duplicate lines in the inverted index.  Results, not
timings."""
import json
import os
import subprocess
import sys
import uuid

import numpy as np
import pytest

from mrjobs import plan as P
from mrjobs.plan import cli as plan_command_line
from mrjobs.counters import FLOAT32_ZERO_WEIGHT, INPUT, run_report
from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.strategies.sizing import MAX_BLOCKS
from mrjobs.generate import write_corpus
from mrjobs.inverted_index import MRInvertedIndex
from mrjobs.pairs.idarrays import merge_sum
from mrjobs.parsing import BAD_SUM, FLOAT32_ZERO, InputError, float32_zeros, parse_vector
from mrjobs.testing import run_job

U = [uuid.UUID(int=i) for i in range(40)]
ZERO_WEIGHT = "zero weight (entry dropped)"
DUP_POSTINGS = "duplicate vector id (weights summed)"


def line(doc, feats):
    return json.dumps({"id": str(U[doc]), "features": {str(U[f]): w for f, w in feats.items()}})


def rows(result):
    return {k: dict(v) for k, v in result.output}


# -- finding 3: --float32 and weights below its range ----------------------------------

def test_float32_zeros_finds_exactly_the_weights_float32_makes_zero():
    w = np.array([1e-50, -1e-50, FLOAT32_ZERO, np.nextafter(FLOAT32_ZERO, 1.0), 1e-45,
                  -1.4e-45, 0.5, 1e-300, 5e-324])
    ids = np.array([bytes([i]) * 16 for i in range(1, w.shape[0] + 1)], "S16")
    mask, why = float32_zeros(ids, w)
    with np.errstate(under="ignore"):
        assert mask.tolist() == ((w.astype(np.float32) == 0) & (w != 0)).tolist()
    assert mask.tolist() == [True, True, True, False, False, False, False, True, True]
    assert "1e-50" in why and str(uuid.UUID(bytes=bytes([1]) * 16)) in why
    assert float32_zeros(ids[:1], np.array([1.0])) is None


JACCARD = [line(1, {10: 1e-50, 11: 1.0}), line(2, {10: 1e-50, 11: 1.0}),
           line(3, {10: 2e-50, 12: 1.0})]


def test_float32_drops_and_counts_weights_it_carries_as_zero():
    """1e-50 passed the zero check in float64 and became a 0.0 entry in
    float32, uncounted: vector 3 was scored against 1 and 2 through a 0.0
    weight.  Now the entry is dropped and counted, and every pair's jaccard
    is that of the vectors without it."""
    f64 = rows(run_job(MRSparseDotProducts, JACCARD, ["--measure", "jaccard"]))
    assert f64[U[1]] == {U[2]: 1.0, U[3]: pytest.approx(1 / 3)}
    result = run_job(MRSparseDotProducts, JACCARD, ["--measure", "jaccard", "--float32"])
    assert rows(result) == {U[1]: {U[2]: 1.0}, U[2]: {U[1]: 1.0}}
    c = result.counters[INPUT]
    assert c[FLOAT32_ZERO_WEIGHT] == 3
    assert FLOAT32_ZERO_WEIGHT in run_report([result.counters])
    # the index holds no 0.0 posting either
    index = rows(run_job(MRInvertedIndex, JACCARD, ["--float32"]))
    assert index == {U[11]: {U[1]: 1.0, U[2]: 1.0}, U[12]: {U[3]: 1.0}}
    assert all(w != 0.0 for row in index.values() for w in row.values())


@pytest.mark.parametrize("job", [MRSparseDotProducts, MRInvertedIndex])
def test_float32_single_line_and_duplicate_lines_agree(job):
    """One vector on one line or on two: the same output, the same count."""
    one = [line(1, {10: 1e-50, 11: 2.0, 12: 3.0}), line(2, {11: 1.0, 10: 5.0})]
    two = ['%s\t%s:1e-50 %s:2' % (U[1], U[10], U[11]), '%s\t%s:3' % (U[1], U[12]),
           line(2, {11: 1.0, 10: 5.0})]
    a = run_job(job, one, ["--float32"])
    b = run_job(job, two, ["--float32"])
    assert a.lines == b.lines
    assert a.counters[INPUT][FLOAT32_ZERO_WEIGHT] == b.counters[INPUT][FLOAT32_ZERO_WEIGHT] == 1


def test_float32_tiny_sum_of_a_repeated_feature_is_dropped():
    # 3e-300 - 2.9999999e-300: nonzero, below float32's range
    lines = ['%s\t%s:3e-300 %s:-2.9999999e-300 %s:1' % (U[1], U[10], U[10], U[11]),
             line(2, {10: 1.0, 11: 1.0})]
    result = run_job(MRSparseDotProducts, lines, ["--float32"])
    assert rows(result)[U[1]] == {U[2]: 1.0}
    assert result.counters[INPUT][FLOAT32_ZERO_WEIGHT] == 1


def test_float32_strict_refuses_a_weight_it_carries_as_zero(tmp_path):
    path = tmp_path / "tiny.jsonl"
    path.write_text(line(1, {10: 1.0}) + "\n" + line(2, {10: 1e-50, 11: 1.0}) + "\n")
    with pytest.raises(InputError, match=r"tiny.jsonl, line 2:? .*weight 1e-50 of feature "
                                         r"%s is below float32's range" % U[10]):
        run_job(MRSparseDotProducts, None, ["--float32", "--strict"], input_paths=[str(path)])
    # without --float32 the weight is kept, and --strict has nothing to refuse
    out = rows(run_job(MRSparseDotProducts, None, ["--strict"], input_paths=[str(path)]))
    assert out[U[1]] == {U[2]: 1e-50}


def test_float32_parse_is_unchanged_below_its_range():
    """parse_vector still returns the weights as read (the drop is read_vector's)."""
    doc, ids, w = parse_vector(('%s\t%s:1e-50' % (U[1], U[10])).encode(), float32=True)
    assert w.tolist() == [1e-50]


# -- finding 8: the inverted index on duplicate lines --------------------------------

def test_merge_sum_is_canonical_and_counts_entries():
    ids = np.array([b"b", b"a", b"b", b"b"], "S16")
    w = np.array([1e16, 2.0, 1.0, -1e16])
    for perm in ([0, 1, 2, 3], [2, 0, 3, 1], [3, 2, 1, 0]):
        i, v, _, n = merge_sum(ids[perm], w[perm])
        assert i.tolist() == [b"a", b"b"] and v.tolist() == [2.0, 0.0] and n.tolist() == [1, 3]
    i, v, _, n = merge_sum(np.array([b"a", b"a"], "S16"), np.array([1e308, 1e308]))
    assert v.tolist() == [np.inf] and n.tolist() == [2]


OVERFLOW = [line(1, {10: 1e308, 11: 1.0}), line(1, {10: 1e308}),   # sum overflows
            line(2, {10: 1.5, 11: 2.0}), line(2, {10: -1.5}),       # sum cancels
            line(3, {10: 4.0, 11: 5.0})]


def test_index_counts_an_overflowing_sum_and_drops_cancelled_postings():
    """It died with "FloatingPointError: overflow encountered in reduceat";
    a cancelled sum was written as a 0.0 posting."""
    result = run_job(MRInvertedIndex, OVERFLOW)
    assert rows(result) == {U[10]: {U[3]: 4.0}, U[11]: {U[1]: 1.0, U[2]: 2.0, U[3]: 5.0}}
    c = result.counters[INPUT]
    assert c[BAD_SUM] == 2            # the two lines of vector 1 holding feature 10
    assert c[ZERO_WEIGHT] == 1
    assert c[DUP_POSTINGS] == 2
    # the dot-products job counts the same bad sum and zero weight
    d = run_job(MRSparseDotProducts, OVERFLOW).counters[INPUT]
    assert d[BAD_SUM] == 2 and d[ZERO_WEIGHT] == 1


@pytest.mark.slow
def test_index_sums_in_the_dot_products_order():
    """1e16 + 1 - 1e16 is 0 or 1 by the order of the terms; both jobs sum a
    vector's lines by weight, so both see 0 (dropped) whatever the input order."""
    terms = [1e16, 1.0, -1e16]
    for order in ([0, 1, 2], [0, 2, 1], [2, 0, 1], [1, 2, 0]):
        lines = [line(1, {10: terms[i]}) for i in order]
        lines += [line(1, {11: 1.0}), line(2, {10: 1.0, 11: 1.0})]
        index = run_job(MRInvertedIndex, lines)
        assert rows(index)[U[10]] == {U[2]: 1.0}
        assert index.counters[INPUT][ZERO_WEIGHT] == 1
        assert rows(run_job(MRSparseDotProducts, lines))[U[1]] == {U[2]: 1.0}


def test_index_float32_sum_beyond_its_range():
    lines = [line(1, {10: 3e38}), line(1, {10: 3e38}), line(2, {10: 1.0})]
    result = run_job(MRInvertedIndex, lines, ["--float32"])
    assert rows(result) == {U[10]: {U[2]: 1.0}}
    assert result.counters[INPUT][BAD_SUM] == 2


def test_index_strict_names_the_vector_and_feature():
    with pytest.raises(InputError, match="vector %s: the weights of feature %s, summed over "
                                         "its 2 lines, go beyond float64's range"
                                         % (U[1], U[10])):
        run_job(MRInvertedIndex, OVERFLOW, ["--strict"])


# -- finding 7: the planner's option values --------------------------------------------

@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("trust") / "c.jsonl"
    write_corpus(str(path), vectors=200, features_per_vector=8, vocabulary=1500, seed=3,
                 progress=False)
    return str(path)


def plan_cli(*args, calibration=os.devnull):
    argv = [sys.executable, "-m", "mrjobs.plan", *args]
    if calibration is not None:
        argv += ["--calibration", calibration]
    return subprocess.run(argv, capture_output=True, text=True)


def assert_usage_error(p, *words):
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("python -m mrjobs.plan: error: ")
    for w in words:
        assert w in last, (w, last)


@pytest.mark.slow
def test_plan_vectors_huge_nan_inf_are_usage_errors(small):
    for v in ("1e21", "1e300", "nan", "inf", "-5", "1.5"):
        assert_usage_error(plan_cli(small, "--vectors", v), "--vectors")


def test_plan_blocks_never_beyond_the_jobs_limit(small):
    """--vectors 1e12 proposed 7,459,511 blocks, which the job refuses."""
    ap = plan_command_line.parser()
    e = P.plan(ap.parse_args([small, "--vectors", "1e12", "--reducer-memory", "1",
                              "--reducers", "50", "--calibration", os.devnull]))
    assert e["blocks"] == MAX_BLOCKS and e["blocks_over_limit"] > MAX_BLOCKS
    assert e["suggested_blocks"] <= MAX_BLOCKS
    p = plan_cli(small, "--vectors", "1e12")
    assert p.returncode == 0 and "beyond the job's limit of 10,000" in p.stdout
    assert "blocks: 10000 " in p.stdout


def test_plan_num_features_below_the_sample_is_a_clear_error(small):
    p = plan_cli(small, "--measure", "loglikelihood", "--num-features", "1")
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stderr.startswith("mrsparse plan: error: --num-features 1 is fewer than the ")
    assert len(p.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("content, words", [
    ('{"constants": {}}', "c0"),
    ("[1, 2]", '"constants"'),
    ("{}", '"constants"'),
    ("not json", "not JSON"),
    ('{"constants": {"c0": "x", "c_bytes": 1, "c_pairs": 1}}', "c0"),
    ('{"constants": {"c0": 1, "c_bytes": NaN, "c_pairs": 1}}', "c_bytes"),
])
@pytest.mark.slow
def test_plan_bad_calibration_is_a_usage_error(small, tmp_path, content, words):
    cal = tmp_path / "cal.json"
    cal.write_text(content)
    assert_usage_error(plan_cli(small, calibration=str(cal)), "--calibration", words)


def test_plan_calibration_without_machine_or_date_still_estimates(small, tmp_path):
    cal = tmp_path / "cal.json"
    cal.write_text('{"constants": {"c0": 1, "c_bytes": 1e-8, "c_pairs": 1e-8}}')
    p = plan_cli(small, calibration=str(cal))
    assert p.returncode == 0 and "time: about " in p.stdout


@pytest.mark.slow
def test_plan_hostile_values_never_trace_back(small, tmp_path):
    for args in (["--num-cores", "0"], ["--reducers", "0"], ["--reducers", "10" + "0" * 30],
                 ["--num-cores", "99999999"], ["--pair-sample", "99999999"],
                 ["--sample-lines", "1"], ["--max-df", "1" + "0" * 30], ["--blocks", "nan"],
                 ["--top-k", "abc"], ["--queries", ""], ["--threshold", "nan"]):
        assert_usage_error(plan_cli(small, *args), args[0].split("=")[0])
    assert_usage_error(plan_cli("", calibration=None), "empty")
    assert_usage_error(plan_cli(small, calibration="/dev/zero"), "--calibration")
    assert_usage_error(plan_cli(small, calibration=str(tmp_path)), "--calibration")
    # --calibrate checks its options before minutes of runs
    assert_usage_error(plan_cli("--calibrate", "--num-cores", "-1"), "--num-cores")
    assert_usage_error(plan_cli("--calibrate", calibration=small + "/x.json"), "--calibration")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    for inputs in ([str(empty)], [str(tmp_path / "nosuch")], [str(tmp_path)]):
        p = plan_cli(*inputs)
        assert p.returncode == 1 and "Traceback" not in p.stderr
        assert len(p.stderr.strip().splitlines()) == 1
