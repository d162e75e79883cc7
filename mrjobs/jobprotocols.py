"""Protocols of the jobs: the internal wire (compact or JSON) and the output.

``--wire compact`` uses :class:`mrcodecs.jobwire.JobProtocol`; ``--wire
json`` uses :class:`JSONStripeProtocol`, which is mrjob's
:class:`~mrjob.protocol.JSONProtocol` (ujson when installed) carrying the very
same Python objects -- raw 16-byte keys and :class:`~mrcodecs.jobwire.Stripe`
values -- so both wires run identical job logic.

JSON layout of a stripe, as a user of JSONProtocol would write it: key = the
UUID string (``"8-4-4-4-12"`` lower-case hex, which sorts like the bytes);
value = ``{"w": {"<uuid>": value, ...}, "s": [stats]?, "o": own stat?,
"q": 1?, "f": 1?}`` (entries in id order; ``s`` parallel to ``w``; ``f``
marks float32 values).  A block: ``{"b": [["<vector uuid>", {"<feature
uuid>": weight, ...}], ...], "s": [stats]?, "side": 1?, "f": 1?}`` (a list,
so that every vector is written as it is).
"""
import json
import uuid

import numpy as np
from mrjob.protocol import JSONProtocol

from mrcodecs import ID_DTYPE, DecodeError, EncodeError, SparseVector, VectorProtocol
from mrcodecs.jobwire import RECORDS, Block, JobProtocol, Stripe, StripeProtocol, record_type

from mrjobs import _c

__all__ = [
    "JSONStripeProtocol",
    "StripeProtocol",
    "NeighboursJSONProtocol",
    "NamedNeighboursProtocol",
    "id_json",
    "CompactOutputProtocol",
    "VectorJSONProtocol",
    "VectorTSVProtocol",
    "internal_protocol_class",
]


class JSONStripeProtocol(JSONProtocol):
    """The JSON twin of :class:`~mrcodecs.jobwire.JobProtocol`: each record
    of :data:`~mrcodecs.jobwire.RECORDS` as a JSON object (:data:`JSON_TWINS`)."""

    def read(self, line):
        key, value = JSONProtocol.read(self, line)
        try:
            cls = _json_record_class(value)
            return uuid.UUID(key).bytes, JSON_TWINS[cls][1](value)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise DecodeError("cannot decode JSON stripe line %.80r: %s" % (line, e)) from None

    def write(self, key, value):
        to_json = JSON_TWINS[record_type(value).cls][0]
        return JSONProtocol.write(self, _uuid_str(key), to_json(value))


def _json_record_class(value):
    """The record class of a JSON object, by the member that marks it."""
    for r in RECORDS.values():
        if r.json_key in value:
            return r.cls
    return Stripe  # reading it then names what is missing


def _stripe_json(value):
    names = [q[1:-1].decode() for q in _quoted_uuids(value.ids)]
    obj = {"w": dict(zip(names, value.values.tolist()))}
    if len(obj["w"]) != len(names):  # never silently merge entries
        raise EncodeError("a JSON stripe cannot carry repeated ids (%d ids, %d distinct)"
                          % (len(names), len(obj["w"])))
    if value.values.dtype == np.float32:
        obj["f"] = 1
    if value.stats is not None:
        obj["s"] = value.stats.tolist()
    if value.self_stat is not None:
        obj["o"] = value.self_stat
    if value.query:
        obj["q"] = 1
    return obj


def _json_stripe(value):
    weights = value["w"]
    text = "".join(weights)
    if len(text) != 36 * len(weights):
        raise ValueError("ids must be UUID strings of 36 characters")
    ids = np.frombuffer(bytes.fromhex(text.replace("-", "")), ID_DTYPE)
    values = np.fromiter(weights.values(), dtype=np.float32 if value.get("f") else np.float64,
                         count=len(weights))
    stats = value.get("s")
    if stats is not None:
        stats = np.array(stats, dtype=np.float64)
    return Stripe(ids, values, stats, value.get("o"), bool(value.get("q")))


def _block_json(block):
    docs = [q[1:-1].decode() for q in _quoted_uuids(block.ids)]
    indexed = block.features.dtype != ID_DTYPE  # (places in a table: FLAG_INDEXED)
    feats = ([str(f) for f in block.features.tolist()] if indexed else
             [q[1:-1].decode() for q in _quoted_uuids(block.features)])
    weights = block.weights.tolist()
    vectors = []
    pos = 0
    for doc, n in zip(docs, block.lengths.tolist()):
        vectors.append([doc, dict(zip(feats[pos:pos + n], weights[pos:pos + n]))])
        pos += n
    obj = {"b": vectors}
    if indexed:
        obj["x"] = 1
    if block.weights.dtype == np.float32:
        obj["f"] = 1
    if block.stats is not None:
        obj["s"] = block.stats.tolist()
    if block.side:
        obj["side"] = 1
    return obj


