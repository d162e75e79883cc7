"""The pure-Python twin of the C extension ``_mrcodecs_speedups``.

Both twins define the functions named in :data:`mrcodecs._impl.FUNCTIONS`,
with the same arguments, results and exceptions; :mod:`mrcodecs._impl`
picks one of them, once.  ``tests/codecs/test_twins.py`` calls the two side by side.

escape(data) -> bytes
    The framing of SPEC.md section 2; ``data`` is any bytes-like object.
escape_line(key, *value_parts) -> bytes
    ``escape(key) + TAB + escape(b"".join(value_parts))``, 1 to 8 buffers.
unescape(data) -> bytes or int
    Undo :func:`escape`; for malformed input, the int offset of the first bad
    byte (the caller builds the message).  Always a ``bytes`` object.
uuid_from_bytes(b16) -> uuid.UUID
    ``uuid.UUID(bytes=b16)`` without its checks; ValueError unless 16 bytes.
encode_vector_line(key or None, vector, allow_nonfinite) -> bytes or None
    The escaped record of SPEC.md 3.2 (with key: key, TAB, value) for the
    plain case -- an exact SparseVector of C-contiguous native arrays, a
    UUID key, finite weights unless allowed -- else None, and the caller
    takes the general path that raises the documented errors.
decode_vector(escaped) -> SparseVector or None
    The vector of a well-formed record, its arrays read-only views of the
    unescaped bytes; None for malformed input (the caller raises).
encode_places(places, lengths) -> bytes or None
    The feature places of an indexed block record (SPEC.md 3.4): each
    vector's first place, then each place minus the one before, as LEB128
    varints; ``places`` and ``lengths`` C-contiguous uint32 buffers.  None
    if a vector's places do not ascend or the lengths do not add up to them.
decode_places(data, lengths) -> bytes or None
    Undo :func:`encode_places`: the places as native uint32 bytes; None if
    ``data`` is not one varint an entry of at most 5 bytes, a place is past
    2**32, or a difference after a vector's first place is 0.
"""
import math
import uuid

import numpy as np

from .vector import SparseVector, uuid_of

__all__ = ["escape", "escape_line", "unescape", "uuid_from_bytes", "encode_vector_line",
           "decode_vector", "encode_places", "decode_places"]

ESCAPE = 0x0B
_SHIFT = 0x27
_LO, _HI = 0x09, 0x0D
_ESCAPED = bytes(range(_LO, _HI + 1))
_U8 = np.uint8
_MAX_COUNT = 0xFFFFFFFF
_KIND = {np.dtype("<f8"): b"\x01", np.dtype("<f4"): b"\x02"}
_DTYPE = {0x01: np.dtype("<f8"), 0x02: np.dtype("<f4")}
_ID_DTYPE = np.dtype("S16")
_ndarray = np.ndarray
_isfinite = np.isfinite
_math_isfinite = math.isfinite
_frombuffer = np.frombuffer
_UUID = uuid.UUID
_trusted = SparseVector._trusted


def escape(data):
    """Escape ``data`` (bytes-like) so that it holds no byte 0x09..0x0D."""
    data = bytes(data)
    if len(data.translate(None, _ESCAPED)) == len(data):
        return data
    # 0x0B first: the replacements below insert 0x0B bytes of their own.
    return (
        data.replace(b"\x0b", b"\x0b2")
        .replace(b"\t", b"\x0b0")
        .replace(b"\n", b"\x0b1")
        .replace(b"\x0c", b"\x0b3")
        .replace(b"\r", b"\x0b4")
    )


def escape_line(key, *value_parts):
    """``escape(key) + TAB + escape(b"".join(value_parts))``; 1 to 8 buffers."""
    if len(value_parts) > 7:
        raise TypeError("escape_line takes 1 to 8 buffers")
    return b"%s\t%s" % (escape(key), escape(b"".join(value_parts)))


def unescape(data):
    """Undo :func:`escape`: the bytes, or the int offset of the first bad byte."""
    if data.__class__ is not bytes:
        data = bytes(data)
    if len(data.translate(None, _ESCAPED)) == len(data):
        return data
    a = np.frombuffer(data, _U8)
    idx = np.flatnonzero((a - _U8(_LO)) <= _U8(_HI - _LO))
    # Every byte in 0x09..0x0D must be an escape byte followed by a code byte;
    # a code byte is never itself in that range, so the pairs cannot overlap.
    bad = a[idx] != ESCAPE
    if idx[-1] == a.size - 1:
        bad[-1] = True
        codes = a[idx[:-1] + 1]
        bad[:-1] |= (codes - _U8(_LO + _SHIFT)) > _U8(_HI - _LO)
    else:
        codes = a[idx + 1]
        bad |= (codes - _U8(_LO + _SHIFT)) > _U8(_HI - _LO)
    if bad.any():
        return int(idx[np.argmax(bad)])
    out = np.delete(a, idx)
    out[idx - np.arange(idx.size)] = codes - _U8(_SHIFT)
    return out.tobytes()


