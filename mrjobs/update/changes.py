"""A change set read, and yesterday's corpus cut by it into today's.

:func:`read_removals` reads ``--remove`` files (one id a line),
:func:`read_additions` the ``--add`` files (vectors in yesterday's input
format), and :class:`CorpusCut` reads yesterday's corpus once, line by line,
and writes today's corpus in two files, which the update's runs read:
``part-00000``, yesterday's lines less the removed vectors' and less those of
the rows computed again; ``part-00001``, the lines of the rows computed
again, then the added lines.  Lines stay as they were written (the lines of a
vector stay together, in their order): today's corpus is what a user would
give a full run.
"""
import os
import uuid

import numpy as np

from mrjobs.parsing import InputError, parse_vector
from mrjobs.runtime.failures import JobError
from mrjobs.runtime.paths import listed_files

__all__ = ["ChangeError", "read_removals", "read_additions", "CorpusCut", "vector_id"]


class ChangeError(JobError):
    """A change set that does not apply to yesterday's corpus."""


def vector_id(doc):
    """The id as the output writes it, of a vector's 16 bytes."""
    return str(uuid.UUID(bytes=bytes(doc)))


def _lines(path):
    """``(line number, line without its ending)`` of a file, blank lines too."""
    with open(path, "rb") as f:
        for number, line in enumerate(f, 1):
            yield number, line.rstrip(b"\r\n")


def _files(paths, option):
    files = []
    for path in paths:
        found = list(listed_files(path))
        if not found:
            raise ChangeError("%s %s: no such file (or no file in it)" % (option, path))
        files.extend(found)
    return files


def read_removals(paths):
    """``{16-byte id: "file:line"}`` of the ``--remove`` files: a vector id a
    line (blank lines skipped); anything else is refused naming its line."""
    removed = {}
    for path in _files(paths, "--remove"):
        for number, line in _lines(path):
            text = line.decode("utf-8", "replace").strip()
            if not text:
                continue
            try:
                key = uuid.UUID(text).bytes
            except ValueError:
                raise ChangeError("--remove %s line %d: %r is not a vector id (a UUID a "
                                  "line)" % (path, number, text[:80])) from None
            removed.setdefault(key, "%s line %d" % (path, number))
    return removed


def read_additions(paths, fmt, float32):
    """The ``--add`` files' lines, each checked as the job reads it: a list of
    ``(16-byte id, line)``.  A line the job would skip (bad input) is refused
    here, naming it: an update never carries a vector that is not read."""
    added = []
    for path in _files(paths, "--add"):
        for number, line in _lines(path):
            try:
                parsed = parse_vector(line, fmt, float32)
            except InputError as e:
                raise ChangeError("--add %s line %d: %s (%s): fix or drop the line"
                                  % (path, number, e.kind, e)) from None
            if parsed is not None:
                added.append((bytes(parsed[0]), line))
    return added


class CorpusCut:
    """Yesterday's corpus cut by a change set into the update's files.

    Parameters
    ----------
    work : str
        The directory to write into: ``part-00000`` (``rest``: the vectors
        whose rows are merged) and ``part-00001`` (``again``: those whose
        rows are computed again, the added ones last): today's corpus.
    fmt, float32
        Yesterday's ``--input-format`` and ``--float32``.
    features : bool
        Count the distinct features of yesterday's and today's corpus
        (measures that take ``--num-features``).
    """

    def __init__(self, work, fmt, float32, features=False):
        self.work, self.fmt, self.float32 = work, fmt, float32
        self.paths = {"rest": os.path.join(work, "part-00000"),
                      "again": os.path.join(work, "part-00001")}
        self.counts = dict.fromkeys(self.paths, 0)
        self.features = ([], []) if features else None
        self.kept = None

    def write(self, corpus, removed, again, added):
        """Read the corpus files and write the files; ``removed``: the ids to
        drop; ``again``: the ids whose rows are computed again; ``added``:
        :func:`read_additions`' list.  Raises :class:`ChangeError` for an id
        of ``--remove`` that the corpus lacks, or an added vector whose id it
        holds and ``--remove`` does not name."""
        seen, kept = set(), []
        out = {name: open(path, "wb") for name, path in self.paths.items()}
        try:
            for path in corpus:
                for _, line in _lines(path):
                    self._take(line, removed, again, seen, kept, out)
            missing = [(where, key) for key, where in removed.items() if key not in seen]
            if missing:
                raise ChangeError("--remove %s: %s is not a vector of yesterday's corpus%s" % (
                    missing[0][0], vector_id(missing[0][1]), " (nor %d more id(s))" % (
                        len(missing) - 1) if len(missing) > 1 else ""))
            self.kept = np.unique(np.array(kept, dtype="S16")) if kept else np.array(
                [], dtype="S16")
            self._add(added, out)
        finally:
            for f in out.values():
                f.close()

    def _take(self, line, removed, again, seen, kept, out):
        key = self._quick_id(line)
        if key is not None:
            self._keep(key, line, removed, again, seen, kept, out)
            return
        try:
            parsed = parse_vector(line, self.fmt, self.float32)
        except InputError:
            parsed = None  # a bad line stays one: skipped and counted by every run
            if line.strip():
                self._put(out, "rest", line)
            return
        if parsed is None:
            return
        key = bytes(parsed[0])
        if self.features is not None:
            self.features[0].append(parsed[1])
        if self.features is not None and key not in removed:
            self.features[1].append(parsed[1])
        self._keep(key, line, removed, again, seen, kept, out)

    def _keep(self, key, line, removed, again, seen, kept, out):
        if key in removed:
            seen.add(key)
            return
        kept.append(key)
        self._put(out, "again" if key in again else "rest", line)

    def _quick_id(self, line):
        """The id of a JSON line that begins ``{"id": "<uuid>"`` and names no
        other "id" (what the job reads as its id), or None: the line is then
        parsed whole (as it is where the features are counted)."""
        if (self.features is not None or self.fmt not in ("json", "auto")
                or not line.startswith(b'{"id": "') or line[44:45] != b'"'
                or line.count(b'"id"') != 1):
            return None
        digits = line[8:44].replace(b"-", b"")
        if len(digits) != 32 or not digits.isalnum():
            return None  # (uuid.UUID's other spellings: the parser's)
        try:
            return bytes.fromhex(digits.decode("ascii"))
        except ValueError:
            return None

    def _add(self, added, out):
        held = self.kept
        for key, line in added:
            i = np.searchsorted(held, key)
            if i < len(held) and held[i] == key:
                raise ChangeError(
                    "--add has vector %s, which yesterday's corpus holds and --remove does "
                    "not name: to change a vector, name its id in --remove and add its new "
                    "lines" % vector_id(key))
            if self.features is not None:
                self.features[1].append(parse_vector(line, self.fmt, self.float32)[1])
            self._put(out, "again", line)

    def _put(self, out, name, line):
        out[name].write(line + b"\n")
        self.counts[name] += 1

    def distinct_features(self):
        """(yesterday's, today's) numbers of distinct features."""
        return tuple(len(np.unique(np.concatenate(f))) if f else 0 for f in self.features)
