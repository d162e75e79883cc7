"""Reading input vectors: JSON lines and the TSV form.

Two line formats are accepted (``--input-format``, default ``auto``):

``json``
    ``{"id": "<uuid>", "features": {"<uuid>": <number>, ...}}``
``tsv``
    ``<uuid> TAB <uuid>:<weight> <uuid>:<weight> ...`` (features separated by
    spaces or tabs; no features after the TAB, or no TAB at all, is the
    empty vector)

``auto`` decides per line: a line whose first non-blank byte is ``{`` is
JSON, any other line is TSV.  UUIDs may be written in any form
:class:`uuid.UUID` accepts (canonical, upper case, no hyphens, braces,
``urn:uuid:``).  Blank lines are skipped without being counted.

Every problem raises :class:`InputError`, whose ``kind`` is the name of the
mrjob counter the jobs increment before skipping the line.
"""
import json
import math
import uuid

import numpy as np

from mrcodecs import ID_DTYPE

__all__ = ["InputError", "parse_vector", "FORMATS", "BAD_LINE", "BAD_ID", "BAD_WEIGHT"]

FORMATS = ("auto", "json", "tsv")

#: counter names of the three kinds of bad line
BAD_LINE = "malformed line"
BAD_ID = "id not a UUID"
BAD_WEIGHT = "weight not a finite number"


class InputError(ValueError):
    """A bad input line.  ``kind`` is one of BAD_LINE, BAD_ID, BAD_WEIGHT."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


def _uuid_bytes(s, what):
    if not isinstance(s, str):
        raise InputError(BAD_ID, "%s must be a UUID string, found %s %.60r"
                         % (what, type(s).__name__, s))
    try:
        return uuid.UUID(s).bytes
    except ValueError:
        raise InputError(BAD_ID, "%s is not a UUID: %.60r" % (what, s)) from None


def _many_uuid_bytes(keys):
    """Concatenated UUID bytes of many strings; one C call in the common case."""
    n = len(keys)
    if n == 0:
        return b""
    joined = "".join(keys) if all(k.__class__ is str for k in keys) else None
    # Fast path for canonical strings (36 chars, hyphens at 8, 13, 18, 23).
    if joined is not None and len(joined) == 36 * n and all(
        joined[p::36].count("-") == n for p in (8, 13, 18, 23)
    ):
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
            raise InputError(BAD_WEIGHT, "a weight must be a JSON number, found %s %.60r"
                             % (type(v).__name__, v))
    try:
        w = np.array(values, dtype=np.float64)
    except OverflowError:
        raise InputError(BAD_WEIGHT, "a weight does not fit in a float64") from None
    if not np.isfinite(w).all():
        bad = values[int(np.flatnonzero(~np.isfinite(w))[0])]
        raise InputError(BAD_WEIGHT, "weights must be finite, found %r" % (bad,))
    return w


def _parse_json(line):
    try:
        obj = json.loads(line, object_pairs_hook=list)
    except ValueError as e:
        raise InputError(BAD_LINE, "not valid JSON: %s" % e) from None
    if obj.__class__ is not list:
        raise InputError(BAD_LINE, "expected a JSON object, found %.60r" % (obj,))
    top = dict(obj)
    if len(top) != len(obj) or set(top) != {"id", "features"}:
        raise InputError(BAD_LINE, 'expected exactly the keys "id" and "features" once each, '
                         "found %s" % [k for k, _ in obj])
    doc = _uuid_bytes(top["id"], "vector id")
    feats = top["features"]
    if feats.__class__ is not list:
        raise InputError(BAD_LINE, '"features" must be an object, found %.60r' % (feats,))
    keys = [k for k, _ in feats]
    return doc, _many_uuid_bytes(keys), _weights([v for _, v in feats])


def _parse_tsv(line):
    doc_s, tab, rest = line.partition("\t")
    if not tab and len(doc_s.split()) > 1:
        raise InputError(BAD_LINE, "expected <uuid> TAB <uuid>:<weight> ..., found no TAB")
    doc = _uuid_bytes(doc_s.strip(), "vector id")
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
            raise InputError(BAD_WEIGHT, "weight is not a number: %.60r" % tok) from None
    if keys and not all(math.isfinite(v) for v in values):
        raise InputError(BAD_WEIGHT, "weights must be finite, found %r"
                         % next(v for v in values if not math.isfinite(v)))
    return doc, _many_uuid_bytes(keys), np.array(values, dtype=np.float64)


def parse_vector(line, fmt="auto"):
    """Parse one input line.

    Parameters
    ----------
    line : bytes
        One line, without its line ending.
    fmt : {"auto", "json", "tsv"}

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
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(BAD_LINE, "not UTF-8: %s" % e) from None
    stripped = text.strip()
    if not stripped:
        return None
    if fmt == "json" or (fmt == "auto" and stripped[0] == "{"):
        doc, raw, w = _parse_json(stripped)
    elif fmt in ("tsv", "auto"):
        doc, raw, w = _parse_tsv(text.strip(" \r\n"))
    else:
        raise ValueError("unknown input format %r; expected one of %s" % (fmt, FORMATS))
    return doc, np.frombuffer(raw, ID_DTYPE), w
