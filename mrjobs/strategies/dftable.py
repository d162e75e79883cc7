"""The prefix strategy's df table: a first run counts the lines that hold
each feature, and the job's own run orders every vector's features by it.

Prefix filtering needs one order of the features, the same for every
vector, and it prunes best with the rarest first.  Without a table the job
finds each feature's df in two steps of its own (a df step keyed by the
feature, and a prefix step that sends each entry back to its vector with its
df: the input through the shuffle twice more).  With one, the first run
(``--prefix-df``, :class:`DfCount`) does a word count -- each map task counts
the features of its lines, and the lines of each vector id, and sends the
counts, grouped by the ids' last byte, through a combiner to the reducers
that sum them: its shuffle is the features a map task saw and the ids, not
the entries -- and the launcher writes its output as a file
(:func:`write_table`, :data:`DF_DTYPE` records sorted by id), which the job's
own run ships to its tasks (``--df-table``).  There each vector's features
are looked up (:class:`DfTable`) and the vector sent straight to its prefix
features: by the mappers, where the first run saw every vector id on one
line (``--unique-ids``: two steps, pairs and rows), else by the vectors
step's reducers once they have merged an id's lines (three) -- where there
were five.  The first run also counts the lines with a negative weight:
where there are none (``--nonnegative``), the copies carry no earlier
prefix features (:func:`mrjobs.strategies.prefixing.repeats`).

A count is of lines, not of distinct vectors (lines that share an id are
merged after it); any one order keeps the strategy exact, and lines that
share an id are few.  A feature the table does not have (an input that
changed between the two runs) stops the run: its vectors could not be put in
the order the others are.  ``--max-df``, whose cut needs each feature's
vectors, and posting lists in (``--input-format postings``) keep the two
steps.
"""
import logging
import os
import posixpath
import uuid

import numpy as np
from mrjob.util import to_lines

from mrcodecs.jobwire import Stripe
from mrjobs.pairs.idarrays import sort_sum

__all__ = ["DF_DTYPE", "DfCount", "DfRunProtocol", "DfTable", "PrefixDfRun", "write_table"]

log = logging.getLogger("mrjobs.job")

#: a record of the table file: a feature's id, the lines that hold it
DF_DTYPE = np.dtype([("id", "S16"), ("df", "<i8")])


#: byte 0 of a bucket's key: of features' counts, of vector ids' lines, or
#: of the lines with a negative weight (one count, under an id of zeros)
_FEATURES, _VECTORS, _NEGATIVE = 0, 1, 2


def _bucket_key(kind, last):
    """The key of the features (or vector ids) whose id ends in the byte ``last``."""
    return bytes([kind]) + bytes(14) + bytes([last])


def _by_bucket(kind, ids, counts):
    """``(key, Stripe)`` records of sorted unique ``ids`` and their counts,
    one a last byte of the ids."""
    last = np.frombuffer(ids.tobytes(), np.uint8)[15::16]
    order = np.argsort(last, kind="stable")
    ids, counts, last = ids[order], counts[order], last[order]
    cuts = np.flatnonzero(np.diff(last)) + 1
    for i, c in zip(np.split(ids, cuts), np.split(counts, cuts)):
        yield _bucket_key(kind, np.frombuffer(i[:1].tobytes(), np.uint8)[15]), Stripe(i, c)


def _summed(stripes):
    """The sorted unique ids of ``stripes`` and the sums of their counts."""
    ids, counts, _, _ = sort_sum(np.concatenate([s.ids for s in stripes]),
                                 np.concatenate([s.values for s in stripes]))
    return ids, counts


class DfCount:
    """The one step of the df run: map tasks count their lines' features
    and ids (and the lines with a negative weight), the combiners and
    reducers sum the counts of a bucket's; a reducer writes its features'
    counts, the ids of more than one line, and the negative lines if any."""

    def __init__(self, job):
        self.job = job

    def mapper_init(self):
        self.job._task_init()
        self._feats, self._weights, self._docs, self._n = [], [], [], 0

    def mapper(self, _, line):
        vec = self.job.read_vector(line)
        if vec is None:
            return
        self._docs.append(vec[0])
        self._feats.append(vec[1])
        self._weights.append(vec[2])
        self._n += vec[1].shape[0] + 1
        if self._n >= self.job.options.buffer_entries:
            yield from self._flush()

    def _flush(self):
        if not self._docs:
            return
        for kind, ids in ((_FEATURES, np.concatenate(self._feats)),
                          (_VECTORS, np.frombuffer(b"".join(self._docs), "S16"))):
            if ids.shape[0]:
                ids, counts = np.unique(ids, return_counts=True)
                yield from _by_bucket(kind, ids, counts.astype(np.float64))
        # the lines with a negative weight, counted once a flush
        lengths = np.fromiter(map(len, self._weights), np.int64, len(self._weights))
        line = np.repeat(np.arange(lengths.shape[0]), lengths)
        negative = np.unique(line[np.concatenate(self._weights) < 0]).shape[0]
        if negative:
            yield _bucket_key(_NEGATIVE, 0), Stripe(np.zeros(1, "S16"),
                                                    np.array([float(negative)]))
        self._feats, self._weights, self._docs, self._n = [], [], [], 0

    def mapper_final(self):
        yield from self._flush()
        self.job._task_final()

    def combiner(self, key, stripes):
        yield key, Stripe(*_summed(list(stripes)))

    def reducer(self, key, stripes):
        ids, counts = _summed(list(stripes))
        if key[0] == _VECTORS:  # only the ids of more than one line
            ids, counts = ids[counts > 1], counts[counts > 1]
            if not ids.shape[0]:
                return
        yield key, Stripe(ids, counts)


