"""The C and pure-Python twins of mrcodecs, side by side, whichever one this
session uses: same functions, same results, same exceptions.

The rest of the suite runs once per twin (``make test``); here both are
called directly on the same inputs, so a disagreement shows up in every run.
"""
import struct
import uuid

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mrcodecs
from mrcodecs import SparseVector, _impl, _pyimpl

from tests.codec_helpers import random_uuid, random_vector

pytestmark = [pytest.mark.twin, pytest.mark.versions, pytest.mark.asan]

c = pytest.importorskip("_mrcodecs_speedups", reason="the C twin is not built")
TWINS = {"c": c, "python": _pyimpl}
SPECIAL = b"\x09\x0a\x0b\x0c\x0d"
HYPOTHESIS = settings(derandomize=True, max_examples=300, deadline=None,
                      suppress_health_check=[HealthCheck.too_slow])


def both(name, *args):
    """(outcome in C, outcome in Python): the result, or the exception type."""
    out = []
    for twin in (c, _pyimpl):
        try:
            out.append(getattr(twin, name)(*args))
        except Exception as e:  # compared, not swallowed
            out.append(type(e))
    return tuple(out)


def same(name, *args):
    a, b = both(name, *args)
    if isinstance(a, SparseVector) or isinstance(b, SparseVector):
        assert type(a) is type(b) is SparseVector and a == b, (a, b)
        assert not a.weights.flags.writeable and not b.weights.flags.writeable
    else:
        assert a == b and type(a) is type(b), (a, b)
    return a


def test_every_twin_defines_every_function():
    for name, twin in TWINS.items():
        missing = [f for f in _impl.FUNCTIONS if not callable(getattr(twin, f, None))]
        assert not missing, "%s twin lacks %s" % (name, missing)
    assert sorted(_pyimpl.__all__) == sorted(_impl.FUNCTIONS)
    # and nothing else of the C module is used (no registration calls left)
    assert sorted(n for n in dir(c) if not n.startswith("__")) == sorted(_impl.FUNCTIONS)


def test_the_seam_uses_one_twin_for_every_function():
    for f in _impl.FUNCTIONS:
        assert getattr(_impl, f) is getattr(_impl.twin, f)
    from mrcodecs import framing, records

    assert framing.escape is records.escape is _impl.escape
    assert records._fast_decode is _impl.decode_vector
    assert records._fast_line is _impl.encode_vector_line
    assert records.uuid_from_bytes is mrcodecs.uuid_from_bytes is _impl.uuid_from_bytes


