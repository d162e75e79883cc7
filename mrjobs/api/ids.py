"""Ids of any kind for jobs keyed by UUIDs: integers, strings and UUIDs,
each mapped to one UUID, and back.

The jobs key vectors (and features) by UUIDs.  An id that is a
:class:`uuid.UUID` is its own key; an integer ``n`` is the UUIDv5 of the
name ``"int:n"`` and a string ``s`` that of ``"str:" + s`` in the namespace
:data:`NAMESPACE` (``uuid5(NAMESPACE_URL, "mrsparse:ids")``): the same id
gives the same UUID on every machine, runner and run, and ``1`` and ``"1"``
differ.  Two ids of a family that would get the same UUID (a repeated id, or
a UUID given beside the id it is derived from) are refused, naming both.

Examples
--------
>>> ids = IdMap(["apple", 7, "pear"])
>>> ids.uuids[1] == uuid.uuid5(NAMESPACE, "int:7")
True
>>> ids.id_of(ids.uuids[2].bytes)
'pear'
"""
import uuid

from mrjobs.parsing import NAMESPACE  # (the command line's --ids any maps ids so too)

__all__ = ["NAMESPACE", "IdMap", "uuid_of"]


def uuid_of(value):
    """The UUID key of one id (see the module)."""
    if isinstance(value, uuid.UUID):
        return value
    if isinstance(value, str):
        return uuid.uuid5(NAMESPACE, "str:" + value)
    if isinstance(value, int) and not isinstance(value, bool):
        return uuid.uuid5(NAMESPACE, "int:%d" % value)
    try:  # numpy's integers and strings
        import numpy as np
    except ImportError:  # pragma: no cover - numpy is a dependency
        np = None
    if np is not None and isinstance(value, np.integer):
        return uuid_of(int(value))
    if np is not None and isinstance(value, np.str_):
        return uuid_of(str(value))
    raise TypeError("an id is an int, a str or a uuid.UUID, not %s (%r)"
                    % (type(value).__name__, value))


class IdMap:
    """A family of ids (a matrix's rows, say), in their order, and their UUID
    keys: :attr:`ids`, :attr:`uuids`, :meth:`id_of` a key's id, :meth:`index_of`
    its position.  ``what`` names the family in messages."""

    def __init__(self, ids, what="ids"):
        self.ids = list(ids)
        self.uuids = []
        self._index = {}
        for i, value in enumerate(self.ids):
            try:
                key = uuid_of(value)
            except TypeError as e:
                raise TypeError("%s[%d]: %s" % (what, i, e)) from None
            j = self._index.setdefault(key.bytes, i)
            if j != i:
                same = ("is given twice" if self.ids[j] == value
                        else "gets the same UUID as %s[%d] (%r)" % (what, j, self.ids[j]))
                raise ValueError("%s[%d] (%r) %s: ids must be unique" % (what, i, value, same))
            self.uuids.append(key)

    def __len__(self):
        return len(self.ids)

    def index_of(self, key):
        """Position of the id whose UUID has the 16 bytes ``key`` (KeyError if none)."""
        return self._index[key]

    def id_of(self, key):
        """The id whose UUID has the 16 bytes ``key``."""
        return self.ids[self._index[key]]
