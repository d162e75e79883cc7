"""--input-format compact: mrcodecs VectorProtocol records as the jobs' input.

The records here are written with mrcodecs alone (one record per input line,
a line's repeated features summed as the jobs sum them), independently of
the converter job (tests/jobs/test_convert.py), so that what the jobs read is
tested apart from what writes it."""
import json
import struct
import uuid

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mrcodecs import SparseVector, VectorProtocol
from mrcodecs.framing import escape
from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.inverted_index import MRInvertedIndex
from mrjobs.pairs.idarrays import sort_sum
from mrjobs.parsing import (BAD_KINDS, BAD_LINE, BAD_ORDER, BAD_RANGE, BAD_WEIGHT,
                            FORMATS, InputError, is_compact, parse_vector)
from mrjobs.testing import run_job, write_lines
from tests.jobs_helpers import corpus

LINES = corpus(n=120)
A, B, C = (uuid.UUID(int=i) for i in (1, 2, 3))
F1, F2, F3 = (uuid.UUID(int=0x100 + i) for i in (1, 2, 3))
#: keys whose escaped bytes look like the start of a JSON or a TSV line
TRICKY_KEYS = [uuid.UUID(bytes=b"{" + bytes(15)), uuid.UUID(bytes=b"0123456789abcdef"),
               uuid.UUID(bytes=b"\t" * 16), uuid.UUID(bytes=b"\xef\xbb\xbf" + b" " * 13)]


def record(key, mapping, dtype=np.float64):
    """One VectorProtocol line of ``{UUID: weight}``."""
    return VectorProtocol().write(key, SparseVector.from_dict(mapping, dtype=dtype))


def raw_record(key, ids, weights, kind=1):
    """A record built byte by byte (SPEC.md 3.2), for what the encoder refuses."""
    w = np.asarray(weights, "<f8" if kind == 1 else "<f4")
    body = struct.pack(">BI", kind, len(ids)) + b"".join(u.bytes for u in ids) + w.tobytes()
    return escape(key.bytes) + b"\t" + escape(body)


def to_compact(lines, dtype=np.float64):
    """The compact record of every line the jobs read (one record a line)."""
    out = []
    for line in lines:
        line = line.encode() if isinstance(line, str) else line
        try:
            parsed = parse_vector(line)
        except InputError:
            continue
        if parsed is not None:
            doc, ids, w, _ = parsed[0], *sort_sum(parsed[1], parsed[2])[:3]
            out.append(VectorProtocol().write(uuid.UUID(bytes=doc),
                                              SparseVector(ids, w.astype(dtype))))
    return out


def parsed(line, fmt="compact"):
    doc, ids, w = parse_vector(line, fmt)
    return uuid.UUID(bytes=doc), [(uuid.UUID(bytes=i), x) for i, x in zip(ids.tolist(),
                                                                           w.tolist())]


def bad(line, kind, match, fmt="compact"):
    with pytest.raises(InputError, match=match) as e:
        parse_vector(line, fmt)
    assert e.value.kind == kind


# --- reading one record -------------------------------------------------------

def test_compact_is_an_input_format():
    assert "compact" in FORMATS and BAD_ORDER in BAD_KINDS


@pytest.mark.parametrize("key", [A] + TRICKY_KEYS)
@pytest.mark.parametrize("fmt", ["compact", "auto"])
def test_a_record_reads_as_its_vector(key, fmt):
    line = record(key, {F2: -2.5, F1: 1e-300, F3: 1.7976931348623157e308})
    assert parsed(line, fmt) == (key, [(F1, 1e-300), (F2, -2.5), (F3, 1.7976931348623157e308)])
    w = parse_vector(line, fmt)[2]
    assert w.dtype == np.float64


def test_float32_records_read_as_the_same_numbers():
    line = record(A, {F1: 0.1, F2: 3.0}, dtype=np.float32)
    assert line.split(b"\t", 1)[1][:1] == b"\x02"  # the float32 kind
    assert parsed(line) == (A, [(F1, float(np.float32(0.1))), (F2, 3.0)])


def test_empty_record_is_the_empty_vector():
    assert parsed(record(B, {})) == (B, [])


def test_blank_line_is_skipped():
    assert parse_vector(b"", "compact") is None


@pytest.mark.parametrize("cut", [1, 5, 21, 30])
def test_truncated_record_is_malformed(cut):
    bad(record(A, {F1: 1.0, F2: 2.0})[:-cut], BAD_LINE, "not a compact record")


