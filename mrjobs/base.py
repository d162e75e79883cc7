"""What the mrsparse jobs share: options, launching (with shipping and the
end-of-run report) and reading input lines into checked vectors.

The rest lives in its own module: :mod:`mrjobs.shipping` (the packages' zip),
:mod:`mrjobs.counters` (counter groups, batching, the report),
:mod:`mrjobs.buffers` (in-task combining), :mod:`mrjobs.index` (the index step
and the df-cut), :mod:`mrjobs.stripes` and :mod:`mrjobs.blocks` (the two
strategies of the dot-products job).
"""
import codecs
import glob
import logging
import os
import sys
import time

import numpy as np
from mrjob.compat import jobconf_from_env
from mrjob.job import MRJob
from mrjob.protocol import BytesValueProtocol
from mrjob.step import StepFailedException
from mrjob.util import log_to_null, log_to_stream

from .counters import DFCUT, INPUT, SKIPPED, WORK, Counters, run_report
from .faults import task_hooks
from .progress import ProgressMonitor, status_text
from .kernels import sort_sum
from .parsing import FORMATS, InputError, parse_vector
from .shipping import package_zip

__all__ = ["SparseJob", "JobError", "INPUT", "DFCUT", "WORK", "SKIPPED", "package_zip",
           "run_report"]

log = logging.getLogger(__name__)


def _drop_notice(logger, start):
    logging.getLogger(logger).addFilter(lambda r: not r.getMessage().lstrip().startswith(start))


# notices on every run that ask for nothing: mrjob's "No configs specified for inline
# runner" (the jobs need no mrjob.conf), and the JVM's on the module Spark 4 always adds
_drop_notice("mrjob.conf", "No configs ")
_drop_notice("mrjob.logs.step", "WARNING: Using incubator modules: jdk.incubator.vector")


