"""Record layouts of the mrsparse jobs: raw id keys, *stripes* and *blocks*.

These records are internal to the jobs of :mod:`mrjobs` (their flags name the
jobs' notions: the ``--queries`` family, a block pair's side); the generic
wire format is :mod:`mrcodecs.records`.  :data:`RECORDS` registers every
kind: kind byte, class, encoder, decoder and the key of its JSON twin
(:mod:`mrjobs.protocols`).

The jobs in :mod:`mrjobs` pass three kinds of value between their steps: a
fragment of a posting list (documents and weights of one feature), a partial
stripe (one document's partial products with other documents) and a row of
final scores (and, under ``--max-df`` in the blocks strategy, a task's table
of per-feature vector counts: whole numbers, exact in float64, and in float32
below 2**24).  All have the same shape -- ids, one number per id, and
optionally one per-vector statistic (what the measure needs: nnz, a log-norm) per id and for the
stripe's own key -- so one layout, the *stripe record*, carries them all.

Key layout (:func:`encode_id_key`)
----------------------------------
The 16 big-endian bytes of a UUID, escaped by :func:`mrcodecs.escape`
(16 to 32 bytes on the wire).  Identical to :func:`mrcodecs.encode_uuid`, but
the Python side is the raw 16-byte ``bytes`` object, not a :class:`uuid.UUID`,
which saves building UUID objects on the hot path.

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
from types import MappingProxyType
from typing import Callable, NamedTuple

import numpy as np

from .errors import DecodeError, EncodeError
from .framing import escape, unescape
from .protocols import KeyValueProtocol
from .vector import ID_DTYPE

__all__ = [
    "KIND_STRIPE",
    "FLAG_FLOAT32",
    "FLAG_STATS",
    "FLAG_SELF_STAT",
    "FLAG_QUERY",
    "Stripe",
    "encode_id_key",
    "decode_id_key",
    "encode_stripe",
    "decode_stripe",
    "StripeProtocol",
    "KIND_BLOCK",
    "Block",
    "block_pair_key",
    "block_pair_of",
    "encode_block",
    "decode_block",
    "RecordType",
    "RECORDS",
    "record_type",
    "decode_record",
    "JobProtocol",
]

#: kind byte of a stripe record
KIND_STRIPE = 0x21
#: flag bit: values are float32
FLAG_FLOAT32 = 0x01
#: flag bit: one float64 statistic per entry follows the values
FLAG_STATS = 0x02
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
_MAX_COUNT = 0xFFFFFFFF


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


def encode_id_key(raw):
    """Escaped key bytes of a raw 16-byte id."""
    if len(raw) != 16:
        raise EncodeError("an id key must be 16 bytes, found %d (%.60r)" % (len(raw), raw))
    return escape(raw)


def decode_id_key(data, what="id key"):
    """Inverse of :func:`encode_id_key`: the raw 16 bytes."""
    raw = unescape(data, what)
    if len(raw) != 16:
        raise DecodeError(
            "cannot decode %s: expected 16 bytes after unescaping, found %d "
            "(input of %d bytes: %.60r)" % (what, len(raw), len(data), bytes(data)))
    return bytes(raw)


def encode_stripe(stripe):
    """Escaped bytes of a :class:`Stripe` (layout in the module docstring)."""
    ids, values, stats = stripe.ids, stripe.values, stripe.stats
    n = ids.shape[0]
    if ids.dtype != ID_DTYPE or values.shape[0] != n:
        raise EncodeError(
            "malformed Stripe: %d ids of dtype %s, %d values" % (n, ids.dtype, values.shape[0]))
    if n > _MAX_COUNT:
        raise EncodeError("a stripe holds at most %d entries, found %d" % (_MAX_COUNT, n))
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
    return _decode_stripe_raw(unescape(data, what), what)


def _header(raw, what, header, fields, kind, name, known_flags):
    """The unpacked header of a record (kind, flags, counts...), after the
    checks every record kind makes: long enough, its kind byte, no unknown
    flag bits."""
    size = len(raw)
    if size < header.size:
        raise DecodeError(
            "cannot decode %s: expected a %d-byte header (%s), found %d bytes after "
            "unescaping (%.60r)" % (what, header.size, fields, size, bytes(raw[:60])))
    values = header.unpack_from(raw)
    if values[0] != kind:
        raise DecodeError(
            "cannot decode %s: expected kind byte 0x%02X (%s) at byte offset 0, "
            "found 0x%02X" % (what, kind, name, values[0]))
    flags = values[1]
    if flags & ~known_flags:
        raise DecodeError(
            "cannot decode %s: unknown flag bits 0x%02X in flags byte 0x%02X at byte "
            "offset 1" % (what, flags & ~known_flags, flags))
    return values


def _decode_stripe_raw(raw, what):
    size = len(raw)
    _, flags, n = _header(raw, what, _HEADER, "kind, flags, count", KIND_STRIPE, "stripe",
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


# -- block records -----------------------------------------------------------

#: kind byte of a block record
KIND_BLOCK = 0x22
#: flag bit of a block record: the vectors are the pair's second (column) side
FLAG_SIDE = 0x04
_BLOCK_FLAGS = FLAG_FLOAT32 | FLAG_STATS | FLAG_SIDE
_BLOCK_HEADER = struct.Struct(">BBII")
_BLOCK_HEADER_SIZE = _BLOCK_HEADER.size  # 10
_U32 = np.dtype("<u4")
_BLOCK_KEY = struct.Struct(">8xII")


class Block:
    """A block of whole sparse vectors: the value the blocked strategy ships
    to the reducer of a block pair.

    Parameters
    ----------
    ids : numpy.ndarray
        ``S16`` array of the n vector ids.
    lengths : numpy.ndarray
        uint32 (or any integer) array: entries of each vector.
    features : numpy.ndarray
        ``S16`` array of the feature ids of all vectors, vector after vector
        (ascending within a vector).
    weights : numpy.ndarray
        float64 or float32, one per feature entry.
    stats : numpy.ndarray or None
        float64, one statistic per vector.
    side : int
        0 if the vectors are the pair's first (row) block, 1 for the second
        (column) block.

    No checks are made: the jobs build blocks from arrays they produced.
    """

    __slots__ = ("ids", "lengths", "features", "weights", "stats", "side")

    def __init__(self, ids, lengths, features, weights, stats=None, side=0):
        self.ids = ids
        self.lengths = lengths
        self.features = features
        self.weights = weights
        self.stats = stats
        self.side = side

    def __len__(self):
        return self.ids.shape[0]

    @property
    def nnz(self):
        return self.features.shape[0]

    def __eq__(self, other):
        if not isinstance(other, Block):
            return NotImplemented
        return (
            np.array_equal(self.ids, other.ids)
            and np.array_equal(self.lengths, other.lengths)
            and np.array_equal(self.features, other.features)
            and self.weights.dtype == other.weights.dtype
            and np.array_equal(self.weights, other.weights)
            and (self.stats is None) == (other.stats is None)
            and (self.stats is None or np.array_equal(self.stats, other.stats))
            and self.side == other.side
        )

    __hash__ = None

    def __repr__(self):
        return "Block(n=%d, nnz=%d, dtype=%s, stats=%s, side=%d)" % (
            len(self), self.nnz, self.weights.dtype.name, self.stats is not None, self.side)


def block_pair_key(i, j):
    """The raw 16-byte key of the block pair ``(i, j)``: 8 zero bytes, then
    ``i`` and ``j`` as unsigned 32-bit big-endian (pairs sort by ``i``, then
    ``j``).  On the wire it is escaped like any id key.

    >>> block_pair_key(1, 2).hex()
    '00000000000000000000000100000002'
    >>> block_pair_of(block_pair_key(1, 2))
    (1, 2)
    """
    return _BLOCK_KEY.pack(i, j)


def block_pair_of(raw):
    """``(i, j)`` of a raw 16-byte block pair key."""
    try:
        return _BLOCK_KEY.unpack(raw)
    except struct.error:
        raise DecodeError("a block pair key is 16 bytes, found %d (%.60r)"
                          % (len(raw), bytes(raw))) from None


def encode_block(block):
    """Escaped bytes of a :class:`Block` (layout in codecs/SPEC.md, 3.4)."""
    ids, lengths, feats, w, stats = (block.ids, block.lengths, block.features, block.weights,
                                     block.stats)
    n, nnz = ids.shape[0], feats.shape[0]
    if ids.dtype != ID_DTYPE or feats.dtype != ID_DTYPE:
        raise EncodeError("malformed Block: ids of dtype %s, features of dtype %s (expected "
                          "S16)" % (ids.dtype, feats.dtype))
    if lengths.shape[0] != n or w.shape[0] != nnz:
        raise EncodeError("malformed Block: %d ids, %d lengths, %d features, %d weights"
                          % (n, lengths.shape[0], nnz, w.shape[0]))
    if n > _MAX_COUNT or nnz > _MAX_COUNT:
        raise EncodeError("a block holds at most %d vectors and %d entries, found %d and %d"
                          % (_MAX_COUNT, _MAX_COUNT, n, nnz))
    lengths = np.asarray(lengths)
    if n and (lengths.min() < 0 or int(lengths.sum(dtype=np.uint64)) != nnz):
        raise EncodeError("malformed Block: lengths add up to %d, not to the %d entries"
                          % (int(lengths.sum()), nnz))
    if w.dtype == _F64:
        flags = 0
    elif w.dtype == _F32:
        flags = FLAG_FLOAT32
    else:
        raise EncodeError("block weights must be float64 or float32, found %s" % w.dtype)
    if block.side not in (0, 1):
        raise EncodeError("a block's side is 0 or 1, found %r" % (block.side,))
    if block.side:
        flags |= FLAG_SIDE
    parts = [b"", ids.tobytes(), lengths.astype(_U32).tobytes(), feats.tobytes(), w.tobytes()]
    if stats is not None:
        if stats.shape[0] != n:
            raise EncodeError("malformed Block: %d ids, %d stats" % (n, stats.shape[0]))
        flags |= FLAG_STATS
        parts.append(np.asarray(stats, _F64).tobytes())
    parts[0] = _BLOCK_HEADER.pack(KIND_BLOCK, flags, n, nnz)
    return escape(b"".join(parts))


def decode_block(data, what="block value"):
    """Inverse of :func:`encode_block`.

    Raises
    ------
    DecodeError
        Bad escaping, wrong kind byte, unknown flags, a length that differs
        from what the header announces, lengths that do not add up to the
        header's entry count, or feature ids that are not ascending within
        a vector.
    """
    return _decode_block_raw(unescape(data, what), what)


def _decode_block_raw(raw, what):
    size = len(raw)
    _, flags, n, nnz = _header(raw, what, _BLOCK_HEADER, "kind, flags, vectors, entries",
                               KIND_BLOCK, "block", _BLOCK_FLAGS)
    dt = _F32 if flags & FLAG_FLOAT32 else _F64
    has_stats = flags & FLAG_STATS
    expected = (_BLOCK_HEADER_SIZE + n * (16 + 4 + (8 if has_stats else 0))
                + nnz * (16 + dt.itemsize))
    if size != expected:
        raise DecodeError(
            "cannot decode %s: header says %d vectors and %d entries with flags 0x%02X, "
            "which take %d bytes after unescaping, found %d"
            % (what, n, nnz, flags, expected, size))
    pos = _BLOCK_HEADER_SIZE
    ids = np.frombuffer(raw, ID_DTYPE, n, pos)
    pos += 16 * n
    lengths = np.frombuffer(raw, _U32, n, pos)
    pos += 4 * n
    total = int(lengths.sum(dtype=np.uint64))
    if total != nnz:
        raise DecodeError(
            "cannot decode %s: the %d vector lengths at byte offset %d add up to %d "
            "entries, but the header says %d" % (what, n, _BLOCK_HEADER_SIZE + 16 * n,
                                                 total, nnz))
    feats = np.frombuffer(raw, ID_DTYPE, nnz, pos)
    _check_ascending(raw, pos, nnz, lengths, what)
    pos += 16 * nnz
    w = np.frombuffer(raw, dt, nnz, pos)
    pos += dt.itemsize * nnz
    stats = np.frombuffer(raw, _F64, n, pos) if has_stats else None
    return Block(ids, lengths, feats, w, stats, 1 if flags & FLAG_SIDE else 0)


def _check_ascending(raw, pos, nnz, lengths, what):
    """Feature ids strictly ascending within each vector of a block record
    (one vectorised comparison of neighbouring ``S16`` ids, as unsigned
    bytes): lengths that add up but are shifted between vectors put a
    vector's ids out of order, so such a record never decodes."""
    if nnz < 2:
        return
    feats = np.frombuffer(raw, ID_DTYPE, nnz, pos)
    ok = feats[1:] > feats[:-1]
    starts = np.cumsum(lengths[:-1], dtype=np.int64)
    starts = starts[(starts > 0) & (starts < nnz)]
    ok[starts - 1] = True  # a vector's first id follows another vector's last
    if not ok.all():
        e = int(np.argmin(ok)) + 1
        v = int(np.searchsorted(np.cumsum(lengths, dtype=np.int64), e, side="right"))
        raise DecodeError(
            "cannot decode %s: feature id %d (of vector %d) at byte offset %d after "
            "unescaping is not greater than the one before it: a vector's ids must be "
            "ascending and unique (lengths shifted between vectors?)"
            % (what, e, v, pos + 16 * e))


