"""mrjobs.parsing: the input line formats, and bad input through the jobs.

Every bad line either raises :class:`InputError` (which the jobs count and
skip, or turn into a failure under ``--strict``) or is parsed as the
documented form; nothing else escapes, nothing undocumented is accepted.
"""
import json
import uuid

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.inverted_index import MRInvertedIndex
from mrjobs.parsing import (BAD_ID, BAD_KINDS, BAD_LINE, BAD_NUMBER, InputError,
                            _many_uuid_bytes, parse_vector)
from mrjobs.testing import run_job, write_lines

pytestmark = [pytest.mark.twin, pytest.mark.versions]

A, B, C = (uuid.UUID(int=i) for i in (0xA1, 0xB2, 0xC3))
F1, F2 = uuid.UUID("12345678-9abc-def0-1234-56789abcdef0"), uuid.UUID(int=0xF2)
BOM = b"\xef\xbb\xbf"


def parsed(line, fmt="auto"):
    """parse_vector as plain Python values: (doc UUID, [(feature UUID, weight)])."""
    r = parse_vector(line, fmt)
    if r is None:
        return None
    doc, ids, w = r
    return uuid.UUID(bytes=doc), [(uuid.UUID(bytes=i.tobytes()), x) for i, x in zip(ids, w.tolist())]


def bad(line, kind, match, fmt="auto"):
    with pytest.raises(InputError, match=match) as e:
        parse_vector(line, fmt)
    assert e.value.kind == kind
    return e.value


# --- the documented forms ------------------------------------------------------

def test_json_and_tsv_forms():
    want = (A, [(F1, 1.5), (F2, -2.0)])
    assert parsed(b'{"id": "%s", "features": {"%s": 1.5, "%s": -2}}' % (str(A).encode(), str(F1).encode(),
                                                                         str(F2).encode())) == want
    assert parsed(b"%s\t%s:1.5 %s:-2" % (str(A).encode(), str(F1).encode(), str(F2).encode())) == want
    assert parsed(b"  \r") is None
    assert parsed(str(A).encode()) == (A, [])


@pytest.mark.parametrize("form", [
    "12345678-9abc-def0-1234-56789abcdef0", "12345678-9ABC-DEF0-1234-56789ABCDEF0",
    "123456789abcdef0123456789abcdef0", "{12345678-9abc-def0-1234-56789abcdef0}",
    "urn:uuid:12345678-9abc-def0-1234-56789abcdef0",
])
def test_every_documented_uuid_form(form):
    assert parsed(('{"id": "%s", "features": {"%s": 1}}' % (form, form)).encode()) == (F1, [(F1, 1.0)])
    assert parsed(("%s\t%s:1" % (form, form)).encode(), "tsv") == (F1, [(F1, 1.0)])
    assert parsed(("%s\t%s:1" % (form, form)).encode()) == (F1, [(F1, 1.0)])


# --- issue 9, item 1: "features" that is not an object -------------------------

@pytest.mark.parametrize("features, found", [
    ("[1, 2]", r"found array \[1, 2\]"),
    ('[["%s", 1, 2]]' % F1, r"found array \[\['%s', 1, 2\]\]" % F1),
    ('[["%s", 2.0]]' % F1, r"found array \[\['%s', 2.0\]\]" % F1),  # was taken for an object
    ("[]", r"found array \[\]"),
    ('"%s"' % F1, "found string"),
    ("3", "found number 3"),
    ("null", "found null"),
])
def test_features_must_be_an_object(features, found):
    line = ('{"id": "%s", "features": %s}' % (A, features)).encode()
    bad(line, BAD_LINE, r'"features" must be a JSON object \{"<uuid>": <number>, \.\.\.\}, ' + found)
    bad(line, BAD_LINE, '"features" must be a JSON object', fmt="json")