def uuid_from_bytes(b):
    """``uuid.UUID(bytes=b)`` for exactly 16 bytes, without its checks."""
    if b.__class__ is not bytes:
        b = memoryview(b).tobytes()
    if len(b) != 16:
        raise ValueError("uuid_from_bytes needs 16 bytes")
    return uuid_of(b)


def encode_vector_line(key, vector, allow_nonfinite):
    """The escaped record (key TAB value, or the value alone for key None) of a
    plain SparseVector, else None."""
    try:
        allow = bool(allow_nonfinite)
    except Exception:  # the C twin: PyObject_IsTrue failed -> None
        return None
    if key is not None:
        if not isinstance(key, _UUID):
            return None
        try:
            key_raw = key.int.to_bytes(16, "big")  # OverflowError: negative or >= 2**128
        except (AttributeError, OverflowError, TypeError):
            return None
    if vector.__class__ is not SparseVector:
        return None
    try:
        ids, w = vector.ids, vector.weights
    except AttributeError:
        return None
    if ids.__class__ is not _ndarray or w.__class__ is not _ndarray:
        return None
    kind = _KIND.get(w.dtype)
    n = ids.shape[0]
    if (kind is None or ids.dtype != _ID_DTYPE or ids.ndim != 1 or w.ndim != 1
            or w.shape[0] != n or n > _MAX_COUNT
            or not (ids.flags.c_contiguous and w.flags.c_contiguous)):
        return None
    # one math.isfinite is cheaper than a numpy call for the frequent n == 1
    if not allow and n and not (_math_isfinite(w[0]) if n == 1 else _isfinite(w).all()):
        return None
    header = kind + n.to_bytes(4, "big")
    if key is None:
        return escape(b"".join((header, ids, w)))
    return escape_line(key_raw, header, ids, w)


def decode_vector(data):
    """The SparseVector of a well-formed escaped record, else None."""
    raw = unescape(data)
    if raw.__class__ is int:
        return None
    size = len(raw)
    if size < 5:
        return None
    dt = _DTYPE.get(raw[0])
    if dt is None:
        return None
    n = int.from_bytes(raw[1:5], "big")
    end_ids = 5 + 16 * n
    if size != end_ids + dt.itemsize * n:
        return None
    return _trusted(_frombuffer(raw, _ID_DTYPE, n, 5), _frombuffer(raw, dt, n, end_ids))


#: bytes of a place's varint at most (a place is below 2**32)
_MAX_VARINT = 5


def _u32(buf):
    a = buf if isinstance(buf, np.ndarray) else np.asarray(memoryview(buf))
    if (a.dtype.itemsize != 4 or a.dtype.kind != "u" or not a.dtype.isnative
            or not a.flags.c_contiguous):
        raise TypeError("expected a C-contiguous uint32 buffer")
    return a.astype(np.int64)


def _starts(lengths):
    """Each non-empty vector's first entry, and a mask of the entries after one."""
    starts = (np.cumsum(lengths) - lengths)[lengths > 0]
    later = np.ones(int(lengths.sum()), bool)
    later[starts] = False
    return starts, later


def encode_places(places, lengths):
    v, lengths = _u32(places), _u32(lengths)
    if int(lengths.sum()) != v.shape[0]:
        return None
    starts, later = _starts(lengths)
    d = np.empty_like(v)
    d[1:] = v[1:] - v[:-1]
    d[starts] = v[starts]
    if (d[later] <= 0).any():
        return None
    size = sum((d >= 1 << (7 * k)).astype(np.int64) for k in range(1, _MAX_VARINT)) + 1
    end = np.cumsum(size)
    out = np.zeros(int(end[-1]) if end.shape[0] else 0, np.uint8)
    at = end - size
    for k in range(_MAX_VARINT):
        some = size > k
        out[at[some] + k] = ((d[some] >> (7 * k)) & 0x7F) | np.where(size[some] > k + 1, 0x80, 0)
    return out.tobytes()


def decode_places(data, lengths):
    data, lengths = np.frombuffer(data, np.uint8), _u32(lengths)
    nnz = int(lengths.sum())
    last = np.flatnonzero(data < 0x80)  # each varint's last byte
    if last.shape[0] != nnz or (data.shape[0] and data[-1] >= 0x80):
        return None
    if not nnz:
        return b""
    first = np.concatenate(([0], last[:-1] + 1))
    size = last - first + 1
    if size.max() > _MAX_VARINT:
        return None
    shift = 7 * (np.arange(data.shape[0]) - np.repeat(first, size))
    d = np.add.reduceat((data & 0x7F).astype(np.int64) << shift, first)
    starts, later = _starts(lengths)
    if (d[later] == 0).any():
        return None
    run = np.cumsum(d)  # each vector's places: the running sum of its differences
    places = run - np.repeat(run[starts] - d[starts], lengths[lengths > 0])
    if places.max() >= 1 << 32:
        return None
    return places.astype(np.uint32).tobytes()
