"""What the job records share: the raw id key, the common flag bits and the
checks of a record header.

The job records (:mod:`mrcodecs.stripe_record`, :mod:`mrcodecs.block_record`,
told apart in :mod:`mrcodecs.jobwire`) are keyed by a raw 16-byte id and
start with a kind byte and a flags byte; this module holds what they have in
common, beneath both.

Key layout (:func:`encode_id_key`)
----------------------------------
The 16 big-endian bytes of a UUID, escaped by :func:`mrcodecs.escape`
(16 to 32 bytes on the wire).  Identical to :func:`mrcodecs.encode_uuid`, but
the Python side is the raw 16-byte ``bytes`` object, not a :class:`uuid.UUID`,
which saves building UUID objects on the hot path.

Examples
--------
>>> encode_id_key(b"\\x09" * 16) == b"\\x0b0" * 16
True
>>> decode_id_key(encode_id_key(b"\\x01" * 16)) == b"\\x01" * 16
True
"""
from .errors import DecodeError, EncodeError
from .framing import escape, unescape

__all__ = [
    "FLAG_FLOAT32",
    "FLAG_STATS",
    "MAX_COUNT",
    "encode_id_key",
    "decode_id_key",
    "check_header",
]

#: flag bit: values are float32
FLAG_FLOAT32 = 0x01
#: flag bit: float64 statistics follow the values (one per entry of a stripe,
#: one per vector of a block)
FLAG_STATS = 0x02
#: the most entries (or vectors) a record's unsigned 32-bit counts allow
MAX_COUNT = 0xFFFFFFFF


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


def check_header(raw, what, header, fields, kind, name, known_flags):
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