@pytest.mark.parametrize("doc, match", [
    ('[["id", "%s"], ["features", {}]]' % A, "expected a JSON object, found array"),
    ("[1, 2]", "expected a JSON object, found array"),
    ('{"id": ["%s"], "features": {}}' % A, "vector id must be a UUID string, found array"),
    ('{"id": {"%s": 1}, "features": {}}' % A, "vector id must be a UUID string, found object"),
    ('{"id": "%s", "features": {"%s": [1]}}' % (A, F1), r"a weight must be a JSON number, found array \[1\]"),
    ('{"id": "%s", "features": {"%s": {"x": 1}}}' % (A, F1), "a weight must be a JSON number, found object"),
    ('{"id": "%s", "features": {"%s": true}}' % (A, F1), "a weight must be a JSON number, found boolean"),
    ("[" * 100000 + "]" * 100000, "not valid JSON"),  # RecursionError inside json
])
def test_other_json_shapes_are_input_errors(doc, match):
    with pytest.raises(InputError, match=match):
        parse_vector(doc.encode(), "json")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40)
    | st.sampled_from([str(F1), str(A), "{%s}" % F1]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.text(max_size=10) | st.sampled_from([str(F1), str(F2)]), inner, max_size=4),
    max_leaves=12)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(doc_id=json_values, features=json_values)
@pytest.mark.slow
def test_any_json_line_parses_or_raises_input_error(doc_id, features):
    line = json.dumps({"id": doc_id, "features": features}).encode()
    try:
        doc, ids, w = parse_vector(line)
    except InputError as e:
        assert e.kind in BAD_KINDS and str(e)
    else:
        # accepted: exactly the documented form
        assert isinstance(features, dict) and len(ids) == len(features) == len(w)
        assert uuid.UUID(doc_id).bytes == doc


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.binary(max_size=200) | st.text(max_size=100).map(str.encode))
def test_any_bytes_parse_or_raise_input_error(line):
    for fmt in ("auto", "json", "tsv"):
        try:
            parse_vector(line, fmt)
        except InputError as e:
            assert e.kind in BAD_KINDS


@pytest.mark.parametrize("job", [MRSparseDotProducts, MRInvertedIndex])
def test_jobs_count_and_skip_non_object_features(job, tmp_path):
    good = ['{"id": "%s", "features": {"%s": 2}}' % (d, F1) for d in (A, B)]
    bad_lines = ['{"id": "%s", "features": [1, 2]}' % C,
                 '{"id": "%s", "features": [["%s", 1, 2]]}' % (C, F1),
                 '{"id": "%s", "features": [["%s", 2.0]]}' % (C, F2)]
    result = run_job(job, good + bad_lines)
    assert result.counters["mrsparse input"]["malformed line"] == 3
    assert result.counters["mrsparse input"]["vectors read"] == 2
    if job is MRSparseDotProducts:
        assert dict(result.output) == {A: {B: 4.0}, B: {A: 4.0}}
    else:
        assert dict(result.output) == {F1: {A: 2.0, B: 2.0}}
    path = tmp_path / "in.jsonl"
    write_lines(path, good + bad_lines[2:])
    with pytest.raises(InputError, match=r"in\.jsonl, line \d+: malformed line: "
                                         r'"features" must be a JSON object'):
        run_job(job, None, ["--strict"], input_paths=[str(path)])


# --- item 5: a byte-order mark ---------------------------------------------------

@pytest.mark.parametrize("fmt", ["auto", "json", "tsv"])
def test_byte_order_mark_is_ignored(fmt):
    j = b'{"id": "%s", "features": {"%s": 1.5}}' % (str(A).encode(), str(F1).encode())
    t = b"%s\t%s:1.5" % (str(A).encode(), str(F1).encode())
    line = t if fmt == "tsv" else j
    assert parsed(BOM + line, fmt) == parsed(line, fmt) == (A, [(F1, 1.5)])
    if fmt == "auto":
        assert parsed(BOM + t, fmt) == (A, [(F1, 1.5)])
    assert parsed(BOM) is None


def test_file_with_byte_order_mark_keeps_its_first_vector(tmp_path):
    path = tmp_path / "bom.jsonl"
    lines = ['{"id": "%s", "features": {"%s": 2}}' % (d, F1) for d in (A, B)]
    path.write_bytes(BOM + "\n".join(lines).encode() + b"\n")
    result = run_job(MRSparseDotProducts, None, ["--strict"], input_paths=[str(path)])
    assert dict(result.output) == {A: {B: 4.0}, B: {A: 4.0}}
    assert result.counters["mrsparse input"]["vectors read"] == 2