def test_padded_record_and_wrong_key_length_are_malformed():
    line = record(A, {F1: 1.0})
    bad(line + b"\x00", BAD_LINE, "expected 16 bytes after unescaping|found")
    bad(b"\x01" + line, BAD_LINE, "UUID key: expected 16 bytes")
    bad(line.replace(b"\t", b""), BAD_LINE, "found no TAB")


def test_nan_and_infinite_weights_are_bad_weights():
    for x in (float("nan"), float("inf"), -float("inf")):
        bad(raw_record(A, [F1, F2], [1.0, x]), BAD_WEIGHT, "finite.*entry 1")
    bad(raw_record(A, [F1], [float("nan")], kind=2), BAD_WEIGHT, "finite")


def test_ids_not_ascending_or_repeated_are_refused():
    bad(raw_record(A, [F2, F1], [1.0, 2.0]), BAD_ORDER, "entry 1 .* is below entry 0")
    bad(raw_record(A, [F1, F2, F2], [1.0, 2.0, 3.0]), BAD_ORDER, "entry 2 .* repeats")


def test_float32_range_is_checked_as_for_text():
    line = record(A, {F1: 1e300})
    assert parse_vector(line, "compact", float32=False) is not None
    with pytest.raises(InputError) as e:
        parse_vector(line, "compact", float32=True)
    assert e.value.kind == BAD_RANGE


def test_json_and_tsv_lines_are_not_compact_records():
    j = b'{"id": "%s", "features": {"%s": 1.5}}' % (str(A).encode(), str(F1).encode())
    t = b"%s\t%s:1.5" % (str(A).encode(), str(F1).encode())
    for line in (j, t, j.replace(b" ", b"\t")):
        bad(line, BAD_LINE, "not a compact record|no TAB")
    assert parsed(j, "auto") == parsed(t, "auto") == (A, [(F1, 1.5)])


def test_a_compact_file_given_as_json_or_tsv_is_bad_input():
    line = record(A, {F1: 1.0})
    for fmt in ("json", "tsv"):
        with pytest.raises(InputError) as e:
            parse_vector(line, fmt)
        assert e.value.kind in BAD_KINDS


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.binary(max_size=120))
def test_any_bytes_read_as_compact_or_raise_input_error(line):
    try:
        result = parse_vector(line, "compact")
    except InputError as e:
        assert e.kind in BAD_KINDS and str(e)
    else:
        assert result is None or len(result[0]) == 16


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.dictionaries(st.uuids(), st.floats(allow_nan=False, allow_infinity=False, width=32),
                       max_size=6), st.uuids())
def test_auto_never_takes_a_json_or_tsv_line_for_compact(features, doc):
    """Lines of the text formats never look compact to auto; every record does."""
    j = json.dumps({"id": str(doc), "features": {str(k): v for k, v in features.items()}})
    t = "%s\t%s" % (doc, " ".join("%s:%r" % kv for kv in features.items()))
    assert not is_compact(j.encode()) and not is_compact(t.encode())
    assert is_compact(record(doc, features)) and is_compact(record(doc, features, np.float32))


# --- the jobs -----------------------------------------------------------------

JOBS = [(MRSparseDotProducts, ["--strategy", "blocks", "--measure", "cosine", "--top-k", "4"]),
        (MRSparseDotProducts, ["--strategy", "stripes", "--measure", "jaccard"]),
        (MRInvertedIndex, [])]
IDS = ["dot-blocks", "dot-stripes", "index"]


@pytest.mark.parametrize("job, args", JOBS, ids=IDS)
@pytest.mark.parametrize("fmt", ["compact", "auto"])
@pytest.mark.slow
def test_jobs_give_the_same_lines_from_compact_input(job, args, fmt):
    from_json = run_job(job, LINES, args)
    from_compact = run_job(job, to_compact(LINES), args + ["--input-format", fmt])
    assert from_compact.lines == from_json.lines and len(from_json.lines) > 50
    assert (from_compact.counters["mrsparse input"]["vectors read"]
            == from_json.counters["mrsparse input"]["vectors read"])


@pytest.mark.parametrize("job, args", JOBS, ids=IDS)
@pytest.mark.slow
@pytest.mark.smoke
def test_jobs_on_the_local_runner_from_compact_input(job, args):
    from_json = run_job(job, LINES, args)
    local = run_job(job, to_compact(LINES), args + ["--input-format", "compact"], runner="local")
    assert local.lines == from_json.lines and len(local.lines) > 50


def test_a_corpus_mixing_the_formats_reads_under_auto():
    third = len(LINES) // 3
    lines = LINES[:third] + to_compact(LINES[third:2 * third]) + \
        corpus(n=120, fmt="tsv")[2 * third:]
    assert (run_job(MRInvertedIndex, lines).lines == run_job(MRInvertedIndex, LINES).lines)


