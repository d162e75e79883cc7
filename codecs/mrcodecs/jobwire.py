"""Record layouts of the mrsparse jobs: raw id keys, *stripes* and *blocks*.

These records are internal to the jobs of :mod:`mrjobs` (their flags name the
jobs' notions: the ``--queries`` family, a block pair's side); the generic
wire format is :mod:`mrcodecs.records`.  :data:`RECORDS` registers every
kind: kind byte, class, encoder, decoder and the key of its JSON twin
(:mod:`mrjobs.jobprotocols`).

This module is where the jobs import the records from, and where they are
told apart (:data:`RECORDS`, :func:`decode_record`, :class:`JobProtocol`);
each layout lives in a module of its own, beneath this one:

- :mod:`mrcodecs.stripe_record` -- :class:`Stripe` (ids, one number per id,
  optional statistics: posting-list fragments, partial stripes, score rows),
  :class:`StripeProtocol`; its byte layout (codecs/SPEC.md, 3.3)
- :mod:`mrcodecs.block_record` -- :class:`Block` (whole vectors of a block
  pair), the block pair keys; codecs/SPEC.md, 3.4
- :mod:`mrcodecs.jobframing` -- what both share: the raw 16-byte id key
  (:func:`encode_id_key`), the float32 and statistics flag bits, the header
  checks

Examples
--------
>>> import numpy as np
>>> s = Stripe(np.array([b"\\x09" * 16], dtype="S16"), np.array([0.5]))
>>> key, value = JobProtocol().read(JobProtocol().write(b"\\x01" * 16, s))
>>> key == b"\\x01" * 16, value == s
(True, True)
"""
from types import MappingProxyType
from typing import Callable, NamedTuple

from .block_record import (KIND_BLOCK, Block, block_pair_key, block_pair_of, decode_block,
                           decode_block_raw, encode_block)
from .framing import unescape
from .jobframing import FLAG_FLOAT32, FLAG_STATS, decode_id_key, encode_id_key
from .protocols import KeyValueProtocol
from .stripe_record import (FLAG_QUERY, FLAG_SELF_STAT, KIND_STRIPE, Stripe, StripeProtocol,
                            decode_stripe, decode_stripe_raw, encode_stripe)

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
        The member that marks it in its JSON twin (``mrjobs.jobprotocols``).
    """

    kind: int
    cls: type
    encode: Callable
    decode_raw: Callable
    json_key: str


#: kind byte -> record type: the one place where the records are told apart
RECORDS = MappingProxyType({r.kind: r for r in (
    RecordType(KIND_STRIPE, Stripe, encode_stripe, decode_stripe_raw, "w"),
    RecordType(KIND_BLOCK, Block, encode_block, decode_block_raw, "b"),
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
