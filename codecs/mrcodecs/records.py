"""Record layouts: how a UUID key and a SparseVector value become bytes.

Each function here works on whole numpy arrays; nothing loops over entries.
``encode_*`` return escaped (line-safe) bytes, ``decode_*`` take them.
The layouts are specified byte by byte in ``codecs/SPEC.md``.
"""
import math
import struct

import numpy as np

from . import _impl
from .errors import DecodeError, EncodeError
from .framing import escape, escape_line, unescape
from .vector import ID_DTYPE, SparseVector, _UUID

#: ``uuid.UUID(bytes=b)`` for exactly 16 bytes, without its argument checks
#: (the twin chosen in :mod:`mrcodecs._impl`)
uuid_from_bytes = _impl.uuid_from_bytes

__all__ = [
    "KIND_VECTOR_F64",
    "KIND_VECTOR_F32",
    "encode_uuid",
    "decode_uuid",
    "encode_vector",
    "decode_vector",
    "encode_uuid_vector_line",
]

#: kind byte of a sparse vector with float64 weights
KIND_VECTOR_F64 = 0x01
#: kind byte of a sparse vector with float32 weights
KIND_VECTOR_F32 = 0x02

_F64 = np.dtype("<f8")
_F32 = np.dtype("<f4")
_KINDS = {KIND_VECTOR_F64: _F64, KIND_VECTOR_F32: _F32}
_HEADER = struct.Struct(">BI")
_HEADER_SIZE = _HEADER.size  # 5
_MAX_COUNT = 0xFFFFFFFF
# The header of a one-entry vector, the most frequent record (index mappers).
_HEADER_1 = {_F64: _HEADER.pack(KIND_VECTOR_F64, 1), _F32: _HEADER.pack(KIND_VECTOR_F32, 1)}
_KIND_OF = {_F64: KIND_VECTOR_F64, _F32: KIND_VECTOR_F32}
# The twin's fast paths do the plain case (see mrcodecs._pyimpl) and return
# None for anything else; the Python code below then does the work and raises
# the documented errors.  Both twins define them, with the same results.
_fast_line = _impl.encode_vector_line
_fast_decode = _impl.decode_vector

_isfinite = np.isfinite
_math_isfinite = math.isfinite
_frombuffer = np.frombuffer
_trusted = SparseVector._trusted


def _key_bytes(key):
    if not isinstance(key, _UUID):
        raise EncodeError(
            "key must be a uuid.UUID, found %s %.60r" % (type(key).__name__, key)
        )
    return key.int.to_bytes(16, "big")


def encode_uuid(key):
    """Escaped 16 big-endian bytes of a :class:`uuid.UUID`.

    Examples
    --------
    >>> import uuid
    >>> encode_uuid(uuid.UUID(int=0x0A))
    b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x0b1'
    """
    return escape(_key_bytes(key))


def decode_uuid(data, what="UUID key"):
    """Inverse of :func:`encode_uuid`; :class:`DecodeError` unless 16 bytes."""
    raw = unescape(data, what)
    if len(raw) != 16:
        raise DecodeError(
            "cannot decode %s: expected 16 bytes after unescaping, found %d "
            "(input of %d bytes: %.60r)" % (what, len(raw), len(data), bytes(data))
        )
    return uuid_from_bytes(raw)


def _vector_parts(vector, allow_nonfinite):
    """(header, ids, weights): the unescaped pieces of a vector record."""
    try:
        ids = vector.ids
        w = vector.weights
        n = len(ids)
        header = _HEADER_1[w.dtype] if n == 1 else _HEADER.pack(_KIND_OF[w.dtype], n)
    except (AttributeError, KeyError, TypeError, struct.error):
        raise EncodeError(
            "value must be a mrcodecs.SparseVector with float64 or float32 weights "
            "and at most %d entries, found %s %.60r"
            % (_MAX_COUNT, type(vector).__name__, vector)
        ) from None
    if n != len(w) or ids.dtype != ID_DTYPE:
        raise EncodeError(
            "malformed SparseVector: %d ids of dtype %s, %d weights" % (n, ids.dtype, len(w))
        )
    if not allow_nonfinite and n:
        # one math.isfinite is cheaper than a numpy call for the frequent n == 1
        if not (_math_isfinite(w[0]) if n == 1 else _isfinite(w).all()):
            bad = np.flatnonzero(~_isfinite(w))[0]
            raise EncodeError(
                "cannot encode a non-finite weight %r at position %d "
                "(use allow_nonfinite=True to carry NaN and infinities)"
                % (float(w[bad]), bad)
            )
    return header, np.ascontiguousarray(ids), np.ascontiguousarray(w)


def encode_vector(vector, allow_nonfinite=False):
    """Escaped bytes of a :class:`SparseVector` (header, ids, weights).

    Raises
    ------
    EncodeError
        ``vector`` is not a SparseVector, or has non-finite weights (unless
        ``allow_nonfinite``).
    """
    line = _fast_line(None, vector, allow_nonfinite)
    if line is not None:
        return line
    header, ids, w = _vector_parts(vector, allow_nonfinite)
    return escape(b"".join((header, ids.tobytes(), w.tobytes())))


def encode_uuid_vector_line(key, vector, allow_nonfinite=False):
    """One line: escaped UUID key, TAB, escaped vector (no trailing newline)."""
    line = _fast_line(key, vector, allow_nonfinite)
    if line is not None:
        return line
    header, ids, w = _vector_parts(vector, allow_nonfinite)
    return escape_line(_key_bytes(key), header, ids, w)


def decode_vector(data, what="vector value"):
    """Inverse of :func:`encode_vector`.

    Checks the framing, the kind byte, and that the lengths agree with the
    entry count exactly; trusts the order of ids and the weights' values
    (see SPEC.md, "What decoding checks").
    """
    vector = _fast_decode(data)
    if vector is not None:
        return vector
    raw = unescape(data, what)
    size = len(raw)
    if size < _HEADER_SIZE:
        raise DecodeError(
            "cannot decode %s: expected a %d-byte header (kind, count), found %d "
            "bytes after unescaping (%.60r)" % (what, _HEADER_SIZE, size, bytes(data))
        )
    kind, n = _HEADER.unpack_from(raw)
    dt = _KINDS.get(kind)
    if dt is None:
        raise DecodeError(
            "cannot decode %s: expected kind byte 0x01 (float64) or 0x02 (float32) "
            "at byte offset 0, found 0x%02X" % (what, kind)
        )
    end_ids = _HEADER_SIZE + 16 * n
    if size != end_ids + dt.itemsize * n:
        raise DecodeError(
            "cannot decode %s: header at byte offset 1 says %d entries of %s, which "
            "take %d bytes after unescaping, found %d bytes"
            % (what, n, dt.name, end_ids + dt.itemsize * n, size)
        )
    return _trusted(_frombuffer(raw, ID_DTYPE, n, _HEADER_SIZE), _frombuffer(raw, dt, n, end_ids))