def test_duplicate_vector_lines_merge_as_from_json():
    lines = ['{"id": "%s", "features": {"%s": 1.5, "%s": 2}}' % (A, F1, F2),
             '{"id": "%s", "features": {"%s": 0.25}}' % (A, F1),
             '{"id": "%s", "features": {"%s": 3, "%s": 3}}' % (B, F1, F1),
             '{"id": "%s", "features": {"%s": 1}}' % (C, F2)]
    args = ["--measure", "cosine"]
    for strategy in ("blocks", "stripes"):
        a = run_job(MRSparseDotProducts, lines, args + ["--strategy", strategy])
        b = run_job(MRSparseDotProducts, to_compact(lines), args + ["--strategy", strategy])
        assert a.lines == b.lines and len(a.lines) == 3


def test_float32_records_of_the_index_chain_into_the_jobs():
    """The index's --float32 --output-format compact writes float32 records
    (kind 0x02; a few lists come as float64 records); read back, they give
    the lines their values give as JSON.  (The dot-products job's scores are
    float64 records even under --float32: it computes them in float64.)"""
    out = run_job(MRInvertedIndex, LINES, ["--float32", "--output-format", "compact"])
    kinds = [line.split(b"\t", 1)[1][:1] for line in out.lines]
    assert kinds.count(b"\x02") > len(kinds) // 2
    scores = run_job(MRSparseDotProducts, LINES[:20],
                     ["--float32", "--output-format", "compact"])
    assert scores.lines and all(l.split(b"\t", 1)[1][:1] == b"\x01" for l in scores.lines)
    as_json = []
    for key, vec in out.output:
        as_json.append(json.dumps({"id": str(key), "features": {
            str(u): float(w) for u, w in zip(vec.uuids(), vec.weights.tolist())}}))
    for job, args in [(MRInvertedIndex, []), (MRInvertedIndex, ["--float32"]),
                      (MRSparseDotProducts, ["--measure", "cosine", "--top-k", "3"])]:
        a = run_job(job, out.lines, args + ["--input-format", "compact"])
        b = run_job(job, as_json, args)
        assert a.lines == b.lines and len(a.lines) > 50


# --- bad records in a job -------------------------------------------------------

def _bad_records():
    good = [record(d, {F1: 2.0}) for d in (A, B)]
    json_line = ('{"id": "%s", "features": {"%s": 2}}' % (C, F1)).encode()
    return good, [record(C, {F1: 1.0, F2: 2.0})[:-4],           # truncated
                  raw_record(C, [F1], [float("nan")]),           # NaN weight
                  raw_record(C, [F2, F1], [1.0, 1.0]),           # ids not ascending
                  raw_record(C, [F1, F1], [1.0, 1.0]),           # ids repeated
                  json_line]                                     # JSON, not compact


@pytest.mark.parametrize("job", [MRSparseDotProducts, MRInvertedIndex])
def test_bad_records_are_counted_and_skipped(job):
    good, bad_lines = _bad_records()
    result = run_job(job, good + bad_lines, ["--input-format", "compact"])
    c = result.counters["mrsparse input"]
    assert (c[BAD_LINE], c[BAD_WEIGHT], c[BAD_ORDER], c["vectors read"]) == (2, 1, 2, 2)
    if job is MRSparseDotProducts:
        assert dict(result.output) == {A: {B: 4.0}, B: {A: 4.0}}
    else:
        assert dict(result.output) == {F1: {A: 2.0, B: 2.0}}


@pytest.mark.parametrize("which, kind, match", [
    (0, BAD_LINE, "not a compact record"), (1, BAD_WEIGHT, "finite"),
    (2, BAD_ORDER, "strictly ascending"), (3, BAD_ORDER, "repeats"),
    (4, BAD_LINE, "found no TAB")])
def test_strict_names_file_and_line_of_a_bad_record(tmp_path, which, kind, match):
    good, bad_lines = _bad_records()
    path = tmp_path / "corpus.compact"
    write_lines(path, good + [bad_lines[which]])
    with pytest.raises(InputError, match=r"corpus\.compact, line 3: %s: .*%s"
                       % (kind.replace("(", r"\(").replace(")", r"\)"), match)):
        run_job(MRSparseDotProducts, None, ["--strict", "--input-format", "compact"],
                input_paths=[str(path)])


def test_strict_first_line_hint_names_compact(tmp_path):
    path = tmp_path / "corpus.jsonl"
    write_lines(path, LINES[:3])
    with pytest.raises(InputError, match=r"line 1: malformed line.*accepted:.*compact"):
        run_job(MRInvertedIndex, None, ["--strict", "--input-format", "compact"],
                input_paths=[str(path)])
