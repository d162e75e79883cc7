"""Line-safe framing: the escaping that keeps TAB, LF and CR off the wire.

Hadoop Streaming ends a record at LF, CR or CRLF and splits key from value at
the first TAB; mrjob strips trailing CR/LF bytes from every line.  Encoded keys
and values therefore must not contain bytes 0x09 (TAB), 0x0A (LF) or 0x0D (CR).

The five bytes 0x09..0x0D are each written as two bytes: the escape byte 0x0B
followed by the byte plus 0x27, i.e. one of ``0 1 2 3 4`` (0x30..0x34)::

    0x09 -> 0B 30    0x0A -> 0B 31    0x0B -> 0B 32    0x0C -> 0B 33    0x0D -> 0B 34

Escaping 0x0B (the escape byte) and 0x0C (harmless in itself) as well keeps the
escaped range contiguous, which makes the escaping preserve unsigned byte
order: ``a < b`` if and only if ``escape(a) < escape(b)``.  Shuffle keys
therefore sort in the same order as the raw bytes (UUID order for UUIDs).
On random bytes, 5 of 256 values grow by one byte: 1.95% on average.

:func:`escape` and :func:`unescape` use the C twin ``_mrcodecs_speedups`` when it
is importable (it is built by ``pip install``), else the pure-Python
:func:`py_escape` and :func:`py_unescape`, which give identical results.
"""
import numpy as np

from .errors import DecodeError

__all__ = [
    "escape",
    "unescape",
    "escape_line",
    "py_escape",
    "py_unescape",
    "py_escape_line",
    "ESCAPE",
    "SPEEDUPS",
]

ESCAPE = 0x0B
_SHIFT = 0x27
_LO, _HI = 0x09, 0x0D
_ESCAPED = bytes(range(_LO, _HI + 1))

_U8 = np.uint8


def py_escape(data):
    """Escape ``data`` (bytes-like) so that it contains no TAB, LF or CR byte."""
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


def py_escape_line(key, *value_parts):
    """``escape(key) + TAB + escape(b"".join(value_parts))``; parts are bytes-like."""
    return b"%s\t%s" % (py_escape(key), py_escape(b"".join(value_parts)))


def _py_unescape_or_offset(data):
    """Return the unescaped bytes, or the int offset of the first bad byte."""
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


def _offset_error(data, offset, what):
    found = data[offset:offset + 2]
    if data[offset] != ESCAPE:
        problem = "raw byte 0x%02X, which the framing never writes" % data[offset]
    elif offset + 1 >= len(data):
        problem = "escape byte 0x0B at the end of the input"
    else:
        problem = "escape byte 0x0B followed by 0x%02X" % data[offset + 1]
    return DecodeError(
        "cannot decode %s: expected an escape sequence 0x0B 0x30..0x34 or a byte "
        "outside 0x09..0x0D, found %s (%r) at byte offset %d"
        % (what, problem, found, offset)
    )


def _checked(unescape_or_offset, data, what):
    r = unescape_or_offset(data)
    if r.__class__ is int:
        raise _offset_error(bytes(data), r, what)
    return r


def py_unescape(data, what="input"):
    """Undo :func:`py_escape`; raise :class:`DecodeError` on malformed input."""
    return _checked(_py_unescape_or_offset, bytes(data), what)


try:
    import _mrcodecs_speedups as _c
except ImportError:  # no compiler at install time, or shipped as a zip
    _c = None

#: True when the C twin of this module is in use.
SPEEDUPS = _c is not None

if _c is not None:
    escape = _c.escape
    escape_line = _c.escape_line
    _unescape_or_offset = _c.unescape
else:
    escape = py_escape
    escape_line = py_escape_line
    _unescape_or_offset = _py_unescape_or_offset


def unescape(data, what="input"):
    """Undo :func:`escape`; raise :class:`DecodeError` on malformed input.

    ``what`` names the thing decoded in the error message.  Every decoder of
    mrcodecs unescapes through this function.
    """
    return _checked(_unescape_or_offset, data, what)