# --- item 6: braced ids in TSV under --input-format auto -------------------------

@pytest.mark.parametrize("rest", ["\t%s:1.5" % F1, "\t{%s}:1.5" % F1, " %s:1.5" % F1, ""])
def test_auto_takes_a_braced_tsv_id_for_tsv(rest):
    line = ("{%s}%s" % (A, rest)).encode()
    want = (A, [(F1, 1.5)] if rest else [])
    if rest.startswith(" "):
        # no TAB: an id and more text is malformed, as for an unbraced id
        bad(line, BAD_LINE, "found no TAB")
        return
    assert parsed(line) == parsed(line, "tsv") == want


@pytest.mark.parametrize("line, kind, match", [
    (b"{}", BAD_LINE, 'expected exactly the keys "id" and "features"'),
    (b'{"id": 1}', BAD_LINE, 'expected exactly the keys'),
    (b"{id: 1}", BAD_LINE, "not valid JSON"),
    (b"{ %s }\tx" % str(A).encode(), BAD_LINE, "not valid JSON"),
    (b'[["id", "%s"], ["features", {}]]' % str(A).encode(), BAD_LINE, "expected a JSON object, found array"),
    (b"\xef\xbb\xbf  [1, 2]", BAD_LINE, "expected a JSON object, found array"),
])
def test_auto_still_takes_json_for_json(line, kind, match):
    bad(line, kind, match)


# --- item 7: the fast path for canonical feature ids -----------------------------

def test_fast_path_rejects_lengths_that_make_up_for_each_other():
    a, b = str(F1), str(F2)
    k35, k37 = a[:35], "0" + b
    assert len(k35 + k37) == 72
    with pytest.raises(InputError, match=r"feature id is not a UUID: '%s'" % k35) as e:
        _many_uuid_bytes([k35, k37])
    assert e.value.kind == BAD_ID
    bad(('{"id": "%s", "features": {"%s": 1, "%s": 2}}' % (A, k35, k37)).encode(), BAD_ID,
        "feature id is not a UUID")
    bad(("%s\t%s:1 %s:2" % (A, k35, k37)).encode(), BAD_ID, "feature id is not a UUID")


def test_fast_path_equals_uuid_module():
    rng = np.random.default_rng(4)
    keys = [str(uuid.UUID(bytes=rng.bytes(16))) for _ in range(1000)]
    keys[7] = keys[7].upper()
    assert _many_uuid_bytes(keys) == b"".join(uuid.UUID(k).bytes for k in keys)


@pytest.mark.parametrize("key", [
    "+2345678-9abc-def0-1234-56789abcdef0", "1234_678-9abc-def0-1234-56789abcdef0",
    " 2345678-9abc-def0-1234-56789abcdef0", "\u0661" * 32, "\uff11" * 32,
    "12345678-9abc-def0-1234-56789abcdef", "12345678-9abc-def0-1234-56789abcdef0 ",
])
def test_only_ascii_hex_uuids(key):
    # uuid.UUID accepts several of these (int(s, 16) takes signs, underscores and
    # any Unicode digit); the input format does not
    if key == key.strip():
        bad(("%s\t%s:1" % (A, key)).encode(), BAD_ID, "feature id is not a UUID")
    bad(json.dumps({"id": str(A), "features": {key: 1}}).encode(), BAD_ID, "feature id is not a UUID")
    bad(json.dumps({"id": key, "features": {}}).encode(), BAD_ID, "vector id is not a UUID")


@pytest.mark.parametrize("weight", ["1_5", "\u0661\u0662", "\uff11"])
def test_tsv_weights_are_ascii_numbers(weight):
    # float() takes all of these (15.0, 12.0, 1.0)
    bad(("%s\t%s:%s" % (A, F1, weight)).encode(), BAD_NUMBER, "weight is not a number")
