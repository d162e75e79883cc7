"""Output rows read and merged as the dot-products job writes them.

A row is a line ``"<id>" TAB {"<id>": score, ...}``, best first (ties by the
smaller id).  :func:`read_rows` reads lines into ``{id: entries}``, each
entry ``(neighbour id, score text)``: the score's text is kept as written, so
a row put together from two runs' entries has the bytes a single run writes.
:func:`merged` puts a row together, :func:`row_text` writes it.
"""
import json

from mrjobs.runtime.failures import JobError

__all__ = ["read_rows", "parse_row", "merged", "row_text", "RowsError", "neighbours",
           "first_entry", "last_entry", "before"]



class RowsError(JobError):
    """A line that is not an output row of the dot-products job."""


def parse_row(value):
    """``[(neighbour id, score text), ...]`` of a row's JSON object, in order
    (its ids UUIDs, its scores numbers: split, not parsed)."""
    if value == "{}":
        return []
    return [(key[1:-1], score) for key, _, score in
            (entry.partition(": ") for entry in value[1:-1].split(", "))]


def read_rows(lines, where):
    """``{id: value text}`` of output lines (str, with or without their line
    ending); ``where`` names them in an error.  The value is parsed only
    when a row is merged (:func:`parse_row`)."""
    rows = {}
    for number, line in enumerate(lines, 1):
        key, tab, value = line.rstrip("\n").partition("\t")
        if (not tab or len(key) != 38 or key[0] != '"' or key[-1] != '"'
                or not value.startswith("{") or not value.endswith("}")):
            raise RowsError("%s line %d is not an output row of the dot-products job "
                            "(\"<uuid>\" TAB {...}): %r" % (where, number, line[:80]))
        rows[key[1:-1]] = value
    return rows


def neighbours(value):
    """The neighbour ids of a row's text (ids that are UUIDs: no quote, no escape)."""
    return value.split('"')[1::2]


def first_entry(value):
    """The first (best) entry of a row's text, ``(id, score text)``, or None."""
    if len(value) < 3:
        return None
    end = value.find(', "')
    key, _, score = value[1:end if end >= 0 else -1].partition(": ")
    return key[1:-1], score


def last_entry(value):
    """The last entry of a row's text, ``(id, score text)``, or None."""
    if len(value) < 3:
        return None
    key, _, score = value[value.rfind(', "') + 2 if ', "' in value else 1:-1].partition(": ")
    return key[1:-1], score


def before(a, b):
    """Whether entry ``a`` comes before entry ``b`` in a row (higher score,
    or the same score and the smaller id)."""
    return _order(a) < _order(b)


def _order(entry):
    return -float(entry[1]), entry[0]


def merged(entries, top_k):
    """The row of ``entries`` (pairs from several runs, each once): best
    first, ties by the smaller id, the first ``top_k`` (None: all)."""
    entries = sorted(entries, key=_order)
    return entries if top_k is None else entries[:top_k]


def row_text(entries):
    """The value of a row of ``entries``, as the job writes it."""
    return "{%s}" % ", ".join("%s: %s" % (json.dumps(n), s) for n, s in entries)
