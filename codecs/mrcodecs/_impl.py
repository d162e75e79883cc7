"""The one seam between mrcodecs and the twins of its hot functions.

The C twin is the extension module ``_mrcodecs_speedups``
(``codecs/mrcodecs/_speedups.c``, built by ``pip install`` when a compiler is
there); the pure-Python twin is :mod:`mrcodecs._pyimpl`.  Both define every
name in :data:`FUNCTIONS` with the same contracts (documented in
``_pyimpl``), and give identical bytes.

The choice is made here, once, when mrcodecs is imported: the C twin when it
is importable, else the Python twin.  Setting the environment variable
``MRCODECS_PUREPYTHON`` to anything but ``""`` or ``"0"`` forces the Python
twin (as ``MSGPACK_PUREPYTHON`` does for msgpack).  Every other module of
mrcodecs takes these functions from here and from nowhere else.

Examples
--------
>>> from mrcodecs import _impl
>>> _impl.NAME in ("c", "python") and _impl.SPEEDUPS == (_impl.NAME == "c")
True
>>> _impl.escape(b"a\\tb")
b'a\\x0b0b'
"""
import importlib
import os

from . import _pyimpl

__all__ = ["FUNCTIONS", "NAME", "REASON", "SPEEDUPS", "load_extension", "twin"] + [
    "escape", "escape_line", "unescape", "uuid_from_bytes", "encode_vector_line", "decode_vector",
    "encode_places", "decode_places"]

#: the functions each twin defines
FUNCTIONS = ("escape", "escape_line", "unescape", "uuid_from_bytes", "encode_vector_line",
             "decode_vector", "encode_places", "decode_places")


def purepython_forced(environ=os.environ):
    """True when ``MRCODECS_PUREPYTHON`` asks for the pure-Python twin."""
    return environ.get("MRCODECS_PUREPYTHON", "") not in ("", "0")


def load_extension(name, functions):
    """``(module, reason)``: the C extension module ``name`` when it is wanted
    (``MRCODECS_PUREPYTHON`` unset), importable and defines every name in
    ``functions``, else ``(None, why not)``.  The one way mrsparse loads its C
    code: this module for mrcodecs' twins, :mod:`mrjobs._c` for the jobs' kernels."""
    if purepython_forced():
        return None, "MRCODECS_PUREPYTHON is set"
    try:
        c = importlib.import_module(name)
    except ImportError as e:  # no compiler at install time, or shipped in a zip
        return None, "the C extension is not importable (%s)" % e
    missing = [f for f in functions if not hasattr(c, f)]
    if missing:  # an extension left over from older sources
        return None, ("the C extension %s lacks %s; reinstall to rebuild it"
                      % (c.__file__, ", ".join(missing)))
    return c, "the C extension %s" % os.path.basename(c.__file__)


def _choose():
    c, reason = load_extension("_mrcodecs_speedups", FUNCTIONS)
    return (c, "c", reason) if c is not None else (_pyimpl, "python", reason)


#: the module in use; NAME is "c" or "python"; REASON says why, for reports
twin, NAME, REASON = _choose()
#: True when the C twin is in use
SPEEDUPS = NAME == "c"

escape = twin.escape
escape_line = twin.escape_line
unescape = twin.unescape
uuid_from_bytes = twin.uuid_from_bytes
encode_vector_line = twin.encode_vector_line
decode_vector = twin.decode_vector
encode_places = twin.encode_places
decode_places = twin.decode_places
