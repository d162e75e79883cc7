"""Protocols of the jobs: the internal wire (compact or JSON) and the output.

``--wire compact`` uses :class:`mrcodecs.jobwire.StripeProtocol`; ``--wire
json`` uses :class:`JSONStripeProtocol`, which is mrjob's
:class:`~mrjob.protocol.JSONProtocol` (ujson when installed) carrying the very
same Python objects -- raw 16-byte keys and :class:`~mrcodecs.jobwire.Stripe`
values -- so both wires run identical job logic.

JSON layout of a stripe: key = 32 lower-case hex digits of the UUID (sorts
like the bytes); value = ``{"i": [hex ids], "v": [values], "s": [stats]?,
"o": own stat?, "q": 1?, "f": 1?}`` (``f`` marks float32 values).
"""
import json
import uuid

import numpy as np
from mrjob.protocol import JSONProtocol

from mrcodecs import ID_DTYPE, DecodeError, EncodeError, SparseVector, VectorProtocol
from mrcodecs.jobwire import Stripe, StripeProtocol

__all__ = [
    "JSONStripeProtocol",
    "StripeProtocol",
    "NeighboursJSONProtocol",
    "PostingsJSONProtocol",
    "CompactOutputProtocol",
    "internal_protocol_class",
]


class JSONStripeProtocol(JSONProtocol):
    """The JSON twin of :class:`~mrcodecs.jobwire.StripeProtocol`."""

    def read(self, line):
        key, value = JSONProtocol.read(self, line)
        try:
            hexids = value["i"]
            ids = np.frombuffer(bytes.fromhex("".join(hexids)), ID_DTYPE)
            values = np.array(value["v"], dtype=np.float32 if value.get("f") else np.float64)
            stats = value.get("s")
            if stats is not None:
                stats = np.array(stats, dtype=np.float64)
            return bytes.fromhex(key), Stripe(ids, values, stats, value.get("o"),
                                               bool(value.get("q")))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise DecodeError("cannot decode JSON stripe line %.80r: %s" % (line, e)) from None

    def write(self, key, value):
        h = value.ids.tobytes().hex()
        obj = {"i": [h[p:p + 32] for p in range(0, len(h), 32)],
               "v": value.values.tolist()}
        if value.values.dtype == np.float32:
            obj["f"] = 1
        if value.stats is not None:
            obj["s"] = value.stats.tolist()
        if value.self_stat is not None:
            obj["o"] = value.self_stat
        if value.query:
            obj["q"] = 1
        return JSONProtocol.write(self, key.hex(), obj)


def internal_protocol_class(wire):
    """The protocol class of ``--wire compact|json``."""
    if wire == "compact":
        return StripeProtocol
    if wire == "json":
        return JSONStripeProtocol
    raise ValueError("unknown wire %r; expected compact or json" % (wire,))


def _uuid_str(raw):
    return str(uuid.UUID(bytes=raw))


class NeighboursJSONProtocol:
    """Final output: ``"<uuid>"`` TAB ``{"<uuid>": score, ...}``.

    Written with the standard :mod:`json` module, whose float repr round-trips
    exactly.  The job passes a raw 16-byte key and a
    :class:`~mrcodecs.jobwire.Stripe` of scores already in output order
    (best first).  ``read`` returns ``(uuid.UUID, {uuid.UUID: float})``.
    """

    def read(self, line):
        k, tab, v = line.partition(b"\t")
        if not tab:
            raise DecodeError("expected key TAB value, found no TAB in %.80r" % (line,))
        try:
            key = uuid.UUID(json.loads(k))
            value = {uuid.UUID(n): s for n, s in json.loads(v).items()}
        except (ValueError, TypeError, AttributeError) as e:
            raise DecodeError("cannot decode output line %.80r: %s" % (line, e)) from None
        return key, value

    def write(self, key, value):
        h = value.ids.tobytes().hex()
        names = ["%s-%s-%s-%s-%s" % (h[p:p + 8], h[p + 8:p + 12], h[p + 12:p + 16],
                                     h[p + 16:p + 20], h[p + 20:p + 32])
                 for p in range(0, len(h), 32)]
        body = json.dumps(dict(zip(names, value.values.tolist())), allow_nan=False)
        return b'"%s"\t%s' % (_uuid_str(key).encode(), body.encode())


class PostingsJSONProtocol(NeighboursJSONProtocol):
    """Output of the inverted index: ``"<feature>"`` TAB ``{"<doc>": weight}``."""


class CompactOutputProtocol(VectorProtocol):
    """Compact output: :class:`mrcodecs.VectorProtocol` records.

    Key = the vector's UUID, value = a :class:`mrcodecs.SparseVector` from
    neighbour ids to scores (sorted by id, as SparseVector requires), so the
    output chains into any job that reads VectorProtocol.
    """

    def write(self, key, value):
        order = np.argsort(value.ids, kind="stable")
        try:
            vec = SparseVector._trusted(value.ids[order], value.values[order])
        except AttributeError:
            raise EncodeError("expected a Stripe value, found %.60r" % (value,)) from None
        return VectorProtocol.write(self, uuid.UUID(bytes=key), vec)
