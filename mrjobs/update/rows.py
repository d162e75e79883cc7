"""Output rows read and merged as the dot-products job writes them.

A row is a line ``"<id>" TAB {"<id>": score, ...}``, best first (ties by the
smaller id).  :func:`read_rows` reads lines into ``{id: entries}``, each
entry ``(neighbour id, score text)``: the score's text is kept as written, so
a row put together from two runs' entries has the bytes a single run writes.
:func:`merged` puts a row together, :func:`row_text` writes it.

A *stored* row is an exact prefix of a vector's pairs in that order -- all of
them where it is *whole*, else its first ones: an output row of ``--top-k K``
(whole where it holds fewer than K), or a row of the update's reserve
(``_reserve/part-00000``: ``"<id>" TAB {...} TAB 1|0``, 1 where whole; up to
K + R entries, of which up to R may be removed before the row's K-th place is
unknown).  :class:`Today` merges stored rows with an update's new pairs.
"""

import numpy as np

from mrjobs.runtime.failures import JobError
from mrjobs.strategies.blocks import FLOOR_DTYPE

__all__ = ["read_rows", "parse_row", "merged", "row_text", "RowsError", "neighbours",
           "first_entry", "last_entry", "before", "losing", "rows_again", "as_it_was",
           "floors_table",
           "cut_row", "read_reserve", "reserve_lines", "Today"]


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
        key, value = _row(line.rstrip("\n"), where, number)
        rows[key] = value
    return rows


def _row(line, where, number):
    key, tab, value = line.partition("\t")
    if (not tab or len(key) != 38 or key[0] != '"' or key[-1] != '"'
            or not value.startswith("{") or not value.endswith("}")):
        raise RowsError("%s line %d is not an output row of the dot-products job "
                        "(\"<uuid>\" TAB {...}): %r" % (where, number, line[:80]))
    return key[1:-1], value


def read_reserve(path):
    """``({id: value text}, {ids of whole rows})`` of a reserve file (lines
    ``"<id>" TAB {...} TAB 1|0``)."""
    rows, whole = {}, set()
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            row, tab, flag = line.rstrip("\n").rpartition("\t")
            if not tab or flag not in ("0", "1"):
                raise RowsError("%s line %d is not a row of an update's reserve (\"<uuid>\" "
                                "TAB {...} TAB 1|0): %r" % (path, number, line[:80]))
            key, value = _row(row, path, number)
            rows[key] = value
            if flag == "1":
                whole.add(key)
    return rows, whole


def reserve_lines(stored, whole):
    """The reserve file's lines of stored rows ``{id: value}``, in id order."""
    for key in sorted(stored):
        yield '"%s"\t%s\t%d\n' % (key, stored[key], key in whole)


def cut_row(value, k):
    """The text of a row's first ``k`` entries (the row where it holds no more)."""
    end = 0
    for _ in range(k):
        end = value.find(', "', end + 1)
        if end < 0:
            return value
    return value[:end] + "}"


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
    """The value of a row of ``entries``, as the job writes it (its ids are
    UUIDs in their canonical form: quoted as they are)."""
    return "{%s}" % ", ".join('"%s": %s' % entry for entry in entries)


def losing(rows, gone):
    """``{id: removed neighbours}`` of the stored rows (``{id: value}``) of
    vectors that stay but hold a removed one (``gone``: ids); one pass."""
    lost = {}
    if gone:
        for key, value in rows.items():
            if key not in gone:
                m = sum(n in gone for n in neighbours(value))
                if m:
                    lost[key] = m
    return lost


def rows_again(rows, whole, lost, k):
    """The stored rows (``{id: value}``; ``whole``: the ids of those that hold
    all their pairs) whose K-th place a removal leaves unknown (``lost``:
    :func:`losing`): under ``--top-k`` (``k``), a row that is not whole and
    holds fewer than K neighbours once the removed ones are out."""
    if k is None:
        return set()
    return {key for key, m in lost.items()
            if key not in whole and rows[key].count('": ') - m < k}


