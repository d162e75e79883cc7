"""What the mrsparse jobs share: options, protocols, the job's part of a
launch, and the task side: reading input lines into checked vectors.

The launch itself (runner arguments, the output committer, signals, the
report) is :mod:`mrjobs.runtime.launch`'s; the rest lives in its own module:
:mod:`mrjobs.runtime.shipping` (the packages' zip),
:mod:`mrjobs.counters` (counter groups, batching, the report),
:mod:`mrjobs.strategies.combining` (in-task combining), :mod:`mrjobs.strategies.postings` (posting lists
and the df-cut), :mod:`mrjobs.strategies.stripes` and :mod:`mrjobs.strategies.blocks` (the two
strategies of the dot-products job, behind :mod:`mrjobs.strategies.contract`).
"""
import functools
import logging
import os
import re
import uuid

import numpy as np
from mrjob.compat import jobconf_from_env
from mrjob.job import MRJob
from mrjob.protocol import BytesValueProtocol

from mrjobs.counters import (DUPLICATE_FEATURE, DUPLICATE_VECTOR_LINES, EMPTY_POSTING_LIST,
                             EMPTY_VECTOR, INPUT, POSTING_LISTS_READ, SKIPPED, VECTORS_READ,
                             ZERO_WEIGHT, Counters)
from mrjobs.options import (add_common_options, check_common_options, command_name,
                            numbers_as_values)
from mrjobs.pairs.idarrays import merge_sum, sort_sum
from mrjobs.parsing import (BAD_SUM, BAD_WEIGHT, COMPACT_FORMATS, FORMATS, POSTINGS, TINY_WEIGHT,
                            InputError, fast_vector, float32_zeros, parse_vector, weight_limit)
from mrjobs.runtime.failures import JobError
from mrjobs.runtime.jobkey import claimed_key
from mrjobs.runtime.paths import input_file, local_path
from mrjobs.runtime.runnerargs import LAUNCH_DIR, runner_class, runner_kwargs
from mrjobs.runtime.streams import kind as input_kind
from mrjobs.runtime.tasks import task_errors
from mrjobs.runtime.taskstatus import TaskStatus

__all__ = ["Runs", "SparseJob", "JobError", "input_file", "input_kind"]

log = logging.getLogger(__name__)


def _drop_notice(logger, start, unless_verbose=False):
    """Drop ``logger``'s messages that start with ``start`` (with
    ``unless_verbose``, only while mrjob does not log at DEBUG: ``-v``)."""
    def keep(record):
        if unless_verbose and logging.getLogger("mrjob").isEnabledFor(logging.DEBUG):
            return True
        return not record.getMessage().lstrip().startswith(start)
    logging.getLogger(logger).addFilter(keep)


# notices on every run that ask for nothing: mrjob's "No configs specified for inline
# runner" (the jobs need no mrjob.conf), and the JVM's on the module Spark 4 always adds
_drop_notice("mrjob.conf", "No configs ")
_drop_notice("mrjob.logs.step", "WARNING: Using incubator modules: jdk.incubator.vector")
# mrjob's notes on its own temp directories and on where it left the output, on default
# verbosity: the temp directories are removed anyway, and "job output is in" names mrjob's
# staging directory, not where the output ends up (the launcher says that); shown with -v
for _logger, _start in (("mrjob.runner", "Creating temp directory "),
                        ("mrjob.runner", "Removing temp directory "),
                        ("mrjob.runner", "job output is in "),
                        ("mrjob.hadoop", "Removing HDFS temp directory ")):
    _drop_notice(_logger, _start, unless_verbose=True)


class Runs:
    """A job's runs as the launcher (:mod:`mrjobs.runtime.launch`) and
    :func:`mrjobs.testing.run_job` chain them: here the job's own alone; a
    job adds a run before its own (the prefix strategy's df count) or after
    it, over its output (``--ids any``'s)."""

    def set_up_runs(self):
        """Where the launcher runs the job: set up the runs before its own."""

    def preliminary_run(self):
        """True where this run only prepares the job's own, which comes after
        it (its counters are not the job's)."""
        return False

    def second_run(self):
        """True where a second run (``start_second_run``) reads this run's output."""
        return False


