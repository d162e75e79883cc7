"""The stripe record: ids, one number per id, optional per-vector statistics.

The jobs in :mod:`mrjobs` pass three kinds of value between their steps: a
fragment of a posting list (documents and weights of one feature), a partial
stripe (one document's partial products with other documents) and a row of
final scores (and, under ``--max-df`` in the blocks strategy, a task's table
of per-feature vector counts: whole numbers, exact in float64, and in float32
below 2**24).  All have the same shape -- ids, one number per id, and
optionally one per-vector statistic (what the measure needs: nnz, a log-norm) per id and for the
stripe's own key -- so one layout, the *stripe record*, carries them all.
Its key is a raw id (:func:`mrcodecs.jobframing.encode_id_key`).

Stripe record layout (:func:`encode_stripe`), before escaping
-------------------------------------------------------------
======  =========  ===========================================================
offset  size       content
======  =========  ===========================================================
0       1          kind byte ``0x21`` (:data:`KIND_STRIPE`)
1       1          flags: bit 0 (``0x01``) values are float32 (else float64);
                   bit 1 (``0x02``) per-entry statistics present;
                   bit 2 (``0x04``) own statistic present;
                   bit 3 (``0x08``) the record belongs to the *query* family;
                   bits 4-7 must be 0
2       4          n, the number of entries, unsigned 32-bit big-endian
6       8          own statistic, float64 little-endian (only if bit 2)
next    16 n       ids, 16 big-endian UUID bytes each (no order is implied:
                   a stripe's ids are sorted ascending and unique except
                   where a job says otherwise)
next    4 n / 8 n  values, float32 / float64 little-endian
next    8 n        statistics, float64 little-endian (only if bit 1)
======  =========  ===========================================================

The whole record is then escaped by :func:`mrcodecs.escape`, so it holds no
TAB, LF or CR byte.  Decoding checks the kind byte, the flags and that the
length equals exactly what the header announces.

Examples
--------
>>> import numpy as np
>>> s = Stripe(np.array([b"\\x09" * 16], dtype="S16"), np.array([0.5]))
>>> line = StripeProtocol().write(b"\\x01" * 16, s)
>>> b"\\t" in line.partition(b"\\t")[2]
False
>>> key, value = StripeProtocol().read(line)
>>> key == b"\\x01" * 16, value.values.tolist()
(True, [0.5])
"""
import struct

import numpy as np

from .errors import DecodeError, EncodeError
from .framing import escape, unescape
from .jobframing import (FLAG_FLOAT32, FLAG_STATS, MAX_COUNT, check_header, decode_id_key,
                         encode_id_key)
from .protocols import KeyValueProtocol
from .vector import ID_DTYPE

__all__ = [
    "KIND_STRIPE",
    "FLAG_SELF_STAT",
    "FLAG_QUERY",
    "Stripe",
    "encode_stripe",
    "decode_stripe",
    "decode_stripe_raw",
    "StripeProtocol",
]

#: kind byte of a stripe record
KIND_STRIPE = 0x21
#: flag bit: the record's own float64 statistic follows the header
FLAG_SELF_STAT = 0x04
#: flag bit: the record belongs to the query family (``--queries``)
FLAG_QUERY = 0x08
_KNOWN_FLAGS = FLAG_FLOAT32 | FLAG_STATS | FLAG_SELF_STAT | FLAG_QUERY

_HEADER = struct.Struct(">BBI")
_HEADER_SIZE = _HEADER.size  # 6
_F64 = np.dtype("<f8")
_F32 = np.dtype("<f4")
_SELF = struct.Struct("<d")


