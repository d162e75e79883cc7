"""The common JSON input line parsed in C (``parse_json_line`` of
``_mrjobs_speedups``) against mrjobs.parsing's general parser: for every line,
the same vector -- ids and weights to the bit, the sign of zero included --
or the same error (the C parser leaves every line it does not take, and so
every bad line, to the general one)."""
import json
import uuid

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mrjobs.parsing
from mrjobs.parsing import InputError, parse_vector

pytestmark = pytest.mark.asan

c = pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")


def _parse(line, fmt, c_module, monkeypatch):
    monkeypatch.setattr(mrjobs.parsing._c, "C", c_module)
    try:
        got = parse_vector(line, fmt)
    except InputError as e:
        return ("error", e.kind, str(e))
    if got is None:  # a blank line
        return None
    doc, ids, w = got
    return (doc, ids.tobytes(), w.tobytes(), w.dtype.str)


def _same(line, monkeypatch, fmt="auto"):
    fast = _parse(line, fmt, c, monkeypatch)
    slow = _parse(line, fmt, None, monkeypatch)
    assert fast == slow, line
    return fast


ID = "00000000-0000-0000-0000-0000000000%02x"


def _line(features, doc=1, order=("id", "features"), sep=", ", colon=": ", pad=""):
    parts = {"id": '"id"%s"%s"' % (colon, ID % doc),
             "features": '"features"%s{%s}' % (colon, sep.join(
                 '"%s"%s%s' % (k, colon, v) for k, v in features))}
    return (pad + "{" + sep.join(parts[k] for k in order) + "}" + pad).encode()


NUMBERS = ["0", "-0", "1", "-1", "0.5", "-0.0", "1e5", "1E-5", "2.5e+3", "123456789012345678901",
           "1e308", "1.7976931348623157e308", "4.9e-324", "1e-400", "1e999", "-1e999",
           "0.1", "3.141592653589793238462643383279", "9007199254740993",
           "179769313486231580793728971405303415079934132710037826936173778980444968292764750"
           "946649017977587207096330286416692887910946728520746526540590", "1.0e0", "01", "1.",
           ".5", "+1", "NaN", "Infinity", "true", '"1"', "1_000", "0x10"]


@pytest.mark.parametrize("number", NUMBERS)
def test_every_number_reads_as_the_general_parser_reads_it(number, monkeypatch):
    _same(_line([(ID % 2, number), (ID % 3, "2")]), monkeypatch)


@pytest.mark.parametrize("line", [
    _line([]), _line([(ID % 2, "1")], order=("features", "id")),
    _line([(ID % 2, "1")], sep=",", colon=":"), _line([(ID % 2, "1")], sep=" ,\t", colon=" :\r"),
    _line([(ID % 2, "1")], pad=" \t"), _line([(ID % 2, "1")], pad="\x0b"),
    _line([(ID % 2, "1"), (ID % 2, "2")]),  # a repeated feature
    _line([((ID % 2).upper(), "1")]), _line([("{%s}" % (ID % 2), "1")]),
    _line([((ID % 2).replace("-", ""), "1")]), _line([("urn:uuid:" + ID % 2, "1")]),
    _line([(ID % 2, "1")]).replace(b'"id"', b'"\\u0069d"'),
    _line([(ID % 2, "1")]).replace(b"0000000002", b"000000000\\u0032"),
    _line([(ID % 2, "1")]) + b"x", b"{" + _line([(ID % 2, "1")]),
    _line([(ID % 2, "1")]).replace(b"}}", b"}, \"extra\": 1}"),
    _line([(ID % 2, "1")]).replace(b'"features"', b'"id"'),
    _line([(ID % 2, "1")]).replace(b"{\"0", b"[\"0"), _line([(ID % 2, "1")])[:-2],
    b'\xef\xbb\xbf' + _line([(ID % 2, "1")]), _line([(ID % 2, "1")]).replace(b"1}", b"1,}"),
    _line([(ID % 2, "1")]).replace(b"0000000001", b"000000000\xc3\xa9"),
    b"", b"   ", b"[]", b"{}", b"null",
    ("%s\t%s:1.5" % (ID % 1, ID % 2)).encode(),  # TSV
    ("{%s}\t%s:1.5" % (ID % 1, ID % 2)).encode(),  # TSV with a braced id
])
def test_other_lines_are_left_to_the_general_parser(line, monkeypatch):
    for fmt in ("auto", "json"):
        if fmt == "json" and b"\t" in line:
            continue
        _same(line, monkeypatch, fmt)


