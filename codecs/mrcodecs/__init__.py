"""mrcodecs: a compact, line-safe wire format for UUID keys and sparse vectors.

See ``codecs/SPEC.md`` for every byte.  The public surface:

- :class:`SparseVector` -- ids (``S16`` numpy array) and weights (float64/float32)
- :class:`VectorProtocol`, :class:`VectorValueProtocol` -- mrjob protocols
- :class:`DecodeError`, :class:`EncodeError` -- both subclasses of ``ValueError``
- :mod:`mrcodecs.records`, :mod:`mrcodecs.framing` -- the layers beneath
"""
from .errors import DecodeError, EncodeError
from .framing import SPEEDUPS, escape, unescape
from .protocols import VectorProtocol, VectorValueProtocol
from .records import decode_uuid, decode_vector, encode_uuid, encode_vector, uuid_from_bytes
from .vector import ID_DTYPE, SparseVector

__version__ = "0.1.0"

__all__ = [
    "DecodeError",
    "EncodeError",
    "SparseVector",
    "VectorProtocol",
    "VectorValueProtocol",
    "ID_DTYPE",
    "SPEEDUPS",
    "escape",
    "unescape",
    "encode_uuid",
    "decode_uuid",
    "encode_vector",
    "decode_vector",
    "uuid_from_bytes",
]
