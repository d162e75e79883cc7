"""Reading input vectors: JSON lines, the TSV form and compact records.

Three line formats are accepted (``--input-format``, default ``auto``):

``json``
    ``{"id": "<uuid>", "features": {"<uuid>": <number>, ...}}``
``tsv``
    ``<uuid> TAB <uuid>:<weight> <uuid>:<weight> ...`` (features separated by
    spaces or tabs; no features after the TAB, or no TAB at all, is the
    empty vector)
``compact``
    a :class:`mrcodecs.VectorProtocol` record (``codecs/SPEC.md``, 3.1 and
    3.2): the vector's escaped 16 UUID bytes, TAB, its escaped sparse
    vector (float64 or float32 weights), as ``--output-format compact``
    writes them and ``python -m mrjobs.convert --to compact`` makes them.
``postings``
    (the dot-products job only) the same records read the other way round:
    a feature's UUID and its posting list, the documents that hold it with
    their weights, as the inverted index job writes them with
    ``--output-format compact``; the job turns them back into vectors.
    Compact records and posting lists are decoded into numpy arrays, then checked: a record that does not
    decode (truncated, padded, a JSON or TSV line) is :data:`BAD_LINE`;
    ids not strictly ascending (repeats included, which the layout
    forbids) are :data:`BAD_ORDER`; weights not finite :data:`BAD_WEIGHT`.

``auto`` takes a line whose first TAB is followed by the byte 0x01 or 0x02
for a compact record: that is where a compact record has its kind byte
(never escaped), and no JSON or TSV line can hold either byte there (JSON
allows no raw control byte at all; after a TSV line's TAB come UUIDs,
digits and blanks).  Nothing else is looked at: the key's 16 bytes can be
anything, a ``{`` or hex digits included.  So a good line of each format is
always read as that format, and a damaged line is a bad line whichever way
it is read (its counter may then name another problem).  Otherwise ``auto``
decides per line: a line whose first non-blank byte is ``{`` or
``[`` is JSON (an array is then reported as not an object), unless it starts
with a UUID in braces followed by a blank or the end of the line
(``{<uuid>} TAB ...``, the TSV form); any other line is TSV.  UUIDs may be
written in any form :class:`uuid.UUID` accepts (canonical, upper case, no
hyphens, braces, ``urn:uuid:``), with ASCII hex digits; TSV weights are
ASCII numbers.  Blank lines are skipped without being counted.  A UTF-8
byte-order mark at the start of a line (the first line of a file written by
some Windows tools) is ignored.

``"features"`` must be a JSON object; a JSON array in its place (of numbers,
of ``[uuid, weight]`` pairs, of triples) is a malformed line, as is a JSON
document other than an object.

Every problem raises :class:`InputError`, whose ``kind`` is the name of the
mrjob counter the jobs increment before skipping the line: a weight that is
not a number at all (a string, ``0x1p3``, ``1_000``, non-ASCII digits) is
:data:`BAD_NUMBER`; a number that is not finite (``NaN``, ``Infinity``,
``1e999``) :data:`BAD_WEIGHT`; a finite weight beyond float32's range under
``--float32`` :data:`BAD_RANGE`; repeated features whose weights overflow
when summed :data:`BAD_SUM`.

Under ``--float32`` a nonzero weight (a repeated feature's sum) so small
that float32 carries it as 0 is not a bad line but an entry dropped, as a
zero weight is, and counted apart (:data:`TINY_WEIGHT`, found by
:func:`float32_zeros`; refused under ``--strict``): the vector keeps its
other entries, and never holds a 0.0.
"""
import functools
import json
import math
import re
import uuid

import numpy as np

from mrcodecs import ID_DTYPE, DecodeError, decode_vector
from mrcodecs.framing import unescape

from mrjobs import _c
from mrjobs.pairs.idarrays import sort_sum

__all__ = ["InputError", "parse_vector", "name_key", "NAMESPACE", "is_compact", "FORMATS",
           "POSTINGS", "COMPACT_FORMATS", "BAD_LINE", "BAD_ID", "BAD_NAME",
           "BAD_NUMBER", "BAD_WEIGHT", "BAD_RANGE", "BAD_SUM", "BAD_ORDER", "BAD_KINDS",
           "TINY_WEIGHT",
           "FLOAT32_MAX", "FLOAT32_ZERO", "float32_zeros"]