def test_the_fast_path_takes_the_common_line():
    got = c.parse_json_line(_line([(ID % 2, "1.5"), (ID % 3, "-0")]))
    assert got[0] == uuid.UUID(ID % 1).bytes
    assert got[1] == uuid.UUID(ID % 2).bytes + uuid.UUID(ID % 3).bytes
    w = np.frombuffer(got[2], np.float64)
    assert w.tolist() == [1.5, 0.0] and not np.signbit(w[1])  # int("-0") is 0
    assert c.parse_json_line(_line([(ID % 2, "1e999")])) is None  # not finite: the general way


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.uuids(), st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(min_value=-2**70, max_value=2**70))), max_size=12),
    st.booleans(), st.sampled_from([", ", ",", " , "]), st.data())
@pytest.mark.slow
def test_random_lines_read_alike(features, upper, sep, data):
    with pytest.MonkeyPatch.context() as mp:
        body = ", ".join('"%s": %s' % (str(k).upper() if upper else k, json.dumps(v))
                         for k, v in features)
        line = ('{"id": "%s", "features": {%s}}' % (ID % 9, body)).encode()
        _same(line, mp)
        # and damaged: a byte changed or cut
        if line:
            i = data.draw(st.integers(0, len(line) - 1))
            b = data.draw(st.integers(0, 127))
            _same(line[:i] + bytes([b]) + line[i + 1:], mp)
            _same(line[:i], mp)


def _job_vector(line, c_module, monkeypatch, float32=False, args=()):
    """The vector the jobs make of ``line`` (MRSparseDotProducts.read_vector:
    parsed, sorted, repeats summed, zeros dropped), with the C kernels
    ``c_module`` and the job's ``args``; and the counters it added."""
    from mrjobs.dot_products import MRSparseDotProducts

    monkeypatch.setattr(mrjobs.parsing._c, "C", c_module)
    job = MRSparseDotProducts((["--float32"] if float32 else []) + list(args))
    job._lines = 0
    try:
        got = job.read_vector(line)
    except InputError as e:
        return ("error", e.kind, str(e)), None
    counts = dict(job.counts)
    if got is None:
        return None, counts
    doc, ids, w = got
    return (doc, ids.tobytes(), w.tobytes(), w.dtype.str), counts


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.one_of(
    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([0, -0.0, 1, 2.5]),
    st.integers(min_value=-2**70, max_value=2**70))), max_size=12), st.booleans())
@pytest.mark.slow
def test_the_sorted_fast_path_makes_the_jobs_vector(features, float32):
    # parse_json_sorted takes a line with no repeat and no zero and sorts it:
    # the same vector (and counters) as parse_vector + sort_sum + zeros
    # dropped; repeats (few ids here), zeros and empty lines go the old way
    body = ", ".join('"%s": %s' % (ID % k, json.dumps(v)) for k, v in features)
    line = ('{"id": "%s", "features": {%s}}' % (ID % 99, body)).encode()
    with pytest.MonkeyPatch.context() as mp:
        fast = _job_vector(line, c, mp, float32)
        slow = _job_vector(line, None, mp, float32)
    assert fast == slow, line