class DfRunProtocol:
    """The df run's output lines: a bucket's key, its ids and their counts,
    as text (hex, and decimal numbers by commas), which every runner's output
    carries (Spark's is UTF-8 text)."""

    def write(self, key, stripe):
        counts = ",".join(map(str, stripe.values.astype(np.int64).tolist()))
        return b"%s\t%s\t%s" % (key.hex().encode("ascii"), stripe.ids.tobytes().hex().encode(
            "ascii"), counts.encode("ascii"))

    def read(self, line):
        key, ids, counts = line.split(b"\t")
        return bytes.fromhex(key.decode("ascii")), Stripe(
            np.frombuffer(bytes.fromhex(ids.decode("ascii")), "S16"),
            np.array(counts.split(b","), np.float64))


def write_table(lines, path):
    """Write the df run's output ``lines`` (:class:`DfRunProtocol`'s) to
    ``path`` as :data:`DF_DTYPE` records of the features, sorted by id;
    return how many features it holds, how many vector ids are on more than
    one line, and how many lines hold a negative weight."""
    protocol = DfRunProtocol()
    ids, counts, repeated, negative = [], [], 0, 0
    for line in lines:
        line = line.rstrip(b"\r\n")
        if not line:
            continue
        key, stripe = protocol.read(line)
        if key[0] == _VECTORS:
            repeated += len(stripe)
            continue
        if key[0] == _NEGATIVE:
            negative += int(stripe.values.sum())
            continue
        ids.append(stripe.ids)
        counts.append(stripe.values)
    table = np.zeros(sum(i.shape[0] for i in ids), DF_DTYPE)
    if ids:
        table["id"] = np.concatenate(ids)
        table["df"] = np.concatenate(counts)
        table.sort(order="id")
    table.tofile(path)
    return table.shape[0], repeated, negative


class DfTable:
    """The table file at ``path``, as a task reads it."""

    def __init__(self, path):
        table = np.fromfile(path, DF_DTYPE)
        self.ids = np.ascontiguousarray(table["id"])
        self.counts = table["df"].astype(np.float64)

    def lookup(self, doc, ids):
        """The counts of a vector's features ``ids`` (``doc``: its id, for
        the error), as float64, and their places in the table (uint32: in
        the ids' order, what an indexed block record carries)."""
        at = np.minimum(np.searchsorted(self.ids, ids), max(self.ids.shape[0] - 1, 0))
        if not self.ids.shape[0] or not (self.ids[at] == ids).all():
            missing = ids[:1] if not self.ids.shape[0] else ids[self.ids[at] != ids][:1]
            raise ValueError(
                "feature %s of vector %s is not in the prefix strategy's df table, which "
                "the run before this one counted from the same input: the input changed "
                "between the two runs" % (uuid.UUID(bytes=missing.tobytes()),
                                          uuid.UUID(bytes=doc)))
        return self.counts[at], at.astype(np.uint32)


class PrefixDfRun:
    """What the df run adds to the dot products job (a mixin before
    :class:`~mrjobs.strategies.names.IdsOfAnyKind`): the run, its output, the
    table its second run, the job's own, reads."""

    def set_up_runs(self):
        """Where the launcher runs the job under ``--strategy prefix``: make
        this run the df count (``--prefix-df``), whose output the job's own
        run, the second, reads as its ``--df-table`` (not with ``--max-df``,
        nor posting lists in: their df steps stay)."""
        o = self.options
        if (o.strategy == "prefix" and o.max_df is None and not o.df_table
                and not o.prefix_df and not o.names_of and not self._from_postings()):
            o.prefix_df = True
            self._cl_args = list(self._cl_args) + ["--prefix-df"]

    def preliminary_run(self):
        return self.options.prefix_df

    def second_run(self):
        return self.options.prefix_df or super().second_run()

    def start_second_run(self, first):
        """After the df run ``first`` (a runner): its output as the table file,
        beside its own temporary files, and this job the job's own run (the
        mappers send the vectors where every id is on one line)."""
        if not self.options.prefix_df:
            return super().start_second_run(first)
        path = os.path.join(first._get_local_tmp_dir(), "df-table")
        out = first.get_output_dir()
        parts = sorted(p for p in first.fs.ls(out) if posixpath.basename(p).startswith("part-"))
        n, repeated, negative = write_table(
            (line for p in parts for line in to_lines(first.fs.cat(p))), path)
        log.info("prefix strategy: %d feature(s) counted; %s", n, (
            "every vector id on one line: the mappers send the vectors to their prefix "
            "features" if not repeated else "%d vector id(s) on more than one line: a "
            "vectors step merges them first" % repeated))
        if negative:
            log.info("prefix strategy: %d line(s) with a negative weight: each copy carries "
                     "its earlier prefix features", negative)
        o = self.options
        o.prefix_df, o.df_table, o.unique_ids = False, path, not repeated
        o.nonnegative = not negative
        self._cl_args = [a for a in self._cl_args if a != "--prefix-df"] + [
            "--df-table", path] + (["--unique-ids"] if o.unique_ids else []) + (
            ["--nonnegative"] if o.nonnegative else [])
        self._strategy = None

    def output_protocol(self):
        if self.options.prefix_df:  # the df run's lines, for the table
            return DfRunProtocol()
        return super().output_protocol()