# -- the registry of the records -----------------------------------------------

class RecordType(NamedTuple):
    """One kind of job-internal record: what tells it and how it is written.

    Attributes
    ----------
    kind : int
        Its first byte (codecs/SPEC.md, 3.3 and 3.4).
    cls : type
        The Python value it carries.
    encode : callable
        ``encode(value) -> bytes``, escaped.
    decode_raw : callable
        ``decode_raw(unescaped bytes, what) -> value``.
    json_key : str
        The member that marks it in its JSON twin (``mrjobs.protocols``).
    """

    kind: int
    cls: type
    encode: Callable
    decode_raw: Callable
    json_key: str


#: kind byte -> record type: the one place where the records are told apart
RECORDS = MappingProxyType({r.kind: r for r in (
    RecordType(KIND_STRIPE, Stripe, encode_stripe, _decode_stripe_raw, "w"),
    RecordType(KIND_BLOCK, Block, encode_block, _decode_block_raw, "b"),
)})


def record_type(value):
    """The :class:`RecordType` of a value (a :class:`Stripe` when it is none
    of them: encoding then raises the stripe's :class:`EncodeError`)."""
    for r in RECORDS.values():
        if isinstance(value, r.cls):
            return r
    return RECORDS[KIND_STRIPE]


def decode_record(data, what="record value"):
    """A record of any registered kind, told apart by its kind byte (an
    unknown kind is reported as a bad stripe)."""
    raw = unescape(data, what)
    r = RECORDS.get(raw[0]) if len(raw) else None
    return (r or RECORDS[KIND_STRIPE]).decode_raw(raw, what)


class JobProtocol(KeyValueProtocol):
    """mrjob protocol of the jobs' internal steps: a raw 16-byte key (a UUID,
    or a block pair key), TAB, a :class:`Stripe` or a :class:`Block`.

    Examples
    --------
    >>> import numpy as np
    >>> b = Block(np.array([b"\\x01" * 16], "S16"), np.array([1], "u4"),
    ...           np.array([b"\\x0a" * 16], "S16"), np.array([2.5]))
    >>> key, value = JobProtocol().read(JobProtocol().write(b"\\x00" * 16, b))
    >>> value == b
    True
    """

    decode_key = staticmethod(decode_id_key)
    decode_value = staticmethod(decode_record)

    def write(self, key, value):
        return b"%s\t%s" % (encode_id_key(key), record_type(value).encode(value))