class SparseJob(Runs, MRJob):
    """Base class of the mrsparse jobs: options, protocols, the job's part of a
    launch (:mod:`mrjobs.runtime.launch` runs it) and the task side."""

    INPUT_PROTOCOL = BytesValueProtocol
    #: the --input-format choices (:mod:`mrjobs.parsing`)
    INPUT_FORMATS = FORMATS

    #: the :class:`~mrjobs.runtime.launch.Launch` under way (launcher side only)
    launcher = None

    def configure_args(self):
        super().configure_args()
        add_common_options(self)

    def memory_advice(self):
        """What a task out of memory can change (the options of this job)."""
        return "lower --buffer-entries (now %d)" % self.options.buffer_entries

    # -- options -----------------------------------------------------------

    @property
    def wire_dtype(self):
        return np.float32 if self.options.float32 else np.float64

    def internal_protocol(self):
        from mrjobs.jobprotocols import internal_protocol_class
        return internal_protocol_class(self.options.wire)()

    def output_protocol(self):
        from mrjobs.jobprotocols import CompactOutputProtocol, NeighboursJSONProtocol
        if self.options.output_format == "compact":
            return CompactOutputProtocol()
        return NeighboursJSONProtocol()

    def _check_options(self):
        check_common_options(self.arg_parser, self.options, self.is_task())

    def _usage(self):
        name = command_name(self)
        return "%s [options] [input files]" % name if name else super()._usage()

    def load_args(self, args):
        # (--threshold -1e-3: argparse takes only -1 and -.5 for values; mrjob
        # parses _cl_args again for the tasks' and the runner's arguments)
        self._cl_args = args = numbers_as_values(self.arg_parser, args)
        super().load_args(args)
        self._check_options()

    # -- launching -----------------------------------------------------------

    def _runner_class(self):  # the job key claimed (mrjobs.runtime.jobkey)
        return claimed_key(runner_class(self.options.runner) or super()._runner_class())

    def split_bytes(self):
        """Bytes of a step's input per local task where the output does not depend
        on the splits (:mod:`mrjobs.runtime.localrunner`); None: mrjob's 2 a core."""
        return None

    def _runner_kwargs(self):
        return runner_kwargs(self, super()._runner_kwargs(), self._runner_class().alias,
                             self.launcher)

    @functools.cached_property
    def task_python_probes(self):
        """What each task Python (by its command) can import, asked once
        (:func:`mrjobs.runtime.runnerargs.probe`)."""
        return {}

    def run_job(self):
        """Run the job as mrjob does, with what :mod:`mrjobs.runtime.launch` adds (progress,
        one-line errors, the output committed on success, the report, no leftovers)."""
        from mrjobs.runtime.launch import run_job  # the launcher's: tasks need not load it
        run_job(self)

    # -- launching: the job's own part -------------------------------------------

    def other_inputs(self):
        """(option, path) of inputs given by options (e.g. --queries)."""
        return []

    def read_streams(self, streams):
        """Read the input streams into files (:class:`~mrjobs.runtime.streams.InputStreams`)."""
        streams.read_inputs(self.options, self._stdin)

    def check_launch(self):
        """The job's own checks before it runs (once its streams are files)."""

    def manifest(self):
        """What made the output, for its manifest (:mod:`mrjobs.runtime.manifest`), or None."""

    #: modules the tasks import (checked in the task Python before a local run)
    TASK_MODULES = ("numpy",)

    def task_modules(self):
        return self.TASK_MODULES

    def temp_disk_estimate(self, inputs, free):
        """Peak bytes of temp disk of a local run on ``inputs`` (local paths) with
        ``free`` free, or None (none known or needed): the launcher refuses above ``free``."""
        return None

    def check_something_was_read(self, counters):
        total = {}
        for step in counters or ():
            for name, n in step.get(INPUT, {}).items():
                total[name] = total.get(name, 0) + n
        if total.get(VECTORS_READ):
            return
        skipped = sum(total.get(name, 0) for name in SKIPPED)
        raise JobError("not one vector could be read from the input (%d line(s) skipped as "
                       "bad, the rest blank); check the input paths and --input-format "
                       "(%s)" % (skipped, FORMAT_HINT))

    # -- task side: errors -----------------------------------------------------

    def run_mapper(self, step_num=0):
        with task_errors(self, "mapper", step_num):
            super().run_mapper(step_num)

    def run_combiner(self, step_num=0):
        with task_errors(self, "combiner", step_num):
            super().run_combiner(step_num)

    def run_reducer(self, step_num=0):
        with task_errors(self, "reducer", step_num):
            super().run_reducer(step_num)

    # -- task side: input ----------------------------------------------------

    @functools.cached_property
    def counts(self):
        """The task's :class:`~mrjobs.counters.Counters` (one object for the
        job's life; :meth:`_task_init` empties it)."""
        return Counters()

    @functools.cached_property
    def status(self):
        """The task's status line (:class:`~mrjobs.runtime.taskstatus.TaskStatus`)."""
        return TaskStatus(self.set_status, on=False)  # on from _read_input

    def _task_init(self):
        self.counts.clear()
        self._lines = 0

    def _read_input(self):
        """The task's input lines, told every few seconds as the task's status
        (a task run otherwise, as on Spark, writes none)."""
        self.status.start()
        for line in super()._read_input():
            self.status.read(len(line))
            yield line
        self.status.tell()

    def _task_final(self):
        self.counts.send(self)
        self.status.tell(done=True)

    def read_vector(self, line):
        """Parse, check and normalise one input line: ``(doc, ids, weights)``
        (sorted unique feature ids, zero weights dropped), or None for a
        blank or skipped line."""
        self._lines += 1
        fmt = "named" if getattr(self.options, "ids", None) == "any" else self.options.input_format
        fast = fast_vector(line, fmt, self.options.float32)
        if fast is not None:  # (the common line: nothing to count but itself)
            self.counts.add(INPUT, VECTORS_READ)
            return fast
        try:
            parsed = parse_vector(line, fmt, self.options.float32)
        except InputError as e:
            if self.options.strict:
                first = self._lines == 1 and _split_start() == 0  # the file's first line
                hint = "; is the input in an accepted format? --input-format " + FORMAT_HINT \
                    if first and e.kind != BAD_WEIGHT else ""
                raise InputError(e.kind, "%s: %s: %s (line: %s%s)" % (
                    _where(self._lines), e.kind, e, shown_line(line), hint)) from None
            self.counts.add(INPUT, e.kind)
            return None
        if parsed is None:
            return None
        doc, ids, w = parsed
        fmt = self.options.input_format
        postings = fmt == POSTINGS
        self.counts.add(INPUT, POSTING_LISTS_READ if postings else VECTORS_READ)
        if fmt not in COMPACT_FORMATS:  # (a compact record's ids are checked ascending)
            ids, w, _, merged = sort_sum(ids, w)
            if merged:
                self.counts.add(INPUT, DUPLICATE_FEATURE, merged)
        zero = w == 0.0
        if zero.any():
            self.counts.add(INPUT, ZERO_WEIGHT, int(zero.sum()))
            ids, w = ids[~zero], w[~zero]
        tiny = float32_zeros(ids, w) if self.options.float32 else None
        if tiny is not None:  # float32 would carry them as 0.0: dropped as zeros are
            if self.options.strict:
                raise InputError(TINY_WEIGHT, "%s: %s: %s (line: %s)" % (
                    _where(self._lines), TINY_WEIGHT, tiny[1], shown_line(line)))
            self.counts.add(INPUT, TINY_WEIGHT, int(tiny[0].sum()))
            ids, w = ids[~tiny[0]], w[~tiny[0]]
        if not ids.shape[0]:
            self.counts.add(INPUT, EMPTY_POSTING_LIST if postings else EMPTY_VECTOR)
        return doc, ids, w

    def merge_lines(self, doc, parts, postings=False, counts=None):
        """One vector from the :class:`~mrcodecs.jobwire.Stripe` s of the lines
        that share the id ``doc``: weights of a repeated feature summed in a
        canonical order (:func:`mrjobs.pairs.idarrays.merge_sum`), zero sums dropped.
        When a sum goes beyond the range of the weights, the vector's lines are
        counted as bad input and skipped (refused under ``--strict``).

        With ``postings`` the parts are the pieces of one vector gathered from
        posting lists (``--input-format postings``): not duplicate lines; a
        feature in more than one of them (a feature given by more than one
        posting list) is a duplicate feature, summed as such.

        Returns
        -------
        (ids, weights) or None
            Sorted unique ids and float64 weights (empty if they all cancel);
            None when the lines are skipped.
        """
        counts = self.counts if counts is None else counts
        ids, w, _, sizes = merge_sum(np.concatenate([p.ids for p in parts]),
                                     np.concatenate([p.values for p in parts]))
        if not postings:
            counts.add(INPUT, DUPLICATE_VECTOR_LINES, len(parts) - 1)
        elif sizes.shape[0] < sum(p.ids.shape[0] for p in parts):
            counts.add(INPUT, DUPLICATE_FEATURE, int((sizes > 1).sum()))
        over = ~(np.abs(w) <= weight_limit(self.options.float32))
        if over.any():
            i = int(np.argmax(over))
            e = InputError(BAD_SUM, "vector %s: the weights of feature %s, summed over its "
                           "%d %s, go beyond %s's range"
                           % (uuid.UUID(bytes=doc), uuid.UUID(bytes=ids[i:i + 1].tobytes()),
                              len(parts), "pieces from posting lists" if postings else "lines",
                              "float32" if self.options.float32 else "float64"))
            if self.options.strict:
                raise e
            counts.add(INPUT, BAD_SUM, 1 if postings else len(parts))
            return None
        zero = w == 0.0
        if zero.any():
            counts.add(INPUT, ZERO_WEIGHT, int(zero.sum()))
            ids, w = ids[~zero], w[~zero]
        return ids, w


