"""Output rows read and merged as the dot-products job writes them.

A row is a line ``"<id>" TAB {"<id>": score, ...}``, best first (ties by the
smaller id).  :func:`read_rows` reads lines into ``{id: entries}``, each
entry ``(neighbour id, score text)``: the score's text is kept as written, so
a row put together from two runs' entries has the bytes a single run writes.
:func:`merged` puts a row together, :func:`row_text` writes it.
"""
import json
import uuid

import numpy as np

from mrjobs.runtime.failures import JobError
from mrjobs.strategies.blocks import FLOOR_DTYPE

__all__ = ["read_rows", "parse_row", "merged", "row_text", "RowsError", "neighbours",
           "first_entry", "last_entry", "before", "rows_again", "as_it_was", "floors_table"]



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


def rows_again(rows, gone, k):
    """The rows (``{id: value}``) whose K-th place a removal (``gone``: ids)
    leaves unknown: under ``--top-k`` (``k``), K neighbours, one of them removed."""
    if k is None or not gone:
        return set()
    again = set()
    for key, value in rows.items():
        if key not in gone:
            ids = neighbours(value)
            if len(ids) >= k and any(n in gone for n in ids):
                again.add(key)
    return again


def as_it_was(value, new, gone, top_k):
    """Whether yesterday's row ``value`` is today's: no neighbour of it
    removed, and no new pair (``new``, its row of the update's run) that
    enters it -- a full row of ``top_k`` whose last entry comes before the new
    row's first (the rows' text looked at, parsed only if need be)."""
    if gone and any(n in gone for n in neighbours(value)):
        return False
    if new is None:
        return True
    if top_k is None:
        return False
    last, first = last_entry(value), first_entry(new)
    return (last is not None and first is not None and before(last, first)
            and value.count('": ') >= top_k)


def floors_table(rows, gone, fresh, k):
    """The ``--floors`` records of the update's first run: for each full row
    of yesterday (``k`` neighbours) not computed again (``fresh``) and without
    a removed neighbour, its last score (a pair below it cannot enter the
    row), sorted by id."""
    keys, floors = [], []
    for key, value in rows.items():
        if key in fresh or key in gone or value.count('": ') < k:
            continue
        if gone and any(n in gone for n in neighbours(value)):
            continue
        keys.append(uuid.UUID(key).bytes)
        floors.append(float(last_entry(value)[1]))
    table = np.empty(len(keys), FLOOR_DTYPE)
    table["id"], table["floor"] = keys, floors
    table.sort(order="id")
    return table