def test_one_loader_for_both_extensions(tmp_path, monkeypatch):
    # mrcodecs' twin and mrjobs' kernels load through _impl.load_extension:
    # an extension without one of the functions asked for is not used
    (tmp_path / "_mrsparse_probe_ext.py").write_text("def one():\n    return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("MRCODECS_PUREPYTHON", raising=False)
    module, reason = _impl.load_extension("_mrsparse_probe_ext", ("one",))
    assert module.one() == 1 and "_mrsparse_probe_ext" in reason
    assert _impl.load_extension("_mrsparse_probe_ext", ("one", "two")) == (
        None, "the C extension %s lacks two; reinstall to rebuild it" % module.__file__)
    assert _impl.load_extension("_mrsparse_no_such_ext", ())[0] is None
    monkeypatch.setenv("MRCODECS_PUREPYTHON", "1")
    assert _impl.load_extension("_mrsparse_probe_ext", ("one",)) == (
        None, "MRCODECS_PUREPYTHON is set")
    from mrjobs import _c
    if _c.C is not None:
        assert [f for f in _c.FUNCTIONS if not callable(getattr(_c.C, f, None))] == []


buffers = st.binary(max_size=200) | st.lists(
    st.sampled_from(list(SPECIAL) + [0x30, 0x34, 0x35, 0]), max_size=60).map(bytes)


@HYPOTHESIS
@given(buffers, st.sampled_from([bytes, bytearray, memoryview, lambda b: np.frombuffer(b, np.uint8)]))
def test_framing_agrees_on_any_bytes_like(data, kind):
    e = same("escape", kind(data))
    assert same("unescape", kind(e)) == data
    assert same("escape_line", kind(data), kind(data), kind(e)) == e + b"\t" + _pyimpl.escape(data + e)
    # corrupt: both name the same offset
    for i in range(0, len(e), 7):
        for byte in (0x0B, 0x0D, 0x35):
            bad = bytearray(e)
            bad[i] = byte
            same("unescape", kind(bytes(bad)))


def test_memoryview_and_bytearray_through_the_public_functions():
    line = mrcodecs.VectorProtocol().write(uuid.UUID(int=1), SparseVector.from_dict({uuid.UUID(int=9): 2.5}))
    value = line.split(b"\t", 1)[1]
    for kind in (memoryview, bytearray):
        assert mrcodecs.unescape(kind(b"a\x0b0b")) == b"a\tb"
        assert mrcodecs.decode_vector(kind(value)).to_dict() == {uuid.UUID(int=9): 2.5}
        assert mrcodecs.decode_uuid(kind(line.split(b"\t")[0])) == uuid.UUID(int=1)
    assert mrcodecs.VectorProtocol().read(bytearray(line))[1].to_dict() == {uuid.UUID(int=9): 2.5}
    for name in ("unescape", "decode_vector"):
        for twin in TWINS.values():
            r = getattr(twin, name)(memoryview(value))
            assert r is not None


def test_unescape_result_is_always_bytes():
    for data in (b"abc", bytearray(b"abc"), memoryview(b"abc"), b"a\x0b0"):
        assert same("unescape", data).__class__ is bytes

    class Sub(bytes):
        pass

    assert same("unescape", Sub(b"abc")).__class__ is bytes


@pytest.mark.parametrize("arg", [b"\x00" * 16, bytes(range(16)), b"\xff" * 16, bytearray(16),
                                 memoryview(bytes(range(16))), np.zeros(16, np.uint8),
                                 b"\x00" * 15, b"\x00" * 17, "x" * 16, 16, None])
def test_uuid_from_bytes_agrees(arg):
    r = same("uuid_from_bytes", arg)
    if isinstance(r, uuid.UUID):
        assert r == uuid.UUID(bytes=bytes(memoryview(arg))) and r.is_safe == uuid.SafeUUID.unknown
        assert str(r) == str(uuid.UUID(bytes=bytes(memoryview(arg))))
    else:
        assert r in (ValueError, TypeError)


class SubVector(SparseVector):
    __slots__ = ()


class SubUUID(uuid.UUID):
    pass


def _vectors():
    rng = np.random.default_rng(17)
    v = random_vector(rng, 40)
    nan = SparseVector(v.ids[:3].copy(), [1.0, np.nan, 2.0], allow_nonfinite=True)
    return {
        "plain": v,
        "empty": SparseVector.empty(),
        "f32": v.astype(np.float32),
        "special bytes": SparseVector(np.frombuffer(SPECIAL * 16, mrcodecs.ID_DTYPE),
                                      np.full(5, struct.unpack("<d", SPECIAL[:4] * 2)[0])),
        "strided": SparseVector._trusted(v.ids[::2], v.weights[::2]),
        "subclass": SubVector(v.ids, v.weights),
        "big-endian": SparseVector._trusted(v.ids, v.weights.astype(">f8")),
        "float16": SparseVector._trusted(v.ids, v.weights.astype(np.float16)),
        "lengths differ": SparseVector._trusted(v.ids, v.weights[:-1]),
        "ids not S16": SparseVector._trusted(v.ids.astype("S17"), v.weights),
        "2-d": SparseVector._trusted(v.ids.reshape(2, 20), v.weights.reshape(2, 20)),
        "nan": nan,
        "inf f32": nan.astype(np.float32),
        "not a vector": {"ids": v.ids},
        "unset slots": SparseVector.__new__(SparseVector),
    }


@pytest.mark.parametrize("name, vector", list(_vectors().items()), ids=list(_vectors()))
@pytest.mark.parametrize("key", [None, uuid.UUID(int=0x0D0A), uuid.UUID(int=(1 << 128) - 1), SubUUID(int=5),
                                 "not a uuid"], ids=["none", "uuid", "max", "subclass", "str"])
@pytest.mark.parametrize("allow", [False, True])
def test_encode_vector_line_agrees(name, vector, key, allow):
    line = same("encode_vector_line", key, vector, allow)
    plain = name in ("plain", "empty", "f32", "special bytes") or (allow and name in ("nan", "inf f32"))
    if key == "not a uuid" or not plain:
        assert line is None
    else:
        assert line is not None
        if key is None:
            assert same("decode_vector", line) == vector
        else:
            k, v = mrcodecs.VectorProtocol().read(line)
            assert k == key and v == vector


@HYPOTHESIS
@given(st.binary(max_size=120), st.data())
def test_decode_vector_agrees_on_garbage_and_corruption(garbage, draw):
    same("decode_vector", garbage)
    v = random_vector(np.random.default_rng(len(garbage)), draw.draw(st.integers(0, 6)))
    line = bytearray(_pyimpl.encode_vector_line(None, v, False))
    same("decode_vector", bytes(line))
    i = draw.draw(st.integers(0, len(line) - 1))
    line[i] = draw.draw(st.integers(0, 255))
    same("decode_vector", bytes(line))
    same("decode_vector", bytes(line[:i]))


def test_twins_agree_on_big_vectors_and_every_byte():
    rng = np.random.default_rng(5)
    for n in (1, 2, 17, 100_000):
        v = random_vector(rng, n)
        key = random_uuid(rng)
        line = same("encode_vector_line", key, v, False)
        assert same("decode_vector", line.split(b"\t", 1)[1]) == v
    data = bytes(range(256)) * 64
    assert same("unescape", same("escape", data)) == data


@HYPOTHESIS
@given(st.lists(st.lists(st.integers(0, 2**32 - 1), max_size=6, unique=True), max_size=8),
       st.binary(max_size=40), st.data())
def test_places_agree_on_vectors_garbage_and_corruption(vectors, garbage, draw):
    lengths = np.array([len(v) for v in vectors], np.uint32)
    places = np.array([p for v in vectors for p in sorted(v)], np.uint32)
    data = same("encode_places", places, lengths)
    assert np.frombuffer(same("decode_places", data, lengths), np.uint32).tolist() == \
        places.tolist()
    same("decode_places", garbage, lengths)
    if data:
        hurt = bytearray(data)
        hurt[draw.draw(st.integers(0, len(data) - 1))] = draw.draw(st.integers(0, 255))
        same("decode_places", bytes(hurt), lengths)
        same("decode_places", data[:-1], lengths)
    # places that do not ascend, or lengths that do not add up to them
    down = np.array([p for v in vectors for p in sorted(v, reverse=True)], np.uint32)
    assert (same("encode_places", down, lengths) is None) == any(len(v) > 1 for v in vectors)
    if vectors:
        assert same("encode_places", places, lengths + 1) is None