def as_it_was(value, new, lost, whole):
    """Whether the stored row ``value`` stays as it is: no neighbour of it
    removed (``lost``: it lost one), and no new pair (``new``, its row of the
    update's run) that enters it -- a row that is not ``whole`` whose last
    entry comes before the new row's first (the rows' text looked at, parsed
    only if need be)."""
    if lost:
        return False
    if new is None:
        return True
    if whole:
        return False
    last, first = last_entry(value), first_entry(new)
    return last is not None and first is not None and before(last, first)


def floors_table(rows, whole, gone, lost, fresh):
    """The ``--floors`` records of the update's first run: for each stored row
    that is not whole, not computed again (``fresh``) and not removed
    (``gone``), its last score once the removed neighbours are out (``lost``:
    the rows that hold one; a pair below it cannot enter the row's known
    part), sorted by id."""
    keys, floors = [], []
    for key, value in rows.items():
        if key in fresh or key in gone or key in whole:
            continue
        last = (last_entry(value) if key not in lost else
                [e for e in parse_row(value) if e[0] not in gone][-1])
        keys.append(bytes.fromhex(key.replace("-", "")))
        floors.append(float(last[1]))
    table = np.empty(len(keys), FLOOR_DTYPE)
    table["id"], table["floor"] = keys, floors
    table.sort(order="id")
    return table


class Today:
    """Today's rows, put together from the stored rows of yesterday
    (:func:`rows_again`'s ``rows`` and ``whole``) and the update's runs:
    ``out`` (``{id: value}``, each row's first ``top_k``: the output),
    ``stored`` and ``whole`` (rows of up to ``cap`` entries for the reserve,
    ``cap`` None under ``--threshold`` alone: every row whole) and ``kept``
    (rows as they were)."""

    def __init__(self, top_k, cap):
        self.top_k, self.cap = top_k, cap
        self.out, self.stored, self.whole, self.kept = {}, {}, set(), 0

    def keep(self, key, entries, whole):
        if entries:
            self.stored[key] = text = row_text(entries)
            self.out[key] = text if self.top_k is None else row_text(entries[:self.top_k])
            if whole:
                self.whole.add(key)

    def keep_text(self, key, value, whole):
        """A stored row as it was (cut to ``cap``)."""
        if self.cap is not None and value.count('": ') > self.cap:
            value, whole = cut_row(value, self.cap), False
        self.stored[key], self.kept = value, self.kept + 1
        self.out[key] = value if self.top_k is None else cut_row(value, self.top_k)
        if whole:
            self.whole.add(key)

    def fresh(self, key, first, second):
        """A row computed again: its best of both runs (each up to ``cap``)."""
        a, b = parse_row(first or "{}"), parse_row(second or "{}")
        entries = merged(a + b, None)
        cap = self.cap
        self.keep(key, entries[:cap], cap is None or (len(a) < cap and len(b) < cap
                                                      and len(entries) <= cap))

    def merge(self, key, value, new, gone, whole):
        """A stored row (``value``, None: none yesterday, so whole) less its
        removed neighbours, with its new pairs of the first run (``new``):
        exact up to the first entry after which either list was cut."""
        old = [e for e in parse_row(value or "{}") if e[0] not in gone]
        got = parse_row(new or "{}")
        known = {n for n, _ in old}
        entries = merged(old + [e for e in got if e[0] not in known], None)
        whole = whole or value is None
        ends = ([old[-1]] if old and not whole else []) + (
            [got[-1]] if self.cap is not None and len(got) >= self.cap else [])
        at = {e: i for i, e in enumerate(entries)}
        exact = min([at[e] + 1 for e in ends] + [len(entries)])
        if self.top_k is not None and exact < min(self.top_k, len(entries)):
            raise JobError("update: the row of %s is known for its first %d entries only, "
                           "fewer than --top-k %d (a bug: please report it)"
                           % (key, exact, self.top_k))
        if self.cap is not None:
            exact = min(exact, self.cap)
        self.keep(key, entries[:exact], not ends and exact == len(entries))