def test_the_sorted_fast_path_takes_only_lines_that_need_no_more():
    one = _line([(ID % 3, "1.5"), (ID % 2, "-2")])
    doc, ids, w = c.parse_json_sorted(one)
    assert ids == uuid.UUID(ID % 2).bytes + uuid.UUID(ID % 3).bytes
    assert np.frombuffer(w, np.float64).tolist() == [-2.0, 1.5]
    for line in (_line([(ID % 2, "1"), (ID % 2, "2")]), _line([(ID % 2, "0")]),
                 _line([(ID % 2, "-0.0")]), _line([]), b"\xef\xbb\xbf" + one):
        assert c.parse_json_sorted(line) is None, line


def _compact_line(key, entries, kind):
    """A compact vector record as raw bytes would make it: ``entries``
    ``[(id byte, weight)]`` in the order given (sorted or not), weights of
    the ``kind``'s width (0x01 float64, 0x02 float32), escaped."""
    from mrcodecs import escape

    ids = b"".join(uuid.UUID(ID % i).bytes for i, _ in entries)
    w = np.array([x for _, x in entries], "<f8" if kind == 1 else "<f4")
    raw = bytes([kind]) + len(entries).to_bytes(4, "big") + ids + w.tobytes()
    return escape(uuid.UUID(ID % key).bytes) + b"\t" + escape(raw)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.one_of(
    st.floats(width=32), st.sampled_from([0.0, -0.0, 1.0, 2.5, 1e300, 1e-320]))),
    max_size=8), st.sampled_from([1, 2]), st.booleans(), st.sampled_from(["auto", "compact"]),
    st.integers(0, 12), st.data())
@pytest.mark.slow
def test_the_compact_fast_path_makes_the_jobs_vector(entries, kind, ordered, fmt, key, data):
    # parse_compact_sorted decodes a record with ids strictly ascending and
    # every weight finite and not 0 (keys and ids holding the escaped bytes
    # 0x09..0x0D: ID % 9..13): the same vector (and counters) as the general
    # parser; a record that is not such (ids repeated or out of order, zeros,
    # NaN, infinities, float32 overflow), or broken (a byte changed, cut),
    # goes the old way and reads alike, error and all
    if ordered:
        entries = sorted(dict(entries).items())
    with np.errstate(over="ignore"):
        line = _compact_line(key, entries, kind)
    args = ["--input-format", fmt]
    lines = [line]
    if line:
        i = data.draw(st.integers(0, len(line) - 1))
        lines += [line[:i] + bytes([data.draw(st.integers(0, 255))]) + line[i + 1:], line[:i]]
    with pytest.MonkeyPatch.context() as mp:
        for one in lines:
            assert _job_vector(one, c, mp, args=args) == _job_vector(one, None, mp,
                                                                     args=args), one


def test_the_compact_fast_path_takes_only_records_that_need_no_more():
    one = _line([(ID % 3, "1.5"), (ID % 2, "-2")])
    good = _compact_line(9, [(2, -2.0), (10, 1.5)], 1)  # (key and an id escaped)
    doc, ids, w = c.parse_compact_sorted(good)
    assert doc == uuid.UUID(ID % 9).bytes
    assert ids == uuid.UUID(ID % 2).bytes + uuid.UUID(ID % 10).bytes
    assert np.frombuffer(w, np.float64).tolist() == [-2.0, 1.5]
    assert np.frombuffer(c.parse_compact_sorted(_compact_line(9, [(2, 0.1)], 2))[2],
                         np.float64).tolist() == [float(np.float32(0.1))]
    for line in (_compact_line(9, [(3, 1.0), (2, 1.0)], 1), _compact_line(9, [(2, 1.0)] * 2, 1),
                 _compact_line(9, [(2, 0.0)], 1), _compact_line(9, [(2, np.inf)], 1),
                 _compact_line(9, [(2, np.nan)], 2), _compact_line(9, [], 1),
                 good[:-1], good + b"\x00", good.replace(b"\t", b"\t\x03"), b"\x01" + good,
                 good + b"\x0b", one):
        assert c.parse_compact_sorted(line) is None, line
