"""The block record: whole sparse vectors, the value the blocked strategy
ships to the reducer of a block pair, keyed by a block pair key
(:func:`block_pair_key`).

Its layout is in codecs/SPEC.md, 3.4: a kind byte ``0x22`` (:data:`KIND_BLOCK`),
flags (bit 0 float32 weights, bit 1 per-vector statistics, bit 2 the pair's
second side, bit 3 feature ids as their places in a table both ends hold),
the vector and entry counts, then the ids, the lengths, the feature ids (or
their places, each vector's as LEB128 varints of their differences), the
weights and the statistics; the whole record escaped by
:func:`mrcodecs.escape`.

Examples
--------
>>> import numpy as np
>>> b = Block(np.array([b"\\x01" * 16], "S16"), np.array([1], "u4"),
...           np.array([b"\\x0a" * 16], "S16"), np.array([2.5]))
>>> decode_block(encode_block(b)) == b
True
"""
import struct

import numpy as np

from . import _impl
from .errors import DecodeError, EncodeError
from .framing import escape, unescape
from .jobframing import FLAG_FLOAT32, FLAG_STATS, MAX_COUNT, check_header
from .vector import ID_DTYPE

__all__ = [
    "KIND_BLOCK",
    "FLAG_SIDE",
    "FLAG_INDEXED",
    "Block",
    "block_pair_key",
    "block_pair_of",
    "encode_block",
    "decode_block",
    "decode_block_raw",
    "encode_places",
    "decode_places",
]

_F64 = np.dtype("<f8")
_F32 = np.dtype("<f4")

#: kind byte of a block record
KIND_BLOCK = 0x22
#: flag bit of a block record: the vectors are the pair's second (column) side
FLAG_SIDE = 0x04
#: flag bit of a block record: each feature id is its place in a table of
#: feature ids sorted ascending that both ends hold (the prefix strategy's df
#: table), not its 16 bytes: a vector's places ascend, and travel as LEB128
#: varints of their differences (the first from 0), after a count of their
#: bytes (:func:`encode_places`)
FLAG_INDEXED = 0x08
_BLOCK_FLAGS = FLAG_FLOAT32 | FLAG_STATS | FLAG_SIDE | FLAG_INDEXED
_BLOCK_HEADER = struct.Struct(">BBII")
_BLOCK_HEADER_SIZE = _BLOCK_HEADER.size  # 10
_U32 = np.dtype("<u4")
_BLOCK_KEY = struct.Struct(">8xII")
_PLACES_SIZE = struct.Struct(">I")
#: bytes of a place's varint at most (a place is below 2**32)
_MAX_VARINT = 5


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
        (ascending within a vector); or uint32, their places in a sorted table
        of ids that both ends hold (:data:`FLAG_INDEXED`).
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
    if ids.dtype != ID_DTYPE or (feats.dtype != ID_DTYPE and feats.dtype != _U32):
        raise EncodeError("malformed Block: ids of dtype %s, features of dtype %s (expected "
                          "S16, and S16 or uint32)" % (ids.dtype, feats.dtype))
    if lengths.shape[0] != n or w.shape[0] != nnz:
        raise EncodeError("malformed Block: %d ids, %d lengths, %d features, %d weights"
                          % (n, lengths.shape[0], nnz, w.shape[0]))
    if n > MAX_COUNT or nnz > MAX_COUNT:
        raise EncodeError("a block holds at most %d vectors and %d entries, found %d and %d"
                          % (MAX_COUNT, MAX_COUNT, n, nnz))
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
    if feats.dtype == _U32:  # the places as varints, after their byte count
        flags |= FLAG_INDEXED
        places = encode_places(feats, lengths)
        feat_bytes = _PLACES_SIZE.pack(len(places)) + places
    else:
        feat_bytes = feats.tobytes()
    parts = [b"", ids.tobytes(), lengths.astype(_U32).tobytes(), feat_bytes, w.tobytes()]
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
    return decode_block_raw(unescape(data, what), what)