#: the input formats, for messages about unreadable input
FORMAT_HINT = ("accepted: json, one {\"id\": UUID, \"features\": {UUID: weight, ...}} a "
               "line; tsv, one UUID TAB UUID:weight UUID:weight ... a line; compact, "
               "mrcodecs VectorProtocol records (python -m mrjobs.convert --to compact "
               "makes them); auto (the default) tells them apart line by line")


def shown_line(line, limit=120):
    """An input line as a message shows it: text in quotes, with Python's
    escapes for TAB, control bytes and bytes that are not UTF-8 (``\\xff``),
    cut at ``limit`` characters.

    >>> print(shown_line(b"caf\\xc3\\xa9\\t1:\\xff"))
    'café\\t1:\\xff'
    """
    if isinstance(line, (bytes, bytearray, memoryview)):
        line = bytes(line).decode("utf-8", "surrogateescape")
    # a byte that is not UTF-8 comes back as a lone surrogate: shown as its byte
    text = re.sub(r"\\udc([89a-f][0-9a-f])", r"\\x\1", repr(line))
    return text if len(text) <= limit else text[:limit] + "..."


def _where(line_in_task):
    """The input line a task is at, as a user can find it: the path as given
    (``file://x`` is mrjob's URI for the relative path ``x``) and the line
    number in the file (counted where the file is local and the task's split
    starts inside it; said to be relative to the split where it cannot be)."""
    path = input_file()
    start = _split_start()
    if path.startswith("file:"):
        path = local_path(path)
    if start == 0:
        return "%s, line %d" % (path, line_in_task)
    try:
        with open(os.path.join(os.environ.get(LAUNCH_DIR, ""), path), "rb") as f:
            before = sum(chunk.count(b"\n") for chunk in _chunks(f, start))
        return "%s, line %d" % (path, before + line_in_task)
    except OSError:
        return ("%s, line %d of the split that starts at byte %d (the line number in the "
                "file is not known here)" % (path, line_in_task, start))


def _split_start():
    """The byte of its input file at which this map task's split starts."""
    return int(jobconf_from_env("mapreduce.map.input.start", "0") or 0)


def _chunks(f, nbytes, size=1 << 20):
    while nbytes > 0:
        chunk = f.read(min(size, nbytes))
        if not chunk:
            return
        nbytes -= len(chunk)
        yield chunk