FORMATS = ("auto", "json", "tsv", "compact")
#: the dot-products job's formats: also the inverted index's posting lists
POSTINGS = "postings"
#: the formats whose every line is a compact record (ids strictly ascending, checked)
COMPACT_FORMATS = ("compact", POSTINGS)

#: counter names of the kinds of bad line
BAD_LINE = "malformed line"
BAD_ID = "id not a UUID"
BAD_NAME = "id not a string or integer (--ids any)"
BAD_NUMBER = "weight not a number"
BAD_WEIGHT = "weight not a finite number"
BAD_RANGE = "weight beyond float32 range (--float32)"
BAD_SUM = "summed weight not a finite number"
BAD_ORDER = "ids not ascending (compact record)"
BAD_KINDS = (BAD_LINE, BAD_ID, BAD_NAME, BAD_NUMBER, BAD_WEIGHT, BAD_RANGE, BAD_SUM, BAD_ORDER)
#: counter name (and ``InputError.kind`` under ``--strict``) of a nonzero
#: weight that float32 carries as 0: the entry is dropped, not the line
TINY_WEIGHT = "weight below float32 range (--float32; entry dropped)"

#: the largest weight --float32 carries
FLOAT32_MAX = float(np.finfo(np.float32).max)
#: magnitudes up to which a float64 becomes 0.0 in float32: half the
#: smallest subnormal, 2**-150, is a tie and rounds to the even 0.0
FLOAT32_ZERO = 2.0 ** -150