def decode_block_raw(raw, what):
    """:func:`decode_block` of bytes already unescaped."""
    size = len(raw)
    _, flags, n, nnz = check_header(raw, what, _BLOCK_HEADER, "kind, flags, vectors, entries",
                                    KIND_BLOCK, "block", _BLOCK_FLAGS)
    dt = _F32 if flags & FLAG_FLOAT32 else _F64
    has_stats = flags & FLAG_STATS
    indexed = flags & FLAG_INDEXED
    pos = _BLOCK_HEADER_SIZE + n * 20
    if indexed:  # the places' bytes, then the places
        if size < pos + 4:
            raise DecodeError("cannot decode %s: %d bytes after unescaping end before the "
                              "byte count of its feature places" % (what, size))
        feat_bytes = 4 + _PLACES_SIZE.unpack_from(raw, pos)[0]
    else:
        feat_bytes = 16 * nnz
    expected = (_BLOCK_HEADER_SIZE + n * (16 + 4 + (8 if has_stats else 0))
                + feat_bytes + nnz * dt.itemsize)
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
    if indexed:
        feats = decode_places(memoryview(raw)[pos + 4:pos + feat_bytes], lengths, pos + 4,
                              what)
    else:
        feats = np.frombuffer(raw, ID_DTYPE, nnz, pos)
        _check_ascending(feats, pos, lengths, what)
    pos += feat_bytes
    w = np.frombuffer(raw, dt, nnz, pos)
    pos += dt.itemsize * nnz
    stats = np.frombuffer(raw, _F64, n, pos) if has_stats else None
    return Block(ids, lengths, feats, w, stats, 1 if flags & FLAG_SIDE else 0)


def _check_ascending(feats, pos, lengths, what):
    """Feature ids (at byte offset ``pos``) strictly ascending within each
    vector of a block record (one vectorised comparison of neighbouring
    ``S16`` ids, as unsigned bytes, or places): lengths that add up but are
    shifted between vectors put a vector's ids out of order, so such a
    record never decodes."""
    nnz = feats.shape[0]
    if nnz < 2:
        return
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
            % (what, e, v, pos + feats.dtype.itemsize * e))


def encode_places(places, lengths):
    """Bytes of ``places`` (uint32, each vector's ``lengths[i]`` ascending):
    each vector's first place, then the differences to the one before, as
    LEB128 varints (7 bits a byte, the least significant first; the top bit
    of each byte but a value's last set).

    >>> encode_places(np.array([5, 300, 301], np.uint32), np.array([2, 1])).hex()
    '05a702ad02'
    """
    data = _impl.encode_places(np.ascontiguousarray(places, np.uint32),
                               np.ascontiguousarray(lengths, np.uint32))
    if data is None:
        raise EncodeError("malformed Block: a vector's feature places are not ascending, "
                          "or its lengths do not add up to them")
    return data


def decode_places(data, lengths, pos, what):
    """The uint32 places of :func:`encode_places`'s bytes ``data`` (at byte
    offset ``pos`` of the record), for vectors of ``lengths``.

    Raises
    ------
    DecodeError
        Not one varint an entry, a varint of more than 5 bytes or past
        2**32, or a vector's places not ascending (a difference of 0).
    """
    lengths = np.ascontiguousarray(lengths, np.uint32)
    out = _impl.decode_places(data, lengths)
    if out is None:
        _places_error(bytes(data), lengths, pos, what)
    return np.frombuffer(out, np.uint32).astype(_U32, copy=False)


def _places_error(data, lengths, pos, what):
    """Raise the DecodeError of malformed places (read one byte at a time:
    only a record that does not decode comes here)."""
    nnz = int(lengths.sum(dtype=np.uint64))
    whole = sum(1 for b in data if b < 0x80)
    if whole != nnz or (data and data[-1] >= 0x80):
        raise DecodeError("cannot decode %s: its %d bytes of feature places at byte offset %d "
                          "after unescaping hold %d whole varints, not the %d entries"
                          % (what, len(data), pos, whole, nnz))
    at, e = 0, -1
    for v, n in enumerate(lengths.tolist()):
        place = 0
        for i in range(n):
            start, x, k, e = at, 0, 0, e + 1
            while True:
                b = data[at]
                x |= (b & 0x7F) << (7 * k)
                at, k = at + 1, k + 1
                if b < 0x80:
                    break
            if k > _MAX_VARINT:
                raise DecodeError("cannot decode %s: the varint of entry %d at byte offset %d "
                                  "is %d bytes long (at most %d)"
                                  % (what, e, pos + start, k, _MAX_VARINT))
            if i and not x:
                raise DecodeError(
                    "cannot decode %s: feature id %d (of vector %d) at byte offset %d after "
                    "unescaping is not greater than the one before it: a vector's ids must "
                    "be ascending and unique (lengths shifted between vectors?)"
                    % (what, e, v, pos + start))
            place += x
            if place >= 1 << 32:
                raise DecodeError("cannot decode %s: the place of entry %d (at byte offset %d) "
                                  "is past 2**32" % (what, e, pos + start))
    raise AssertionError("the places' twin refused places with no fault")  # pragma: no cover