class SparseJob(MRJob):
    """Base class of the mrsparse jobs (options, input, index, shipping)."""

    INPUT_PROTOCOL = BytesValueProtocol

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg(
            "--input-format", choices=FORMATS, default="auto",
            help="Format of the input lines: 'json' ({\"id\": UUID, \"features\": "
                 "{UUID: weight, ...}}), 'tsv' (UUID TAB UUID:weight UUID:weight ...), or "
                 "'auto' (default): lines starting with '{' are JSON, others TSV.")
        self.add_passthru_arg(
            "--strict", action="store_true", default=False,
            help="Fail at the first bad input line (naming its file and line) instead of "
                 "counting and skipping it.")
        self.add_passthru_arg(
            "--max-df", type=int, default=None, metavar="N",
            help="Skip features that occur in more than N vectors (the df-cut). Results "
                 "are then approximate; the counters in group '%s' say how many "
                 "features and partial products were dropped." % DFCUT)
        self.add_passthru_arg(
            "--float32", action="store_true", default=False,
            help="Carry weights as float32 between steps: fewer bytes, about 7 "
                 "significant digits.")
        self.add_passthru_arg(
            "--wire", choices=("compact", "json"), default="compact",
            help="Encoding of the records between steps: 'compact' (default; binary "
                 "mrcodecs stripes) or 'json' (mrjob's JSONProtocol, same logic).")
        self.add_passthru_arg(
            "--output-format", choices=("json", "compact"), default="json",
            help="'json' (default): one line per key, \"UUID\" TAB {\"UUID\": number}. "
                 "'compact': mrcodecs VectorProtocol records, to chain into another job.")
        self.add_passthru_arg(
            "--overwrite-output", action="store_true", default=False,
            help="Replace the contents of a non-empty --output-dir (by default the job "
                 "refuses to start, as Hadoop does, so that no stale part file is mixed "
                 "into the results).")
        self.add_passthru_arg(
            "--buffer-entries", type=int, default=1000000, metavar="N",
            help="Entries a task buffers for in-task combining before it flushes "
                 "(bounds task memory; default 1000000; README gives measured peaks).")

    # -- options -----------------------------------------------------------

    @property
    def wire_dtype(self):
        return np.float32 if self.options.float32 else np.float64

    def internal_protocol(self):
        from .wire import internal_protocol_class
        return internal_protocol_class(self.options.wire)()

    def output_protocol(self):
        from .wire import CompactOutputProtocol, NeighboursJSONProtocol
        if self.options.output_format == "compact":
            return CompactOutputProtocol()
        return NeighboursJSONProtocol()

    def _check_options(self):
        if self.options.max_df is not None and self.options.max_df < 1:
            self.arg_parser.error("--max-df must be at least 1")
        if self.options.buffer_entries < 1:
            self.arg_parser.error("--buffer-entries must be at least 1")
        if self.options.output_format == "compact" and self.options.runner == "spark":
            # pyspark's saveAsTextFile decodes each output line as UTF-8 (invalid
            # bytes become U+FFFD): binary records would be silently corrupted.
            # Between steps Spark keeps bytes, so --wire compact is fine there.
            self.arg_parser.error("--output-format compact writes binary records, which "
                                  "Spark's text output cannot carry (it decodes lines as "
                                  "UTF-8); use --output-format json with -r spark")

    def load_args(self, args):
        super().load_args(args)
        self._check_options()

    # -- launching -----------------------------------------------------------

    def _runner_kwargs(self):
        kwargs = super()._runner_kwargs()
        alias = self._runner_class().alias
        if alias != "inline":
            # the inline runner imports the job in-process and only warns
            # about py_files; every other runner starts fresh task processes
            kwargs["py_files"] = list(kwargs.get("py_files") or []) + [package_zip()]
        if (alias == "spark" and not kwargs.get("python_bin")
                and (kwargs.get("spark_master") or "local").startswith("local")):
            # a local Spark master runs the tasks on this machine: with the
            # launching interpreter, which has numpy and scipy
            kwargs["python_bin"] = [sys.executable]
        return kwargs

    def run_job(self):
        """Run the job as mrjob does, with progress on the inline and local
        runners, clear messages instead of tracebacks, and a report of skipped
        and dropped input at the end."""
        log_stream = codecs.getwriter("utf_8")(self.stderr)
        self.set_up_logging(quiet=self.options.quiet, verbose=self.options.verbose,
                            stream=log_stream)
        if self.options.quiet:
            log_to_null(name="mrjobs")
        else:
            log_to_stream(name="mrjobs", debug=self.options.verbose, stream=log_stream)
        if not self.options.verbose:
            # "No configs found; falling back on auto-configuration" on every run
            logging.getLogger("mrjob.conf").setLevel(logging.ERROR)
        mrjob_log = logging.getLogger("mrjob")
        try:
            self._check_inputs()
            with self.make_runner() as runner:
                self._check_output_dir(runner)
                monitor = ProgressMonitor(runner, log) if not self.options.quiet else None
                try:
                    if monitor:
                        monitor.start()
                    runner.run()
                except StepFailedException as e:
                    mrjob_log.error(str(e))
                    sys.exit(1)
                finally:
                    if monitor:
                        monitor.stop()
                if self._should_cat_output():
                    for chunk in _cat_output_in_order(runner):
                        self.stdout.write(chunk)
                    self.stdout.flush()
                counters = runner.counters()
                report = run_report(counters)
                if self.options.quiet:  # only what says input was lost
                    report = "\n".join(l for l in report.splitlines()
                                       if l.startswith("mrsparse: skipped"))
                if report:
                    log_stream.write(report + "\n")
                    log_stream.flush()
                self._check_something_was_read(counters)
                _log_cleanup(runner)
        except (JobError, InputError, OSError) as e:
            log_stream.write("mrsparse: error: %s\n" % (e,))
            log_stream.flush()
            sys.exit(1)

    def _check_inputs(self):
        """Local input paths that do not exist: a message, not a traceback."""
        for path in self._input_paths_to_check():
            if path == "-" or "://" in path:
                continue
            if not glob.glob(path):
                raise JobError("input path %s does not exist" % path)

    def _input_paths_to_check(self):
        return list(self.options.args)

    def _check_output_dir(self, runner):
        out = self.options.output_dir
        if not out:
            return
        try:
            exists = runner.fs.exists(out)
            entries = list(runner.fs.ls(out)) if exists else []
        except (IOError, OSError):
            return  # an unreachable filesystem fails later, with mrjob's own message
        if not entries:
            return
        if not self.options.overwrite_output:
            raise JobError("--output-dir %s is not empty (%d entries, e.g. %s): the job "
                           "would mix its part files with what is there. Choose another "
                           "directory, remove it, or pass --overwrite-output"
                           % (out, len(entries), entries[0]))
        log.info("--overwrite-output: removing the contents of %s", out)
        runner.fs.rm(out)

    def _check_something_was_read(self, counters):
        total = {}
        for step in counters or ():
            for name, n in step.get(INPUT, {}).items():
                total[name] = total.get(name, 0) + n
        if total.get("vectors read"):
            return
        skipped = sum(total.get(name, 0) for name in SKIPPED)
        raise JobError("not one vector could be read from the input (%d line(s) skipped as "
                       "bad, the rest blank); check the input paths and --input-format"
                       % skipped)

    # -- task side: errors -----------------------------------------------------

    def run_mapper(self, step_num=0):
        with _task_errors(self, "mapper", step_num):
            super().run_mapper(step_num)

    def run_combiner(self, step_num=0):
        with _task_errors(self, "combiner", step_num):
            super().run_combiner(step_num)

    def run_reducer(self, step_num=0):
        with _task_errors(self, "reducer", step_num):
            super().run_reducer(step_num)

    # -- task side: input ----------------------------------------------------

    def _task_init(self):
        self.counts = Counters()
        self._lines = 0

    def _read_input(self):
        """The task's input lines, told every few seconds as the task's status
        (``reporter:status:``, which Hadoop shows and the inline and local
        runners' progress monitor logs)."""
        lines = nbytes = 0
        next_status = time.monotonic() + STATUS_EVERY
        for line in super()._read_input():
            lines += 1
            nbytes += len(line)
            if time.monotonic() >= next_status:
                next_status = time.monotonic() + STATUS_EVERY
                self.set_status(status_text(False, lines, nbytes))
            yield line
        self.set_status(status_text(True, lines, nbytes))

    def _task_final(self):
        self.counts.send(self)

    def read_vector(self, line):
        """Parse, check and normalise one input line.

        Returns
        -------
        (doc, ids, weights) or None
            Sorted unique feature ids, zero weights dropped; None for a
            blank or skipped line.
        """
        self._lines += 1
        try:
            parsed = parse_vector(line, self.options.input_format, self.options.float32)
        except InputError as e:
            if self.options.strict:
                raise InputError(e.kind, "%s, line %d of this task's input split: %s: %s "
                                 "(line: %.120r)" % (self._input_file(), self._lines,
                                                     e.kind, e, line)) from None
            self.counts.add(INPUT, e.kind)
            return None
        if parsed is None:
            return None
        doc, ids, w = parsed
        self.counts.add(INPUT, "vectors read")
        ids, w, _, merged = sort_sum(ids, w)
        if merged:
            self.counts.add(INPUT, "duplicate feature (weights summed)", merged)
        zero = w == 0.0
        if zero.any():
            self.counts.add(INPUT, "zero weight (entry dropped)", int(zero.sum()))
            ids, w = ids[~zero], w[~zero]
        if not ids.shape[0]:
            self.counts.add(INPUT, "empty vector (kept; no neighbours)")
        return doc, ids, w

    @staticmethod
    def _input_file():
        return jobconf_from_env("mapreduce.map.input.file", "<stdin>")