class Stripe:
    """Ids with one value each, plus optional per-vector statistics.

    Parameters
    ----------
    ids : numpy.ndarray
        ``S16`` array of UUID bytes.
    values : numpy.ndarray
        float64 or float32, one per id.
    stats : numpy.ndarray or None
        float64, one per id (the statistic of each id's vector).
    self_stat : float or None
        The statistic of the vector the record is keyed by.
    query : bool
        True for records of the query family.

    No checks are made: the jobs build stripes from arrays they produced.
    """

    __slots__ = ("ids", "values", "stats", "self_stat", "query")

    def __init__(self, ids, values, stats=None, self_stat=None, query=False):
        self.ids = ids
        self.values = values
        self.stats = stats
        self.self_stat = self_stat
        self.query = query

    def __len__(self):
        return self.ids.shape[0]

    def __eq__(self, other):
        if not isinstance(other, Stripe):
            return NotImplemented
        return (
            np.array_equal(self.ids, other.ids)
            and self.values.dtype == other.values.dtype
            and np.array_equal(self.values, other.values)
            and (self.stats is None) == (other.stats is None)
            and (self.stats is None or np.array_equal(self.stats, other.stats))
            and self.self_stat == other.self_stat
            and bool(self.query) == bool(other.query)
        )

    __hash__ = None

    def __repr__(self):
        return "Stripe(n=%d, dtype=%s, stats=%s, self_stat=%r, query=%r)" % (
            len(self), self.values.dtype.name, self.stats is not None,
            self.self_stat, self.query)


def encode_stripe(stripe):
    """Escaped bytes of a :class:`Stripe` (layout in the module docstring)."""
    ids, values, stats = stripe.ids, stripe.values, stripe.stats
    n = ids.shape[0]
    if ids.dtype != ID_DTYPE or values.shape[0] != n:
        raise EncodeError(
            "malformed Stripe: %d ids of dtype %s, %d values" % (n, ids.dtype, values.shape[0]))
    if n > MAX_COUNT:
        raise EncodeError("a stripe holds at most %d entries, found %d" % (MAX_COUNT, n))
    if values.dtype == _F64:
        flags = 0
    elif values.dtype == _F32:
        flags = FLAG_FLOAT32
    else:
        raise EncodeError("stripe values must be float64 or float32, found %s" % values.dtype)
    parts = [b"", b"", ids.tobytes(), values.tobytes()]
    if stripe.self_stat is not None:
        flags |= FLAG_SELF_STAT
        parts[1] = _SELF.pack(stripe.self_stat)
    if stats is not None:
        if stats.shape[0] != n:
            raise EncodeError("malformed Stripe: %d ids, %d stats" % (n, stats.shape[0]))
        flags |= FLAG_STATS
        parts.append(np.asarray(stats, _F64).tobytes())
    if stripe.query:
        flags |= FLAG_QUERY
    parts[0] = _HEADER.pack(KIND_STRIPE, flags, n)
    return escape(b"".join(parts))


def decode_stripe(data, what="stripe value"):
    """Inverse of :func:`encode_stripe`.

    Raises
    ------
    DecodeError
        Bad escaping, wrong kind byte, unknown flags, or a length that differs
        from what the header announces.
    """
    return decode_stripe_raw(unescape(data, what), what)


def decode_stripe_raw(raw, what):
    """:func:`decode_stripe` of bytes already unescaped."""
    size = len(raw)
    _, flags, n = check_header(raw, what, _HEADER, "kind, flags, count", KIND_STRIPE, "stripe",
                               _KNOWN_FLAGS)
    dt = _F32 if flags & FLAG_FLOAT32 else _F64
    pos = _HEADER_SIZE
    self_stat = None
    if flags & FLAG_SELF_STAT:
        pos += 8
    has_stats = flags & FLAG_STATS
    expected = pos + n * (16 + dt.itemsize + (8 if has_stats else 0))
    if size != expected:
        raise DecodeError(
            "cannot decode %s: header says %d entries with flags 0x%02X, which take %d "
            "bytes after unescaping, found %d" % (what, n, flags, expected, size))
    if flags & FLAG_SELF_STAT:
        self_stat = _SELF.unpack_from(raw, _HEADER_SIZE)[0]
    ids = np.frombuffer(raw, ID_DTYPE, n, pos)
    pos += 16 * n
    values = np.frombuffer(raw, dt, n, pos)
    stats = np.frombuffer(raw, _F64, n, pos + dt.itemsize * n) if has_stats else None
    return Stripe(ids, values, stats, self_stat, bool(flags & FLAG_QUERY))


class StripeProtocol(KeyValueProtocol):
    """mrjob protocol: raw 16-byte id key, TAB, :class:`Stripe` value.

    Reducer input arrives grouped by key, so the last decoded key is reused
    when the next line starts with the same key bytes.
    """

    decode_key = staticmethod(decode_id_key)
    decode_value = staticmethod(decode_stripe)

    def write(self, key, value):
        return b"%s\t%s" % (encode_id_key(key), encode_stripe(value))