def _json_block(value):
    vectors = value["b"]
    ids = np.array([uuid.UUID(d).bytes for d, _ in vectors], ID_DTYPE).reshape(-1)
    lengths = np.array([len(f) for _, f in vectors], np.uint32)
    feats = (np.array([int(f) for _, fs in vectors for f in fs], np.uint32) if value.get("x")
             else np.array([uuid.UUID(f).bytes for _, fs in vectors for f in fs], ID_DTYPE))
    dtype = np.float32 if value.get("f") else np.float64
    weights = np.array([w for _, fs in vectors for w in fs.values()], dtype)
    stats = value.get("s")
    if stats is not None:
        stats = np.array(stats, np.float64)
    return Block(ids, lengths, feats.reshape(-1), weights.reshape(-1), stats,
                 1 if value.get("side") else 0)


#: record class -> (to JSON object, from JSON object): the JSON twin of each
#: record of :data:`mrcodecs.jobwire.RECORDS`
JSON_TWINS = {Stripe: (_stripe_json, _json_stripe), Block: (_block_json, _json_block)}


def internal_protocol_class(wire):
    """The protocol class of ``--wire compact|json``."""
    if wire == "compact":
        return JobProtocol
    if wire == "json":
        return JSONStripeProtocol
    raise ValueError("unknown wire %r; expected compact or json" % (wire,))


def _uuid_str(raw):
    return str(uuid.UUID(bytes=raw))


_HEX_PAIRS = np.array([b"%02x" % i for i in range(256)], dtype="S2")
#: where the 32 hex digits go in '"8-4-4-4-12"' (38 bytes with quotes and dashes)
_HEX_SLOTS = np.array([i + 1 + (i >= 8) + (i >= 12) + (i >= 16) + (i >= 20)
                       for i in range(32)])


def _uuid_texts(ids):
    """``[b'<uuid string>', ...]`` of an ``S16`` array (:func:`_quoted_uuids`
    without the quotes)."""
    return [q[1:-1] for q in _quoted_uuids(ids)]


def _quoted_uuids(ids):
    """``[b'"<uuid string>"', ...]`` of an ``S16`` array, built with numpy.

    Examples
    --------
    >>> import numpy as np, uuid
    >>> u = uuid.UUID(int=0x0123456789ABCDEF0011223344556677)
    >>> _quoted_uuids(np.array([u.bytes], dtype="S16")) == [b'"%s"' % str(u).encode()]
    True
    """
    raw = np.frombuffer(ids.tobytes(), np.uint8).reshape(-1, 16)
    out = np.full((raw.shape[0], 38), b"-", "S1")
    out[:, 0] = out[:, 37] = b'"'
    out[:, _HEX_SLOTS] = _HEX_PAIRS[raw].view("S1").reshape(-1, 32)
    return out.view("S38").ravel().tolist()


class NamedNeighboursProtocol:
    """Final output under ``--ids any``: the vector's id as JSON TAB its
    ``[[id, score], ...]``, best first.  The job passes the id and the pairs
    already written (the scores as the first run wrote them:
    :mod:`mrjobs.strategies.names`).  ``read`` returns ``(id, [[id, score], ...])``.
    """

    def read(self, line):
        k, tab, v = line.partition(b"\t")
        if not tab:
            raise DecodeError("expected key TAB value, found no TAB in %.80r" % (line,))
        try:
            return json.loads(k), json.loads(v)
        except ValueError as e:
            raise DecodeError("cannot decode output line %.80r: %s" % (line, e)) from None

    def write(self, key, value):
        return (id_json(key) + "\t" + value).encode("utf-8")


def id_json(name):
    """An id as JSON text, UTF-8 as it is but for U+2028 and U+2029, which
    ``str.splitlines`` would take for line breaks (escaped, as JSON allows)."""
    return json.dumps(name, ensure_ascii=False).replace("\u2028", "\\u2028").replace(
        "\u2029", "\\u2029")


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
        if _c.C is not None and isinstance(key, bytes) and len(key) == 16:
            # the whole line below, in C, in one buffer; None where it does not
            # apply (another key goes the Python way, which takes or refuses it)
            line = _c.C.neighbours_json(np.ascontiguousarray(value.ids),
                                        np.ascontiguousarray(value.values, dtype=np.float64),
                                        key)
            if line is not None:
                return line
        names = _quoted_uuids(value.ids)
        scores = value.values.tolist()
        if len(set(names)) != len(names) or not np.isfinite(value.values).all():
            # what json.dumps of a dict does: the last score of a repeated id,
            # and ValueError for NaN or infinity
            body = json.dumps(dict(zip([n[1:-1].decode() for n in names], scores)),
                              allow_nan=False).encode()
            return b'"%s"\t%s' % (_uuid_str(key).encode(), body)
        # the bytes json.dumps writes (", " and ": " separators, float repr),
        # built without a dict; about 2.3x faster per neighbour
        body = b", ".join([b"%s: %r" % pair for pair in zip(names, scores)])
        return b'"%s"\t{%s}' % (_uuid_str(key).encode(), body)