#: seconds between a task's status lines
STATUS_EVERY = 3.0


class JobError(Exception):
    """A problem that stops a job, told to the user as one line."""


class _task_errors:
    """Around a task: numpy's floating-point errors raise (no warning text on
    mrjob's byte streams), and a bad line under ``--strict``, a decoding error
    or a numeric error leaves the task as one clear line on its stderr -- on
    Hadoop and the local runner that is what the job's failure shows -- instead
    of a traceback from deep inside.  On the inline runner the error reaches
    the launcher, which prints the same line."""

    def __init__(self, job, task, step_num):
        self.job, self.task, self.step_num = job, task, step_num

    def __enter__(self):
        task_hooks(self.task)  # test hooks (mrjobs/faults.py): inert unless MRSPARSE_TEST_* set
        self.saved = np.seterr(over="raise", invalid="raise", divide="raise", under="ignore")
        return self

    def __exit__(self, exc_type, exc, tb):
        np.seterr(**self.saved)
        if exc_type is None or not issubclass(exc_type, (ValueError, ArithmeticError)):
            return False
        if isinstance(exc, InputError):
            message = str(exc)
        else:
            message = ("%s of step %d: %s: %s" % (self.task, self.step_num + 1,
                                                  exc_type.__name__, exc))
        if sys.stderr is sys.__stderr__ and sys.stderr is not None:
            # a task process of its own: one line, then a failed exit status
            sys.stderr.write("mrsparse: task failed: %s\n" % message)
            sys.stderr.flush()
            sys.exit(1)
        if isinstance(exc, InputError):
            return False  # the launcher (or a test) gets the InputError itself
        raise JobError(message) from None


def _cat_output_in_order(runner):
    """The output's part files in name order (mrjob's ``cat_output`` takes them
    in the order the filesystem lists them), skipping names that start with
    ``_`` or ``.`` as Hadoop does.  The reducers of the inline and local
    runners take consecutive ranges of keys: the output is then sorted by key."""
    out = runner.get_output_dir()
    names = sorted(p for p in runner.fs.ls(out)
                   if not any(n.startswith(("_", ".")) for n in p[len(out):].split("/")))
    for i, path in enumerate(names):
        if i:
            yield b""  # the end of the previous file, as in cat_output
        yield from runner.fs.cat(path)


def _log_cleanup(runner):
    """Say what the coming cleanup removes (it can take a while)."""
    tmp = getattr(runner, "_local_tmp_dir", None)
    if not tmp or not os.path.isdir(tmp):
        return
    size = 0
    for root, _, files in os.walk(tmp):
        for f in files:
            try:
                size += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    if size > 64 * 2**20:
        log.info("removing %.0f MB of temporary files in %s", size / 2**20, tmp)
