"""mrjob protocols built on the mrcodecs record layouts.

A protocol is any object with ``read(line) -> (key, value)`` and
``write(key, value) -> bytes``; mrjob instantiates the class once per task.
Key and value are separated by one TAB; neither contains TAB, LF or CR.
"""
from .errors import DecodeError
from .records import decode_uuid, decode_vector, encode_uuid_vector_line, encode_vector

__all__ = ["KeyValueProtocol", "VectorProtocol", "VectorValueProtocol"]


class KeyValueProtocol:
    """Base of the ``key TAB value`` protocols: splits the line and keeps the
    last decoded key, reused while the next lines have the same key bytes
    (reducer input arrives grouped by key).

    Subclasses set ``decode_key``/``decode_value`` (functions of the escaped
    bytes) and define ``write``.
    """

    decode_key = None
    decode_value = None

    def __init__(self):
        self._last_key_bytes = None
        self._last_key = None

    def read(self, line):
        key_bytes, tab, value_bytes = line.partition(b"\t")
        if not tab:
            raise DecodeError(
                "cannot decode line: expected key TAB value, found no TAB in %d bytes "
                "(%.60r)" % (len(line), bytes(line))
            )
        if key_bytes != self._last_key_bytes:
            self._last_key = self.decode_key(key_bytes)
            self._last_key_bytes = key_bytes
        return self._last_key, self.decode_value(value_bytes)


class VectorProtocol(KeyValueProtocol):
    """``uuid.UUID`` key, TAB, :class:`~mrcodecs.SparseVector` value.

    Reducer input arrives grouped by key, so the last decoded key is kept and
    reused when the next line has the same key bytes.

    Set the class attribute ``allow_nonfinite = True`` in a subclass to carry
    NaN and infinite weights.

    Examples
    --------
    >>> import uuid
    >>> from mrcodecs import SparseVector
    >>> p = VectorProtocol()
    >>> line = p.write(uuid.UUID(int=1), SparseVector.from_dict({uuid.UUID(int=2): 0.5}))
    >>> key, value = p.read(line)
    >>> key.int, value.to_dict()
    (1, {UUID('00000000-0000-0000-0000-000000000002'): 0.5})
    """

    allow_nonfinite = False
    decode_key = staticmethod(decode_uuid)
    decode_value = staticmethod(decode_vector)

    def write(self, key, value):
        return encode_uuid_vector_line(key, value, self.allow_nonfinite)


class VectorValueProtocol:
    """A :class:`~mrcodecs.SparseVector` value alone; the key is ``None``.

    ``read`` returns ``(None, vector)``; ``write`` ignores the key.
    """

    allow_nonfinite = False

    def read(self, line):
        return None, decode_vector(line)

    def write(self, key, value):
        return encode_vector(value, self.allow_nonfinite)