class InputError(ValueError):
    """A bad input line.  ``kind`` is one of :data:`BAD_KINDS`."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


class _Object(list):
    """A decoded JSON object: its (key, value) pairs in input order.

    A type of its own, so that a JSON array of pairs (a ``list``) is never
    taken for an object."""

    __slots__ = ()


_BOM = b"\xef\xbb\xbf"
# "{<uuid>}" then a blank or the end: the TSV form with a braced id, not JSON
_BRACED_ID = re.compile(r"\{[^\s\"{}]+\}(?:\s|$)")
# the forms uuid.UUID accepts, written with ASCII hex digits (it checks the count)
_UUID_FORM = re.compile(r"(?:urn:uuid:)?(?:\{[0-9A-Fa-f-]+\}|[0-9A-Fa-f-]+)\Z")
_JSON_TYPES = {str: "string", int: "number", float: "number", bool: "boolean",
               list: "array", _Object: "object", type(None): "null"}


def _json_type(v):
    return _JSON_TYPES.get(v.__class__, type(v).__name__)


def _uuid_bytes(s, what):
    if not isinstance(s, str):
        raise InputError(BAD_ID, "%s must be a UUID string, found %s %.60r"
                         % (what, _json_type(s), s))
    # uuid.UUID alone would also take signs, underscores, blanks and non-ASCII
    # digits (it ends in int(s, 16)): ASCII hex digits and hyphens only here
    if _UUID_FORM.match(s) is not None:
        try:
            return uuid.UUID(s).bytes
        except ValueError:
            pass
    raise InputError(BAD_ID, "%s is not a UUID: %.60r" % (what, s))


def _many_uuid_bytes(keys):
    """Concatenated UUID bytes of many strings; one C call in the common case."""
    n = len(keys)
    if n == 0:
        return b""
    # Fast path for canonical strings (36 chars each, hyphens at 8, 13, 18, 23).
    # Each string's own length is checked (map and count run in C): a 35- and
    # a 37-character string would otherwise join into two canonical-looking ones.
    try:
        joined = "".join(keys)
    except TypeError:  # not all strings: the slow path names the culprit
        joined = ""
    if (len(joined) == 36 * n and list(map(len, keys)).count(36) == n
            and all(joined[p::36].count("-") == n for p in (8, 13, 18, 23))):
        try:
            raw = bytes.fromhex(joined.replace("-", ""))
        except ValueError:
            raw = None
        if raw is not None and len(raw) == 16 * n:
            return raw
    return b"".join(_uuid_bytes(k, "feature id") for k in keys)


def _weights(values):
    for v in values:
        if v.__class__ is not float and v.__class__ is not int:
            # bool is a subclass of int, and numbers written as strings are
            # errors rather than guesses
            raise InputError(BAD_NUMBER, "a weight must be a JSON number, found %s %.60r"
                             % (_json_type(v), v))
    try:
        w = np.array(values, dtype=np.float64)
    except OverflowError:
        raise InputError(BAD_WEIGHT, "a weight does not fit in a float64") from None
    if not np.isfinite(w).all():
        bad = values[int(np.flatnonzero(~np.isfinite(w))[0])]
        raise InputError(BAD_WEIGHT, "weights must be finite, found %r" % (bad,))
    return w


#: the namespace of the UUIDv5 keys of ids of any kind (``--ids any``,
#: :func:`name_key`; :mod:`mrjobs.api` maps a matrix's ids with it too)
NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "mrsparse:ids")


@functools.lru_cache(maxsize=1 << 16)
def _name_key(name):
    return uuid.uuid5(NAMESPACE, name).bytes


def name_key(value, what="id"):
    """The 16 UUID bytes of an id of any kind: the UUIDv5 in :data:`NAMESPACE`
    of ``"int:<n>"`` for an integer, ``"str:<s>"`` for a string (``1`` and
    ``"1"`` differ; a string that reads as a UUID is a string too).

    >>> name_key(7) == uuid.uuid5(NAMESPACE, "int:7").bytes
    True
    """
    if value.__class__ is str:
        return _name_key("str:" + value)
    if value.__class__ is int:
        return _name_key("int:%d" % value)
    raise InputError(BAD_NAME, "%s must be a string or an integer (--ids any), found %s %.60r"
                     % (what, _json_type(value), value))


def _many_name_keys(keys):
    return b"".join(_name_key("str:" + k) for k in keys)


def _parse_json(line, key=_uuid_bytes, many=_many_uuid_bytes):
    try:
        obj = json.loads(line, object_pairs_hook=_Object)
    except ValueError as e:
        raise InputError(BAD_LINE, "not valid JSON: %s" % e) from None
    except RecursionError:
        raise InputError(BAD_LINE, "not valid JSON: nested too deeply") from None
    if obj.__class__ is not _Object:
        raise InputError(BAD_LINE, "expected a JSON object, found %s %.60r"
                         % (_json_type(obj), obj))
    top = dict(obj)
    if len(top) != len(obj) or set(top) != {"id", "features"}:
        raise InputError(BAD_LINE, 'expected exactly the keys "id" and "features" once each, '
                         "found %s" % [k for k, _ in obj])
    doc = key(top["id"], "vector id")
    feats = top["features"]
    if feats.__class__ is not _Object:
        raise InputError(BAD_LINE, '"features" must be a JSON object {"<uuid>": <number>, ...}, '
                         "found %s %.60r" % (_json_type(feats), feats))
    keys = [k for k, _ in feats]
    return doc, many(keys), _weights([v for _, v in feats])


def _parse_tsv(line):
    doc_s, tab, rest = line.partition("\t")
    if not tab and len(doc_s.split()) > 1:
        raise InputError(BAD_LINE, "expected <uuid> TAB <uuid>:<weight> ..., found no TAB")
    doc = _uuid_bytes(doc_s.strip(), "vector id")
    if "_" in rest or not rest.isascii():
        # float() also takes underscores and any Unicode digit; ids hold neither
        for tok in rest.split():
            v = tok.rpartition(":")[2]
            if "_" in v or not v.isascii():
                raise InputError(BAD_NUMBER, "weight is not a number: %.60r" % tok)
    keys = []
    values = []
    for tok in rest.split():
        k, colon, v = tok.rpartition(":")
        if not colon or not k:
            raise InputError(BAD_LINE, "expected <uuid>:<weight>, found %.60r" % tok)
        keys.append(k)
        try:
            values.append(float(v))
        except ValueError:
            raise InputError(BAD_NUMBER, "weight is not a number: %.60r" % tok) from None
    if keys and not all(math.isfinite(v) for v in values):
        raise InputError(BAD_WEIGHT, "weights must be finite, found %r"
                         % next(v for v in values if not math.isfinite(v)))
    return doc, _many_uuid_bytes(keys), np.array(values, dtype=np.float64)


#: the kind bytes of a vector record (SPEC.md 3.2), as ``auto`` looks for them
_COMPACT_KINDS = (1, 2)


def is_compact(line):
    """Whether ``auto`` takes ``line`` for a compact record: its first TAB is
    followed by a vector record's kind byte, 0x01 or 0x02 (see the module
    docstring for why no JSON or TSV line can be).

    Examples
    --------
    >>> is_compact(b'{"id": "...", "features": {}}'), is_compact(b"{\\x01\\t\\x01\\x00")
    (False, True)
    """
    tab = line.find(b"\t")
    return 0 <= tab < len(line) - 1 and line[tab + 1] in _COMPACT_KINDS


def _parse_compact(line):
    """(doc, ids, weights) of a VectorProtocol record, decoded as whole
    arrays and checked: ids strictly ascending, weights finite."""
    key, tab, value = bytes(line).partition(b"\t")
    if not tab:
        raise InputError(BAD_LINE, "expected a compact record (escaped UUID key TAB escaped "
                         "vector), found no TAB in %d bytes" % len(line))
    try:
        doc = bytes(unescape(key, "UUID key"))
        if len(doc) != 16:
            raise DecodeError("cannot decode UUID key: expected 16 bytes after unescaping, "
                              "found %d" % len(doc))
        vec = decode_vector(value)
    except DecodeError as e:
        raise InputError(BAD_LINE, "not a compact record: %s" % e) from None
    ids, w = vec.ids, vec.weights
    if ids.shape[0] > 1:
        down = ids[1:] <= ids[:-1]
        if down.any():
            i = int(np.argmax(down)) + 1
            raise InputError(BAD_ORDER, "the ids of a compact record must be strictly "
                             "ascending; entry %d (%s) %s entry %d" % (
                                 i, uuid.UUID(bytes=ids[i:i + 1].tobytes()),
                                 "repeats" if ids[i] == ids[i - 1] else "is below", i - 1))
    finite = np.isfinite(w)
    if not finite.all():
        raise InputError(BAD_WEIGHT, "weights must be finite, found %r at entry %d"
                         % (float(w[~finite][0]), int(np.argmin(finite))))
    return doc, ids, w.astype(np.float64)


def weight_limit(float32=False):
    """The largest weight magnitude the jobs carry (float32's with ``--float32``)."""
    return FLOAT32_MAX if float32 else _FLOAT64_MAX


_FLOAT64_MAX = float(np.finfo(np.float64).max)


def _check_range(ids, w, float32):
    """Refuse weights beyond float32's range (``float32``) and repeated
    features whose weights add up beyond the range; O(n), and a sort only
    when the sum of all magnitudes is beyond the range."""
    if not w.shape[0]:
        return
    limit = weight_limit(float32)
    a = np.abs(w)
    if float32 and a.max() > limit:
        raise InputError(BAD_RANGE, "weight %r is beyond float32's range (--float32 carries "
                         "at most %g)" % (float(w[np.argmax(a)]), limit))
    with np.errstate(over="ignore"):
        if a.sum() <= limit:
            return  # no sum of some of the weights can go beyond
        uids, sums, _, _ = sort_sum(ids, w)
    over = ~(np.abs(sums) <= limit)
    if over.any():
        i = int(np.argmax(over))
        raise InputError(BAD_SUM, "the weights of the repeated feature %s add up beyond "
                         "%s's range" % (uuid.UUID(bytes=uids[i:i + 1].tobytes()),
                                         "float32" if float32 else "float64"))


def float32_zeros(ids, w):
    """The entries that float32 carries as 0.0 though they are not 0: a
    weight of magnitude at most :data:`FLOAT32_ZERO` (``--float32`` would
    turn a present feature into an absent one, a jaccard of 1.0 into 0.0).

    Parameters
    ----------
    ids, w : numpy.ndarray
        A vector's unique feature ids (``S16``) and their summed float64
        weights.

    Returns
    -------
    (mask, message) or None
        None when there is none; else which entries, and a message naming
        the first of them (for ``--strict``).

    Examples
    --------
    >>> import numpy as np
    >>> ids = np.array([bytes(15) + b"\\x01", bytes(15) + b"\\x02"], "S16")
    >>> mask, why = float32_zeros(ids, np.array([1e-50, 1e-45]))
    >>> mask.tolist()
    [True, False]
    >>> float32_zeros(ids, np.array([0.5, -1e-45])) is None
    True
    """
    a = np.abs(w)
    tiny = (a <= FLOAT32_ZERO) & (a > 0.0)
    if not tiny.any():
        return None
    i = int(np.argmax(tiny))
    return tiny, ("weight %r of feature %s is below float32's range: --float32 would carry "
                  "it as 0 (its smallest magnitude is %g; run without --float32 to keep it)"
                  % (float(w[i]), uuid.UUID(bytes=ids[i:i + 1].tobytes()),
                     float(np.finfo(np.float32).smallest_subnormal)))


def _common_json(line, float32):
    """The common JSON line (canonical UUIDs, plain numbers) parsed in one C
    pass -- the vector :func:`parse_vector` gives, the same numbers --, or
    None for any other line (and without the C kernels): the general way."""
    fast = None if _c.C is None else _c.C.parse_json_line(line)
    if fast is None:
        return None
    doc, raw, w = fast
    ids = np.frombuffer(raw, ID_DTYPE)
    w = np.frombuffer(w, np.float64)
    _check_range(ids, w, float32)
    return doc, ids, w


def fast_vector(line, fmt="auto", float32=False):
    """The vector of a common line as the jobs make it -- :func:`parse_vector`,
    then features sorted, repeats summed, zeros dropped -- where that is all
    the line needs, in one C call: a JSON line (``json``, ``auto``) parsed and
    sorted, a compact vector record (``compact``, ``auto``) decoded (at least
    one feature, none twice, no weight 0 or not finite); or None: any other
    line (and ``--float32``, and without the C kernels) takes that way."""
    if _c.C is None or float32:
        return None
    fast = None
    if fmt in ("json", "auto"):
        fast = _c.C.parse_json_sorted(line)
    if fast is None and fmt in ("compact", "auto"):
        fast = _c.C.parse_compact_sorted(line)
    if fast is None:
        return None
    doc, raw, w = fast
    return doc, np.frombuffer(raw, ID_DTYPE), np.frombuffer(w, np.float64)


def _parse_text(text, fmt):
    """``(doc, raw ids, weights)`` of a decoded line that is not blank."""
    stripped = text.strip()
    if fmt == "named":  # (--ids any)
        return _parse_json(stripped, name_key, _many_name_keys)
    if fmt == "json" or (fmt == "auto" and stripped[0] in "{["
                         and not _BRACED_ID.match(stripped)):
        return _parse_json(stripped)
    if fmt in ("tsv", "auto"):
        return _parse_tsv(text.strip(" \r\n"))
    raise ValueError("unknown input format %r; expected one of %s" % (fmt, FORMATS))


def parse_vector(line, fmt="auto", float32=False):
    """Parse one input line.

    Parameters
    ----------
    line : bytes
        One line, without its line ending.
    fmt : {"auto", "json", "tsv", "compact", "postings", "named"}
        ``postings`` reads a compact record as a feature's posting list:
        ``doc`` is then the feature and ``ids`` its documents; ``named`` a
        JSON line whose ids are of any kind (``--ids any``: :func:`name_key`).
    float32 : bool
        True when the weights will be carried as float32 (``--float32``):
        weights beyond its range are refused (see :func:`float32_zeros`
        for those it would carry as 0).

    Returns
    -------
    (doc, ids, weights) or None
        ``doc`` the vector's 16 UUID bytes; ``ids`` an ``S16`` array of
        feature ids in input order (repeats possible); ``weights`` float64.
        None for a blank line.

    Raises
    ------
    InputError
        With ``kind`` naming the problem.

    Examples
    --------
    >>> doc, ids, w = parse_vector(b'00000000-0000-0000-0000-000000000001\\t'
    ...                            b'00000000-0000-0000-0000-000000000002:1.5')
    >>> doc.hex()[-2:], len(ids), w.tolist()
    ('01', 1, [1.5])
    """
    if fmt in COMPACT_FORMATS or (fmt == "auto" and is_compact(line)):
        if not line.strip():
            return None
        doc, ids, w = _parse_compact(line)
        _check_range(ids, w, float32)
        return doc, ids, w
    line = line[3:] if line[:3] == _BOM else line
    if fmt in ("json", "auto") and (fast := _common_json(line, float32)) is not None:
        return fast
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(BAD_LINE, "not UTF-8: %s" % e) from None
    if not text.strip():
        return None
    doc, raw, w = _parse_text(text, fmt)
    ids = np.frombuffer(raw, ID_DTYPE)
    _check_range(ids, w, float32)
    return doc, ids, w