class CompactOutputProtocol(VectorProtocol):
    """Compact output: :class:`mrcodecs.VectorProtocol` records.

    Key = the vector's UUID, value = a :class:`mrcodecs.SparseVector` from
    neighbour ids to scores (sorted by id, as SparseVector requires), so the
    output chains into any job that reads VectorProtocol.
    """

    def write(self, key, value):
        order = np.argsort(value.ids, kind="stable")
        try:
            # SparseVector's own constructor (ids sorted and unique: checked
            # there; the scores kept as they are, in their float dtype)
            vec = SparseVector(value.ids[order], value.values[order], allow_nonfinite=True)
        except AttributeError:
            raise EncodeError("expected a Stripe value, found %.60r" % (value,)) from None
        return VectorProtocol.write(self, uuid.UUID(bytes=key), vec)


def _input_vector(line, fmt):
    """(uuid.UUID, SparseVector) of a line in an input format of the jobs."""
    from mrjobs.parsing import InputError, parse_vector
    try:
        doc, ids, w = parse_vector(line, fmt)
        return uuid.UUID(bytes=doc), SparseVector(ids, w)
    except (InputError, TypeError, ValueError) as e:
        raise DecodeError("cannot decode %s vector line %.80r: %s" % (fmt, line, e)) from None


def _weights_list(values):
    # float64 repr round-trips exactly; a float32 weight is written as the
    # float64 it converts to, which converts back to the same float32
    return values.astype(np.float64, copy=False).tolist()


class VectorJSONProtocol:
    """Vectors as the jobs read them, one JSON object a line:
    ``{"id": "<uuid>",<TAB>"features": {"<uuid>": weight, ...}}``, features
    in id order, each weight as ``repr`` writes it (so that it reads back as
    the same float64).  The TAB (JSON whitespace) is there for Hadoop
    Streaming, which splits each output line at its first TAB and writes
    key TAB value: a line without one would come out of it ending in a TAB,
    so the bytes would differ between runners.

    ``write`` takes the raw 16-byte key and a :class:`~mrcodecs.jobwire.Stripe`
    (unique ids, finite values); ``read`` returns ``(uuid.UUID,
    SparseVector)``.

    Examples
    --------
    >>> import numpy as np
    >>> from mrcodecs.jobwire import Stripe
    >>> ids = np.array([bytes(15) + b"\\x02"], "S16")
    >>> line = VectorJSONProtocol().write(bytes(15) + b"\\x01", Stripe(ids, np.array([0.1])))
    >>> line.split(b"\\t")[0].decode()
    '{"id": "00000000-0000-0000-0000-000000000001",'
    >>> VectorJSONProtocol().read(line)[1].weights.tolist()
    [0.1]
    """

    def read(self, line):
        return _input_vector(line, "json")

    def write(self, key, value):
        values = np.ascontiguousarray(value.values, dtype=np.float64)
        body = None
        if _c.C is not None:
            body = _c.C.neighbours_json(np.ascontiguousarray(value.ids), values)
        if body is None:
            if not np.isfinite(values).all():
                raise EncodeError("cannot write a non-finite weight as JSON")
            body = b", ".join([b"%s: %r" % pair for pair in
                               zip(_quoted_uuids(value.ids), _weights_list(values))])
        return b'{"id": "%s",\t"features": {%s}}' % (_uuid_str(key).encode(), body)


class VectorTSVProtocol:
    """Vectors as the jobs read them in the TSV form: ``<uuid> TAB
    <uuid>:<weight> <uuid>:<weight> ...`` (features in id order, weights as
    ``repr`` writes them); an empty vector is its id and the TAB.

    ``write`` takes the raw 16-byte key and a :class:`~mrcodecs.jobwire.Stripe`;
    ``read`` returns ``(uuid.UUID, SparseVector)``.
    """

    def read(self, line):
        return _input_vector(line, "tsv")

    def write(self, key, value):
        doc = _uuid_str(key).encode()
        if not value.ids.shape[0]:
            # its TAB written (Hadoop Streaming would add it on its runners)
            return doc + b"\t"
        values = _weights_list(value.values)
        if not np.isfinite(value.values).all():
            raise EncodeError("cannot write a non-finite weight in the TSV form")
        return doc + b"\t" + b" ".join([b"%s:%r" % pair for pair in
                                         zip(_uuid_texts(value.ids), values)])
