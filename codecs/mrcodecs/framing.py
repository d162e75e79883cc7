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

:func:`escape` and :func:`unescape` use the twin chosen in :mod:`mrcodecs._impl`
(the C extension ``_mrcodecs_speedups`` when importable, unless
``MRCODECS_PUREPYTHON`` is set); :func:`py_escape` and :func:`py_unescape` are
always the pure-Python twin, which gives identical results.
"""
from . import _impl, _pyimpl
from .errors import DecodeError

__all__ = [
    "escape",
    "unescape",
    "escape_line",
    "py_escape",
    "py_unescape",
    "ESCAPE",
    "SPEEDUPS",
]

ESCAPE = _pyimpl.ESCAPE

#: the pure-Python twin's functions, whichever twin is in use (benchmarks compare them)
py_escape = _pyimpl.escape

#: the twin in use, chosen once in :mod:`mrcodecs._impl`
escape = _impl.escape
escape_line = _impl.escape_line
_unescape_or_offset = _impl.unescape
#: True when the C twin is in use
SPEEDUPS = _impl.SPEEDUPS


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
    return _checked(_pyimpl.unescape, data, what)


def unescape(data, what="input"):
    """Undo :func:`escape`; raise :class:`DecodeError` on malformed input.

    ``what`` names the thing decoded in the error message.  Every decoder of
    mrcodecs unescapes through this function.
    """
    return _checked(_unescape_or_offset, data, what)
