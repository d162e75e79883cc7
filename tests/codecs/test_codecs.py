"""Tests of mrcodecs: framing, SparseVector, record layouts, protocols."""
import gc
import json
import os
import struct
import subprocess
import sys
import uuid

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mrcodecs
from mrcodecs import (
    DecodeError,
    EncodeError,
    SparseVector,
    VectorProtocol,
    VectorValueProtocol,
    framing,
)

from tests.codec_helpers import (
    assert_cant_decode,
    assert_cant_encode,
    assert_round_trip_ok,
    random_uuid,
    random_vector,
)

pytestmark = [pytest.mark.twin, pytest.mark.versions, pytest.mark.asan]

VECTORS = os.path.join(os.path.dirname(__file__), "..", "..", "codecs", "vectors")
SPECIAL = b"\x09\x0a\x0b\x0c\x0d"
HYPOTHESIS = settings(derandomize=True, max_examples=200, deadline=None,
                      suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


# --- framing -----------------------------------------------------------------

def test_escape_literal_bytes():
    assert framing.py_escape(SPECIAL) == b"\x0b0\x0b1\x0b2\x0b3\x0b4"
    assert mrcodecs.escape(SPECIAL) == b"\x0b0\x0b1\x0b2\x0b3\x0b4"
    assert mrcodecs.escape(b"a\x0bb") == b"a\x0b2b"
    assert mrcodecs.escape(b"") == b""
    assert mrcodecs.escape(bytes(range(9))) == bytes(range(9))


@HYPOTHESIS
@given(st.binary(max_size=300) | st.lists(st.sampled_from(list(SPECIAL) + [0x30, 0x34, 0x35, 0]),
                                          max_size=80).map(bytes))
def test_escape_round_trip_and_twins_agree(data):
    e = framing.py_escape(data)
    assert not any(b in e for b in b"\t\n\r")
    assert framing.py_unescape(e) == data
    assert mrcodecs.escape(data) == e
    assert mrcodecs.unescape(e) == data


@HYPOTHESIS
@given(st.binary(max_size=40), st.binary(max_size=40))
def test_escape_preserves_order_and_equality(a, b):
    ea, eb = mrcodecs.escape(a), mrcodecs.escape(b)
    assert (a < b) == (ea < eb)
    assert (a == b) == (ea == eb)


def test_escape_overhead_on_random_bytes():
    data = np.random.default_rng(7).bytes(1 << 20)
    growth = len(mrcodecs.escape(data)) / len(data) - 1
    assert growth <= 0.02
    assert growth == pytest.approx(5 / 256, rel=0.05)


@pytest.mark.parametrize("data, offset", [
    (b"abc\x0b", 3), (b"\x0b5", 0), (b"ab\tc", 2), (b"ab\x0b0\x0c", 4), (b"\r", 0), (b"x" * 40 + b"\n", 40),
])
def test_unescape_errors_name_the_offset(data, offset):
    for impl in (framing.py_unescape, mrcodecs.unescape):
        with pytest.raises(DecodeError, match="at byte offset %d$" % offset):
            impl(data)


# --- SparseVector ------------------------------------------------------------

def test_sparse_vector_from_dict_sorts_and_round_trips():
    d = {uuid.UUID(int=i * 7919 % 101): float(i) for i in range(50)}
    v = SparseVector.from_dict(d)
    assert v.to_dict() == d
    assert list(v.ids) == sorted(v.ids)
    assert v.uuids() == sorted(d)


def test_sparse_vector_validates():
    a, b = uuid.UUID(int=1), uuid.UUID(int=2)
    with pytest.raises(EncodeError, match="sorted ascending and unique .* found "
                       "00000000-0000-0000-0000-000000000001 after 00000000-0000-0000-0000-000000000002 at position 1"):
        SparseVector([b, a], [1.0, 2.0])
    with pytest.raises(EncodeError, match="sorted ascending and unique"):
        SparseVector([a, a], [1.0, 2.0])
    with pytest.raises(EncodeError, match=r"weights must be finite, found nan at position 1"):
        SparseVector([a, b], [1.0, float("nan")])
    with pytest.raises(EncodeError, match="differ in length: 2 ids, 1 weights"):
        SparseVector([a, b], [1.0])
    with pytest.raises(EncodeError, match=r"ids\[1\]: expected a uuid.UUID or 16 bytes, found str"):
        SparseVector([a, "x"], [1.0, 2.0])
    with pytest.raises(EncodeError, match="float64 or float32, found dtype int64"):
        SparseVector([a], [1], dtype=np.int64)
    v = SparseVector([a, b], [1.0, float("inf")], allow_nonfinite=True)
    assert v.weights[1] == np.inf


def test_sparse_vector_merge_sums_duplicates():
    a, b, c = (uuid.UUID(int=i) for i in (1, 2, 3))
    v = SparseVector([c, a, c, b, a], [1.0, 2.0, 3.0, 4.0, 5.0], merge=True)
    assert v.to_dict() == {a: 7.0, b: 4.0, c: 4.0}
    v32 = SparseVector([b, a], np.array([1, 2], np.float32), merge=True)
    assert v32.weights.dtype == np.float32 and v32.to_dict() == {a: 2.0, b: 1.0}


def test_ids_ending_in_nul_survive():
    # numpy strips trailing NULs from S16 scalars; the codecs must never do so
    u = uuid.UUID(bytes=b"\x01" + b"\x00" * 15)
    v = SparseVector.from_dict({u: 1.0})
    assert v.uuids() == [u]
    assert_round_trip_ok(VectorProtocol(), u, v)


def test_dot():
    a, b, c = (uuid.UUID(int=i) for i in (1, 2, 3))
    x = SparseVector.from_dict({a: 1.0, b: 2.0})
    y = SparseVector.from_dict({b: 3.0, c: 5.0})
    assert x.dot(y) == 6.0


# --- protocols: round trips --------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 2, 17, 512, 100_000])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_vector_protocol_round_trip(n, dtype):
    rng = np.random.default_rng(n)
    v = random_vector(rng, n, dtype)
    line = assert_round_trip_ok(VectorProtocol(), random_uuid(rng), v)
    assert_round_trip_ok(VectorValueProtocol(), None, v)
    if dtype is np.float64:
        assert len(line) <= 24 + 24.5 * n + (3 if n < 100 else 0)


uuids = st.binary(min_size=16, max_size=16).map(lambda b: uuid.UUID(bytes=b))
special_heavy_uuids = st.lists(st.sampled_from(list(SPECIAL) + [0, 0x30, 0xFF]), min_size=16,
                               max_size=16).map(lambda b: uuid.UUID(bytes=bytes(b)))
any_uuid = uuids | special_heavy_uuids
weights64 = st.floats(allow_nan=False, allow_infinity=False)
weights_special = st.lists(st.sampled_from(list(SPECIAL) + [0x3F, 0x40]), min_size=8, max_size=8).map(
    lambda b: struct.unpack("<d", bytes(b))[0]).filter(np.isfinite)


@HYPOTHESIS
@given(key=any_uuid, entries=st.dictionaries(any_uuid, weights64 | weights_special, max_size=40),
       f32=st.booleans())
def test_vector_protocol_round_trip_hypothesis(key, entries, f32):
    if f32:
        with np.errstate(over="ignore"):
            entries = {u: float(np.float32(w)) for u, w in entries.items() if np.isfinite(np.float32(w))}
    v = SparseVector.from_dict(entries, dtype=np.float32 if f32 else np.float64)
    assert_round_trip_ok(VectorProtocol(), key, v)
    assert v.to_dict() == entries


def test_every_byte_value_in_keys_ids_and_last_byte():
    p = VectorProtocol()
    for last in range(256):
        key = uuid.UUID(bytes=bytes((last * 7 + i) % 256 for i in range(15)) + bytes([last]))
        ids = np.frombuffer(bytes((last + i) % 256 for i in range(16 * 16)), mrcodecs.ID_DTYPE)
        v = SparseVector(ids, np.full(16, struct.unpack("<d", bytes([last] * 7 + [0x3F]))[0]), merge=True)
        assert_round_trip_ok(p, key, v)


def test_reading_same_key_reuses_the_decoded_key():
    p = VectorProtocol()
    k = uuid.UUID(int=5)
    line1 = p.write(k, SparseVector.empty())
    line2 = p.write(k, SparseVector.from_dict({k: 1.0}))
    k1, _ = p.read(line1)
    k2, _ = p.read(line2)
    assert k1 == k and k2 is k1
    k3, _ = p.read(p.write(uuid.UUID(int=6), SparseVector.empty()))
    assert k3 == uuid.UUID(int=6)


def test_output_sorts_in_uuid_order():
    rng = np.random.default_rng(3)
    keys = [random_uuid(rng) for _ in range(500)] + [uuid.UUID(bytes=bytes([b]) * 16) for b in range(256)]
    p = VectorProtocol()
    lines = sorted(p.write(k, SparseVector.empty()) for k in keys)
    # the shuffle sorts on the bytes before the first TAB, unsigned
    assert [p.read(line)[0] for line in sorted(lines, key=lambda l: l.split(b"\t")[0])] == sorted(keys)


# --- protocols: errors -------------------------------------------------------

def test_cant_encode():
    p = VectorProtocol()
    v = SparseVector.from_dict({uuid.UUID(int=1): 1.0})
    assert_cant_encode(p, "not-a-uuid", v, "key must be a uuid.UUID, found str 'not-a-uuid'")
    assert_cant_encode(p, uuid.UUID(int=1), {"a": 1}, "value must be a mrcodecs.SparseVector")
    bad = SparseVector([uuid.UUID(int=1), uuid.UUID(int=2)], [1.0, np.nan], allow_nonfinite=True)
    assert_cant_encode(p, uuid.UUID(int=1), bad, r"non-finite weight nan at position 1")
    bad1 = SparseVector([uuid.UUID(int=1)], [np.inf], allow_nonfinite=True)
    assert_cant_encode(p, uuid.UUID(int=1), bad1, r"non-finite weight inf at position 0")

    class NonFinite(VectorProtocol):
        allow_nonfinite = True

    k, v2 = NonFinite().read(NonFinite().write(uuid.UUID(int=1), bad))
    assert np.isnan(v2.weights[1])


@pytest.mark.parametrize("line, match", [
    (b"", "found no TAB in 0 bytes"),
    (b"\x00" * 16 + b"\t", "expected a 5-byte header"),  # Hadoop's trailing-tab case
    (b"\x00" * 16 + b"\t\x01\x00\x00\x00\x01" + b"\x00" * 23, r"says 1 entries of float64, which take 29 bytes "
                                                              r"after unescaping, found 28 bytes"),
    (b"\x00" * 16 + b"\t\x01\x00\x00\x00\x00\x00", r"says 0 entries .* found 6 bytes"),
    (b"\x00" * 16 + b"\t\xff\x00\x00\x00\x00", r"expected kind byte .* at byte offset 0, found 0xFF"),
    (b"\x00" * 17 + b"\t\x01\x00\x00\x00\x00", "UUID key: expected 16 bytes after unescaping, found 17"),
    (b"\x00" * 15 + b"\x0b\t\x01\x00\x00\x00\x00", r"UUID key: .* found escape byte 0x0B at the end"),
    (b"\x00" * 16 + b"\t\x01\x00\x00\x00\x00\x0b\x0b", r"found escape byte 0x0B followed by 0x0B .* at byte offset 5"),
    (b"\x00" * 16 + b"\t\x01\x00\r\x00\x00", r"found raw byte 0x0D, which the framing never writes .* offset 2"),
])
def test_cant_decode(line, match):
    assert_cant_decode(VectorProtocol(), line, match)
    with pytest.raises(ValueError):  # the documented base class
        VectorProtocol().read(line)


@HYPOTHESIS
@given(st.binary(max_size=120))
def test_garbage_raises_decode_error_only(garbage):
    for p in (VectorProtocol(), VectorValueProtocol()):
        try:
            p.read(garbage)
        except DecodeError:
            pass


def test_truncation_anywhere_is_detected():
    rng = np.random.default_rng(11)
    p = VectorValueProtocol()
    line = p.write(None, random_vector(rng, 20))
    for cut in range(len(line)):
        with pytest.raises(DecodeError):
            p.read(line[:cut])


# --- stored test vectors -----------------------------------------------------

def _manifest():
    with open(os.path.join(VECTORS, "manifest.json")) as f:
        return json.load(f)


def _read(*parts):
    with open(os.path.join(VECTORS, *parts), "rb") as f:
        return f.read()


@pytest.mark.parametrize("case", _manifest()["valid"], ids=lambda c: c["name"])
def test_stored_vectors_decode_and_encode_byte_exact(case):
    line = _read(case["name"] + ".line")
    key = uuid.UUID(case["key"])
    entries = {uuid.UUID(u): float.fromhex(w) for u, w in case["entries"]}
    vec = SparseVector.from_dict(entries, dtype=np.dtype(case["dtype"]))
    k, v = VectorProtocol().read(line)
    assert k == key and v == vec and v.weights.dtype == np.dtype(case["dtype"])
    assert VectorProtocol().write(key, vec) == line


def test_stored_vectors_cover_every_byte_value():
    valid = _manifest()["valid"]
    raw = b"".join(framing.py_unescape(part) for c in valid for part in _read(c["name"] + ".line").split(b"\t"))
    assert set(raw) == set(range(256))
    assert any(_read(c["name"] + ".line").endswith(b"\x0b4") or _read(c["name"] + ".line").endswith(b"\x0b2")
               for c in valid)


@pytest.mark.parametrize("case", _manifest()["invalid"], ids=lambda c: c["name"])
def test_stored_invalid_vectors_raise(case):
    with pytest.raises(DecodeError) as e:
        VectorProtocol().read(_read("invalid", case["name"] + ".line"))
    assert str(e.value).startswith(case["error"])


# --- packaging ---------------------------------------------------------------

def _twin_in_subprocess(prelude, env_value):
    env = dict(os.environ)
    env.pop("MRCODECS_PUREPYTHON", None)
    if env_value is not None:
        env["MRCODECS_PUREPYTHON"] = env_value
    code = (
        prelude + "import uuid\n"
        "import mrcodecs, mrcodecs._impl as i\n"
        "p = mrcodecs.VectorProtocol(); k = uuid.UUID(bytes=bytes(range(9, 25)))\n"
        "v = mrcodecs.SparseVector.from_dict({k: 1.5})\n"
        "assert p.read(p.write(k, v)) == (k, v)\n"
        "assert mrcodecs.SPEEDUPS == (i.NAME == 'c')\n"
        "print(i.NAME, '-', i.REASON)\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          check=True).stdout


def test_pure_python_twin_when_speedups_are_missing():
    out = _twin_in_subprocess("import sys; sys.modules['_mrcodecs_speedups'] = None\n", None)
    assert out.startswith("python - the C extension is not importable (")


@pytest.mark.parametrize("value, twin", [("1", "python"), ("yes", "python"), ("0", "c"), ("", "c"),
                                         (None, "c")])
@pytest.mark.slow
def test_purepython_environment_variable_picks_the_twin(value, twin):
    pytest.importorskip("_mrcodecs_speedups")
    out = _twin_in_subprocess("", value)
    assert out.split(" - ")[0] == twin
    if twin == "python":
        assert out == "python - MRCODECS_PUREPYTHON is set\n"


def test_speedups_are_built_in_the_test_environment():
    # make test installs the project with its C twin; the benchmarks rely on it
    import _mrcodecs_speedups

    from mrcodecs import _impl

    assert _impl.SPEEDUPS == mrcodecs.SPEEDUPS == (not _impl.purepython_forced())
    assert _impl.twin is (_mrcodecs_speedups if _impl.SPEEDUPS else _impl._pyimpl)


def test_encoding_views_and_subclasses_matches_plain_vectors():
    # the C fast path takes only plain contiguous arrays; everything else goes
    # through the Python path, which must give the same bytes
    rng = np.random.default_rng(21)
    v = random_vector(rng, 40)
    view = SparseVector._trusted(v.ids[::2], v.weights[::2])
    plain = SparseVector(v.ids[::2].copy(), v.weights[::2].copy())

    class MyVector(SparseVector):
        __slots__ = ()

    sub = MyVector(plain.ids, plain.weights)
    key = random_uuid(rng)
    p = VectorProtocol()
    assert p.write(key, view) == p.write(key, plain) == p.write(key, sub)
    assert VectorValueProtocol().write(None, view) == VectorValueProtocol().write(None, plain)
    _, back = p.read(p.write(key, view))
    assert back == plain and not back.weights.flags.writeable


@pytest.mark.parametrize("weight", [2.5, struct.unpack("<d", b"\x0a" * 8)[0]],
                         ids=["no-escapes", "escapes"])
def test_decoded_arrays_outlive_the_line(weight):
    # without escapes, the arrays view the line object itself; with escapes, a
    # new unescaped copy: either way they must keep their buffer alive
    entries = {uuid.UUID(int=9): weight, uuid.UUID(int=10): -1.0}
    v = SparseVector.from_dict(entries)
    encoded = VectorValueProtocol().write(None, v)
    line = b"".join([encoded[:1], encoded[1:]])  # a new object only this test holds
    _, back = VectorValueProtocol().read(line)
    del line
    gc.collect()
    junk = [bytes(len(encoded)) for _ in range(1000)]  # reuse freed memory, if any
    assert back.to_dict() == entries and back.weights.tolist() == [weight, -1.0]
    assert len(junk) == 1000


@pytest.mark.parametrize("case", _manifest()["stripes"], ids=lambda c: c["name"])
def test_stored_stripe_vectors_decode_and_encode_byte_exact(case):
    from mrcodecs.jobwire import Stripe, StripeProtocol

    line = _read(case["name"] + ".line")
    hexfloats = lambda xs: None if xs is None else [float.fromhex(x) for x in xs]  # noqa: E731
    stats = hexfloats(case["stats"])
    stripe = Stripe(
        np.array([bytes.fromhex(i) for i in case["ids"]], dtype="S16"),
        np.array(hexfloats(case["values"]), dtype=case["dtype"]),
        None if stats is None else np.array(stats),
        None if case["self_stat"] is None else float.fromhex(case["self_stat"]),
        case["query"],
    )
    key, value = StripeProtocol().read(line)
    assert key == bytes.fromhex(case["key"]) and value == stripe
    assert StripeProtocol().write(key, stripe) == line
