"""What the mrsparse jobs share: options, launching (with shipping and the
end-of-run report) and reading input lines into checked vectors.

The rest lives in its own module: :mod:`mrjobs.runtime.shipping` (the packages' zip),
:mod:`mrjobs.counters` (counter groups, batching, the report),
:mod:`mrjobs.strategies.combining` (in-task combining), :mod:`mrjobs.strategies.postings` (posting lists
and the df-cut), :mod:`mrjobs.strategies.stripes` and :mod:`mrjobs.strategies.blocks` (the two
strategies of the dot-products job, behind :mod:`mrjobs.strategies.contract`).
"""
import argparse
import codecs
import errno
import functools
import glob
import logging
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

import numpy as np
from mrjob.compat import jobconf_from_env
from mrjob.job import MRJob
from mrjob.protocol import BytesValueProtocol
from mrjob.step import StepFailedException
from mrjob.util import log_to_null, log_to_stream

from mrjobs.counters import (DFCUT, DUPLICATE_FEATURE, DUPLICATE_VECTOR_LINES, EMPTY_VECTOR, INPUT,
                       SKIPPED, VECTORS_READ, ZERO_WEIGHT, Counters, run_report)
from mrjobs.runtime.testhooks import task_hooks
from mrjobs.runtime.launch import (STDIN, FsOutputCommitter, InputPathError, OutputCommitter,
                     OutputConflict, OverlapError, TaskGuard, check_task_python,
                     probe_task_python, refuse_device, refuse_overlap, stdin_fd, tree_bytes,
                     watch_launcher)
from mrjobs.runtime.launch import input_kind as _path_kind
from mrjobs.runtime.progress import ProgressMonitor, status_text
from mrjobs.kernels import merge_sum, sort_sum
from mrjobs.parsing import (BAD_SUM, BAD_WEIGHT, FORMATS, TINY_WEIGHT, InputError, float32_zeros,
                      parse_vector, weight_limit)
from mrjobs.runtime.shipping import package_zip

__all__ = ["SparseJob", "JobError", "input_kind"]

log = logging.getLogger(__name__)


def _drop_notice(logger, start):
    logging.getLogger(logger).addFilter(lambda r: not r.getMessage().lstrip().startswith(start))


# notices on every run that ask for nothing: mrjob's "No configs specified for inline
# runner" (the jobs need no mrjob.conf), and the JVM's on the module Spark 4 always adds
_drop_notice("mrjob.conf", "No configs ")
_drop_notice("mrjob.logs.step", "WARNING: Using incubator modules: jdk.incubator.vector")

#: Environment of every task process (a user's --cmdenv wins).  mrjob imports
#: ``distutils`` in every task; setuptools' distutils hook (on by default
#: where setuptools is installed) answers that import by loading setuptools
#: and pkg_resources, about half a CPU second a task.  Off, the standard
#: library's distutils (up to Python 3.11) or the shim in the package zip
#: (3.12 and later) serves mrjob's two names.
TASK_ENV = {"SETUPTOOLS_USE_DISTUTILS": "stdlib"}


class SparseJob(MRJob):
    """Base class of the mrsparse jobs (options, input, index, shipping)."""

    INPUT_PROTOCOL = BytesValueProtocol

    def configure_args(self):
        super().configure_args()
        self.arg_parser.prog = _command_name(self) or self.arg_parser.prog
        self.arg_parser.error = _suggesting(self.arg_parser, self.arg_parser.error)
        self.add_passthru_arg(
            "--input-format", choices=FORMATS, default="auto",
            help="Format of the input lines: 'json' ({\"id\": UUID, \"features\": "
                 "{UUID: weight, ...}}), 'tsv' (UUID TAB UUID:weight UUID:weight ...), "
                 "'compact' (mrcodecs VectorProtocol records, as --output-format compact "
                 "and python -m mrjobs.convert --to compact write them), or 'auto' "
                 "(default), per line: a line whose first TAB is followed by the byte 0x01 "
                 "or 0x02 (a compact record's kind byte, which no JSON or TSV line holds "
                 "there) is compact, else lines starting with '{' are JSON, others TSV.")
        self.add_passthru_arg(
            "--strict", action="store_true", default=False,
            help="Fail at the first bad input line (naming its file and line) instead of "
                 "counting and skipping it.")
        self.add_passthru_arg(
            "--max-df", type=at_least(1, MAX_COUNT), default=None, metavar="N",
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
            "--buffer-entries", type=at_least(1, MAX_BUFFER_ENTRIES), default=1000000,
            metavar="N",
            help="Entries a task buffers for in-task combining before it flushes "
                 "(bounds task memory; default 1000000, at most 2^40; README gives "
                 "measured peaks).")
        # mrjob's --num-cores takes any int: 0 means "all" to the runner but not
        # to mrjob's process pool, a negative one fails in the pool, a huge one
        # forks that many processes
        for action in self.arg_parser._actions:
            if "--num-cores" in action.option_strings:
                action.type = at_least(1, MAX_CORES)
                action.help = (action.help or "") + " (1 to %d)" % MAX_CORES

    def memory_advice(self):
        """What a task out of memory can change (the options of this job)."""
        return "lower --buffer-entries (now %d)" % self.options.buffer_entries

    # -- options -----------------------------------------------------------

    @property
    def wire_dtype(self):
        return np.float32 if self.options.float32 else np.float64

    def internal_protocol(self):
        from mrjobs.protocols import internal_protocol_class
        return internal_protocol_class(self.options.wire)()

    def output_protocol(self):
        from mrjobs.protocols import CompactOutputProtocol, NeighboursJSONProtocol
        if self.options.output_format == "compact":
            return CompactOutputProtocol()
        return NeighboursJSONProtocol()

    def _check_options(self):
        if (self.options.overwrite_output and not self.options.output_dir
                and not self.is_task()):  # tasks are not told --output-dir
            self.arg_parser.error("argument --overwrite-output: has no effect without "
                                  "--output-dir (the output goes to stdout)")
        if self.options.output_format == "compact" and self.options.runner == "spark":
            # pyspark's saveAsTextFile decodes each output line as UTF-8 (invalid
            # bytes become U+FFFD): binary records would be silently corrupted.
            # Between steps Spark keeps bytes, so --wire compact is fine there.
            self.arg_parser.error("--output-format compact writes binary records, which "
                                  "Spark's text output cannot carry (it decodes lines as "
                                  "UTF-8); use --output-format json with -r spark")

    def _usage(self):
        name = _command_name(self)
        return "%s [options] [input files]" % name if name else super()._usage()

    def load_args(self, args):
        super().load_args(args)
        self._check_options()

    # -- launching -----------------------------------------------------------

    def _runner_class(self):
        if self.options.runner == "local":
            from mrjobs.runtime.localrunner import LocalRunner
            return LocalRunner
        return super()._runner_class()

    def split_bytes(self):
        """Bytes of a step's input per local task, where the job's output does
        not depend on how the input is split (see :mod:`mrjobs.runtime.localrunner`);
        None: mrjob's two tasks per core."""
        return None

    def _runner_kwargs(self):
        kwargs = super()._runner_kwargs()
        alias = self._runner_class().alias
        if alias != "inline":
            # the inline runner imports the job in-process and only warns
            # about py_files; every other runner starts fresh task processes
            kwargs["py_files"] = list(kwargs.get("py_files") or []) + [package_zip()]
            kwargs["cmdenv"] = dict(TASK_ENV, **(kwargs.get("cmdenv") or {}))
        if (alias == "spark" and not kwargs.get("python_bin")
                and (kwargs.get("spark_master") or "local").startswith("local")):
            # a local Spark master runs the tasks on this machine: with the
            # launching interpreter, which has numpy and scipy
            kwargs["python_bin"] = [sys.executable]
        committer = getattr(self, "_committer", None)
        if committer:  # the output is moved into place when the job succeeds
            local = isinstance(committer, OutputCommitter) and not isinstance(
                committer, FsOutputCommitter)
            kwargs["output_dir"] = ("file://" + committer.tmp if local and alias not in
                                    ("inline", "local") else committer.tmp)
        guard = getattr(self, "_guard", None)
        if guard and guard.env:
            kwargs["cmdenv"] = dict(kwargs.get("cmdenv") or {}, **guard.env)
        if alias in ("inline", "local"):
            # where relative input paths start from (for a --strict line number)
            kwargs["cmdenv"] = dict(kwargs.get("cmdenv") or {}, **{LAUNCH_DIR: os.getcwd()})
        if alias in ("inline", "local") and not kwargs.get("cleanup_on_failure"):
            # mrjob keeps a failed run's temporary files for its logs; ours
            # gives the task's error as it fails, and leaves nothing behind
            kwargs["cleanup_on_failure"] = ["LOCAL_TMP"]
        if alias == "local":
            if kwargs.get("split_bytes") is None:
                kwargs["split_bytes"] = self.split_bytes()
            self._ship_only_what_tasks_lack(kwargs)
        return kwargs

    def _ship_only_what_tasks_lack(self, kwargs):
        """Where the task Python finds the very mrjob, mrjobs and mrcodecs
        files this launcher runs (and the modules mrjob imports), the tasks
        import those: the zips, and the setup script that puts them on the
        tasks' path, would only add a shell, a Python start and the
        compilation of every module from the zip to each task."""
        found, missing = self._probe_task_python(_task_python(kwargs), kwargs.get("cmdenv"))
        if isinstance(missing, str) or any(m in missing for m in OWN_MODULES + MRJOB_IMPORTS):
            return
        mine = {m: os.path.realpath(sys.modules[m].__file__) for m in OWN_MODULES}
        if any(found.get(m) != path for m, path in mine.items()):
            return
        if kwargs.get("bootstrap_mrjob") is None:
            kwargs["bootstrap_mrjob"] = False
        if not kwargs["bootstrap_mrjob"]:
            zip_path = package_zip()
            kwargs["py_files"] = [f for f in kwargs.get("py_files") or [] if f != zip_path]

    def _probe_task_python(self, python, cmdenv):
        """:func:`~mrjobs.runtime.launch.probe_task_python` for the task modules, ours
        and mrjob's imports, in the tasks' environment, once per interpreter."""
        cache = self.__dict__.setdefault("_probed", {})
        key = tuple(python)
        if key not in cache:
            modules = tuple(dict.fromkeys(tuple(self.task_modules()) + OWN_MODULES
                                          + MRJOB_IMPORTS))
            cache[key] = probe_task_python(python, modules, dict(os.environ, **(cmdenv or {})))
        return cache[key]

    def run_job(self):
        """Run the job as mrjob does, with progress on the inline and local
        runners, one-line messages instead of tracebacks, a report of skipped
        and dropped input at the end, and nothing left behind: on an error,
        Ctrl-C (exit status 130) or a closed pipe on stdout (141, quietly, as
        Unix tools end) the temporary files and task processes go; SIGTERM
        and SIGHUP end the run as Ctrl-C does (exit status 143, 129)."""
        log_stream = self._set_up_logging()
        restore = _catch_sigint()
        run = _Run()
        try:
            self._launch(log_stream, run)
            return
        except KeyboardInterrupt as e:
            signum = getattr(e, "signum", signal.SIGINT)
            status, message = 128 + signum, "%s; removed %.0f MB of temporary files" % (
                "interrupted" if signum == signal.SIGINT else
                "stopped by %s" % signal.Signals(signum).name, run.removed / 2**20)
        except BrokenPipeError:
            _silence_stdout()
            status, message = 141, None
        except subprocess.CalledProcessError as e:  # (mrjob's, e.g. `hadoop version`)
            command = e.cmd if isinstance(e.cmd, str) else " ".join(map(str, e.cmd))
            status, message = 1, ("error: %s failed (exit status %s)%s" % (
                command, e.returncode, ": check --hadoop-bin (it must run `hadoop version`)"
                if str(command).endswith(" version") else ""))
        except TaskFailed as e:
            status, message = 1, "task failed: %s" % (e,)
        except (JobError, InputError) as e:
            status, message = 1, "error: %s" % (e,)
        except OSError as e:
            status, message = 1, "error: %s" % (os_error_text(e, run.tmp_dir),)
        finally:
            self._remove_streams()  # pipes' copies (see _read_streams)
            restore()
        if message:
            log_stream.write("mrsparse: %s\n" % message)
            log_stream.flush()
        sys.exit(status)

    def _set_up_logging(self):
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
        return log_stream

    def _launch(self, log_stream, run):
        """Check, run, commit the output, report; measure what cleanup removes."""
        self._check_inputs()
        self._check_launch_options()
        alias = self._runner_class().alias
        out = self.options.output_dir
        self._committer = None
        master = getattr(self.options, "spark_master", None) or "local"
        spark_local = alias == "spark" and master.startswith("local")
        if out and _local(out) and (alias in ("inline", "local") or spark_local
                                    or out.startswith("file:")):
            self._committer = OutputCommitter(out, self.options.overwrite_output)
        elif out and alias == "hadoop":
            # a path on Hadoop's default filesystem (HDFS on a cluster), looked
            # at once the runner's filesystem is there (_check_output_dir)
            self._committer = FsOutputCommitter(out, self.options.overwrite_output)
        if self._committer and not isinstance(self._committer, FsOutputCommitter):
            try:
                seen = self._committer.note()
            except OutputConflict as e:
                raise JobError(str(e)) from None
            if seen and seen[3]:
                log.info("--overwrite-output: %s is replaced when the job succeeds", out)
            self._refuse_temp_inside_output()
        self._guard = TaskGuard() if alias == "local" else None
        tmp_dirs = []
        try:
            with self.make_runner() as runner:
                tmp_dirs = [getattr(runner, "_local_tmp_dir", None)]
                run.tmp_dir = tmp_dirs[0]
                try:
                    self._check_output_dir(runner)
                    self._check_task_python(runner)
                    self._run_steps(runner)
                    self._finish(runner, log_stream)
                finally:
                    self._end_tasks()
                    tmp_dirs = [getattr(runner, "_local_tmp_dir", None)]
                    run.before = sum(tree_bytes(d) for d in tmp_dirs if d)
        finally:
            self._end_tasks()  # also when the runner could not be made
            run.removed = run.before - sum(tree_bytes(d) for d in tmp_dirs if d)

    def _end_tasks(self):
        if self._guard:
            self._guard.stop()
        if self._committer:
            self._committer.abort()

    def _run_steps(self, runner):
        monitor = ProgressMonitor(runner, log) if not self.options.quiet else None
        failures = _FailureReport()
        try:
            if monitor:
                monitor.start()
            with failures:
                runner.run()
        except StepFailedException as e:
            line = _task_failure_line(runner)
            if line:
                raise TaskFailed(line) from None
            failures.release()
            logging.getLogger("mrjob").error(str(e))
            sys.exit(1)
        except Exception:
            failures.release()  # whatever mrjob said about it
            raise
        finally:
            if monitor:
                monitor.stop()

    def _finish(self, runner, log_stream):
        """The end-of-run checks, then (only if they pass) the commit of the
        output, the output on stdout, and the report."""
        counters = runner.counters()
        report = run_report(counters)
        if self.options.quiet:  # only what says input was lost
            report = "\n".join(l for l in report.splitlines()
                               if l.startswith("mrsparse: skipped"))
        try:
            self._check_something_was_read(counters)
        except JobError:
            if report:  # what was skipped says why
                log_stream.write(report + "\n")
                log_stream.flush()
            raise
        if self._committer:
            self._committer.commit()
            log.info("job output is in %s", self.options.output_dir)
            runner._output_dir = self._committer.final  # for --cat-output
            self._committer = None
        if self._should_cat_output():
            for chunk in _cat_output_in_order(runner):
                self.stdout.write(chunk)
            self.stdout.flush()
        if report:
            log_stream.write(report + "\n")
            log_stream.flush()
        _log_cleanup(runner)

    def _refuse_temp_inside_output(self):
        """A temporary directory at or inside ``--output-dir`` would be
        replaced with it (under --overwrite-output) or would change it while
        the job runs: refused before anything is written."""
        from mrjobs.runtime.launch import _relation
        final = self._committer.final
        temps = [("TMPDIR", tempfile.gettempdir())]
        if getattr(self.options, "local_tmp_dir", None):
            temps.append(("--local-tmp-dir", self.options.local_tmp_dir))
        for what, path in temps:
            if _relation(final, path) in ("is", "holds"):
                raise JobError("the temporary directory %s (%s) is or lies inside --output-dir "
                               "%s, which the job replaces when it succeeds: set %s to a "
                               "directory apart from the output" % (path, what,
                                                                    self.options.output_dir,
                                                                    what))

    def _check_launch_options(self):
        """Checks only the launcher can make (the tasks never see them)."""
        inputs = [("the input", p) for p in self.options.args]
        inputs += [(opt, p) for opt, p in self._other_inputs()]
        try:
            refuse_overlap(self.options.output_dir, inputs)
        except OverlapError as e:
            raise JobError(str(e)) from None
        self._read_streams()

    def _other_inputs(self):
        """(option, path) of inputs given by options (e.g. --queries)."""
        return []

    # -- pipes, stdin and devices as input -------------------------------------

    def _read_streams(self):
        """Pipes among the inputs (``<(zcat x.gz)``, a named FIFO, stdin) are
        read once, here, into files of a temporary directory that the run
        removes, as mrjob does with stdin: every size-dependent decision
        (--blocks, the local runner's splits) then sees a file, and the
        tasks read it.  A path that is neither a file, a directory nor a pipe
        (``/dev/zero``, a terminal, a disk) is refused before the job starts:
        reading it could never end.  ``/dev/null`` is read as an empty file."""
        o = self.options
        self._streams = getattr(self, "_streams", {})
        args = list(o.args) or ["-"]
        if "-" in args and self._stdin is None:  # (a sandboxed stdin: mrjob's)
            what = "stdin" if o.args else "stdin (no input path was given)"
            args = [self._read_stream(STDIN, what) if p == "-" else p for p in args]
        o.args = [p if p == "-" or input_kind(p, "input path") != "stream"
                  else self._read_stream(p, "the input %s" % p) for p in args]

    def _read_stream(self, path, what):
        """The path of a file holding all that the stream ``path`` gives (read
        once: a stream named twice is the same file)."""
        try:
            st = os.fstat(stdin_fd()) if path is STDIN else os.stat(_local_path(path))
        except OSError as e:
            raise JobError("%s cannot be read (%s): give INPUT paths" % (
                what, getattr(e, "strerror", None) or e)) from None
        if path is STDIN:
            try:
                refuse_device(st, what, os.isatty(stdin_fd()), socket=True)
            except InputPathError as e:
                raise JobError(str(e)) from None
        key = (st.st_dev, st.st_ino)
        if key in self._streams:
            return self._streams[key]
        if not getattr(self, "_stream_dir", None):
            self._stream_dir = tempfile.mkdtemp(
                prefix="mrsparse-pipes-", dir=getattr(self.options, "local_tmp_dir", None))
        name = "stdin" if path is STDIN else re.sub(r"[^\w.-]+", "-", path.strip("/"))
        dest = os.path.join(self._stream_dir, "%d-%s" % (len(self._streams), name))
        log.info("reading %s to its end into %s", what, dest)
        try:
            with (open(stdin_fd(), "rb", closefd=False) if path is STDIN
                  else open(_local_path(path), "rb")) as src, open(dest, "wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)
        except OSError as e:
            raise JobError("reading %s into %s: %s" % (what, dest, e.strerror or e)) from None
        self._streams[key] = dest
        return dest

    def _remove_streams(self):
        d = getattr(self, "_stream_dir", None)
        if d:
            shutil.rmtree(d, ignore_errors=True)
            self._stream_dir = None
            self._streams = {}

    #: modules the tasks import (checked in the task Python before a local run)
    TASK_MODULES = ("numpy",)

    def _check_task_python(self, runner):
        alias = self._runner_class().alias
        if alias == "inline":
            missing = [m for m in self.task_modules() if not _importable(m)]
            if missing:
                raise JobError("this Python (%s) cannot import %s: install it"
                               % (sys.executable, ", ".join(missing)))
        elif alias == "local":
            python = runner._task_python_bin()
            error = check_task_python(python, self.task_modules(), probed=self._probe_task_python(
                python, runner._opts.get("cmdenv")))
            if error:
                raise JobError(error)

    def task_modules(self):
        return self.TASK_MODULES

    def _check_inputs(self):
        """Local input paths that do not exist: a message, not a traceback."""
        for option, path in [("input path", p) for p in self.options.args] + [
                ("%s path" % opt, p) for opt, p in self._other_inputs()]:
            if path == "-" or "://" in path:
                continue
            if not glob.glob(path):
                raise JobError("%s %s does not exist" % (option, path))

    def _check_output_dir(self, runner):
        out = self.options.output_dir
        if isinstance(self._committer, FsOutputCommitter):
            self._committer.fs = runner.fs.hadoop
            try:
                seen = self._committer.note()
            except OutputConflict as e:
                raise JobError(str(e)) from None
            if seen and seen[3]:
                log.info("--overwrite-output: %s is replaced when the job succeeds", out)
            return
        if not out or self._committer:
            return  # the committer looked at it (OutputCommitter.note)
        if _local(out) and os.path.exists(_local_path(out)) \
                and not os.path.isdir(_local_path(out)):
            raise JobError("--output-dir %s is a file, not a directory: give a directory "
                           "(the job writes part files into it)" % out)
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
        if total.get(VECTORS_READ):
            return
        skipped = sum(total.get(name, 0) for name in SKIPPED)
        raise JobError("not one vector could be read from the input (%d line(s) skipped as "
                       "bad, the rest blank); check the input paths and --input-format "
                       "(%s)" % (skipped, FORMAT_HINT))

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

    @functools.cached_property
    def counts(self):
        """The task's :class:`~mrjobs.counters.Counters` (one object for the
        job's life; :meth:`_task_init` empties it)."""
        return Counters()

    def _task_init(self):
        self.counts.clear()
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
                hint = "; is the input in an accepted format? --input-format " + FORMAT_HINT \
                    if self._lines == 1 and e.kind != BAD_WEIGHT else ""
                raise InputError(e.kind, "%s: %s: %s (line: %.120r%s)" % (
                    _where(self._lines), e.kind, e, line, hint)) from None
            self.counts.add(INPUT, e.kind)
            return None
        if parsed is None:
            return None
        doc, ids, w = parsed
        self.counts.add(INPUT, VECTORS_READ)
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
                raise InputError(TINY_WEIGHT, "%s: %s: %s (line: %.120r)" % (
                    _where(self._lines), TINY_WEIGHT, tiny[1], line))
            self.counts.add(INPUT, TINY_WEIGHT, int(tiny[0].sum()))
            ids, w = ids[~tiny[0]], w[~tiny[0]]
        if not ids.shape[0]:
            self.counts.add(INPUT, EMPTY_VECTOR)
        return doc, ids, w

    def merge_lines(self, doc, parts):
        """One vector from the :class:`~mrcodecs.jobwire.Stripe` s of the lines
        that share the id ``doc``: weights of a repeated feature summed in a
        canonical order (:func:`mrjobs.kernels.merge_sum`), zero sums dropped.
        When a sum goes beyond the range of the weights, the vector's lines are
        counted as bad input and skipped (refused under ``--strict``).

        Returns
        -------
        (ids, weights) or None
            Sorted unique ids and float64 weights (empty if they all cancel);
            None when the lines are skipped.
        """
        self.counts.add(INPUT, DUPLICATE_VECTOR_LINES, len(parts) - 1)
        ids, w, _, _ = merge_sum(np.concatenate([p.ids for p in parts]),
                                 np.concatenate([p.values for p in parts]))
        over = ~(np.abs(w) <= weight_limit(self.options.float32))
        if over.any():
            i = int(np.argmax(over))
            e = InputError(BAD_SUM, "vector %s: the weights of feature %s, summed over its "
                           "%d lines, go beyond %s's range"
                           % (uuid.UUID(bytes=doc), uuid.UUID(bytes=ids[i:i + 1].tobytes()),
                              len(parts), "float32" if self.options.float32 else "float64"))
            if self.options.strict:
                raise e
            self.counts.add(INPUT, BAD_SUM, len(parts))
            return None
        zero = w == 0.0
        if zero.any():
            self.counts.add(INPUT, ZERO_WEIGHT, int(zero.sum()))
            ids, w = ids[~zero], w[~zero]
        return ids, w

    @staticmethod
    def _input_file():
        return jobconf_from_env("mapreduce.map.input.file", "<stdin>")


#: seconds between a task's status lines
STATUS_EVERY = 3.0


class JobError(Exception):
    """A problem that stops a job, told to the user as one line."""


class TaskFailed(JobError):
    """A task's own one-line error, told as ``mrsparse: task failed: ...``."""


class _task_errors:
    """Around a task: numpy's floating-point errors raise (no warning text on
    mrjob's byte streams), and a bad line under ``--strict``, a decoding or
    numeric error, running out of memory or a missing module leaves the task
    as one clear line on its stderr, saying what to do -- on Hadoop and the
    local runner that is what the job's failure shows -- instead of a
    traceback from deep inside.  On the inline runner the error reaches the
    launcher, which prints the same line.  A task of the local runner also
    ends when its launcher does (:func:`mrjobs.runtime.launch.watch_launcher`)."""

    def __init__(self, job, task, step_num):
        self.job, self.task, self.step_num = job, task, step_num

    def __enter__(self):
        task_hooks(self.task)  # test hooks (mrjobs/runtime/testhooks.py): inert unless MRSPARSE_TEST_* set
        own_process = sys.stderr is sys.__stderr__ and sys.stderr is not None
        self.unwatch = watch_launcher() if own_process else (lambda: None)
        self.saved = np.seterr(over="raise", invalid="raise", divide="raise", under="ignore")
        return self

    def __exit__(self, exc_type, exc, tb):
        np.seterr(**self.saved)
        self.unwatch()
        if exc_type is None:
            return False
        message = self._message(exc_type, exc)
        if message is None:
            return False
        if sys.stderr is sys.__stderr__ and sys.stderr is not None:
            # a task process of its own: one line, then a failed exit status
            sys.stderr.write("%s%s\n" % (TASK_FAILED, message))
            sys.stderr.flush()
            sys.exit(1)
        if isinstance(exc, InputError):
            return False  # the launcher (or a test) gets the InputError itself
        raise TaskFailed(message) from None

    def _message(self, exc_type, exc):
        where = "%s of step %d" % (self.task, self.step_num + 1)
        if issubclass(exc_type, InputError):
            return str(exc)
        if issubclass(exc_type, MemoryError):
            return ("out of memory in the %s (%s: %s): %s, or give the tasks more memory"
                    % (where, exc_type.__name__, exc, self.job.memory_advice()))
        if issubclass(exc_type, ImportError):
            return ("the task Python (%s) cannot import %s in the %s (%s: %s): install "
                    "numpy and scipy in the task Python (--python-bin / --task-python-bin "
                    "choose it)" % (sys.executable, getattr(exc, "name", None) or "a module",
                                    where, exc_type.__name__, exc))
        if issubclass(exc_type, (ValueError, ArithmeticError)):
            return "%s: %s: %s" % (where, exc_type.__name__, exc)
        if issubclass(exc_type, OSError) and not issubclass(exc_type, BrokenPipeError):
            return "%s: %s" % (where, os_error_text(exc, os.environ.get("TMPDIR")))
        return None


#: what a task imports besides :meth:`SparseJob.task_modules`: our packages,
#: and the modules mrjob imports in every task that the package zip also
#: carries stand-ins for (:mod:`mrjobs.runtime.shipping`)
OWN_MODULES = ("mrjob", __package__, "mrcodecs")
MRJOB_IMPORTS = ("pipes", "distutils.spawn", "distutils.version")


def _task_python(kwargs):
    """The task Python a local runner made with ``kwargs`` runs (a command list)."""
    python = kwargs.get("task_python_bin") or kwargs.get("python_bin") or [sys.executable]
    return shlex.split(python) if isinstance(python, str) else list(python)


#: environment of the inline and local runners' tasks: the launcher's directory
LAUNCH_DIR = "MRSPARSE_LAUNCH_DIR"

#: how a task's own error line starts (found in its stderr by the launcher)
TASK_FAILED = "mrsparse: task failed: "

#: the input formats, for messages about unreadable input
FORMAT_HINT = ("accepted: json, one {\"id\": UUID, \"features\": {UUID: weight, ...}} a "
               "line; tsv, one UUID TAB UUID:weight UUID:weight ... a line; compact, "
               "mrcodecs VectorProtocol records (python -m mrjobs.convert --to compact "
               "makes them); auto (the default) tells them apart line by line")


#: the largest --max-df (and --num-features): beyond any corpus's count, and
#: far from int64's end in the tasks' arithmetic
MAX_COUNT = 2**62
#: the largest --buffer-entries: 2^40 entries is tens of TB of task memory
MAX_BUFFER_ENTRIES = 2**40
#: the largest --num-cores: the local runner starts a process per core
MAX_CORES = 1024


def _command_name(job):
    """How the user started ``job``, for usage lines and errors: ``python -m
    mrjobs.dot_products`` where its class runs as the main module (argparse
    would say ``dot_products.py``); None otherwise."""
    if type(job).__module__ != "__main__":
        return None
    name = getattr(getattr(sys.modules.get("__main__"), "__spec__", None), "name", None)
    if not name or name == "__main__":
        return None
    return "python -m %s" % name.rsplit(".__main__", 1)[0]


def _suggesting(parser, error):
    """``parser.error`` that names the option closest to a misspelt one
    ("unrecognized arguments: --top-kk 3 (did you mean --top-k?)")."""
    import difflib

    def suggest(message):
        prefix = "unrecognized arguments: "
        if message.startswith(prefix):
            known = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
            hints = []
            for arg in message[len(prefix):].split():
                if arg.startswith("--"):
                    close = difflib.get_close_matches(arg.split("=", 1)[0], known, n=1)
                    if close:
                        hints.append("%s: did you mean %s?" % (arg.split("=", 1)[0], close[0]))
            if hints:
                message += " (%s)" % "; ".join(hints)
        return error(message)
    return suggest


def at_least(low, high=None):
    """An argparse type: an int >= ``low`` and, where given, <= ``high``
    (errors name the option; an over-long number is shown cut)."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError("invalid int value: %s" % _cut(repr(text))) \
                from None
        if value < low:
            raise argparse.ArgumentTypeError("must be at least %d, not %s" % (low, _cut(text)))
        if high is not None and value > high:
            raise argparse.ArgumentTypeError("must be at most %d, not %s" % (high, _cut(text)))
        return value
    parse.__name__ = "int"
    return parse


def _cut(text, width=40):
    text = text.strip()
    return text if len(text) <= width else text[:width - 3] + "..."


def finite_float(text):
    """An argparse type: a finite float."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("invalid float value: %s" % _cut(repr(text))) \
            from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError("must be a finite number, not %s" % _cut(text))
    return value


def _where(line_in_task):
    """The input line a task is at, as a user can find it: the path as given
    (``file://x`` is mrjob's URI for the relative path ``x``) and the line
    number in the file (counted where the file is local and the task's split
    starts inside it; said to be relative to the split where it cannot be)."""
    path = SparseJob._input_file()
    start = int(jobconf_from_env("mapreduce.map.input.start", "0") or 0)
    if path.startswith("file:"):
        from mrjobs.runtime.launch import _local_path
        path = _local_path(path)
    if start == 0:
        return "%s, line %d" % (path, line_in_task)
    try:
        with open(os.path.join(os.environ.get(LAUNCH_DIR, ""), path), "rb") as f:
            before = sum(chunk.count(b"\n") for chunk in _chunks(f, start))
        return "%s, line %d" % (path, before + line_in_task)
    except OSError:
        return ("%s, line %d of the split that starts at byte %d (the line number in the "
                "file is not known here)" % (path, line_in_task, start))


def _chunks(f, nbytes, size=1 << 20):
    while nbytes > 0:
        chunk = f.read(min(size, nbytes))
        if not chunk:
            return
        nbytes -= len(chunk)
        yield chunk


def _local(path):
    from mrjobs.runtime.launch import _is_local
    return _is_local(path)


def input_kind(path, option):
    """:func:`mrjobs.runtime.launch.input_kind` ("stream" or "files"), a refused
    path as a :class:`JobError`."""
    try:
        return _path_kind(path, option)
    except InputPathError as e:
        raise JobError(str(e)) from None


def _local_path(path):
    from mrjobs.runtime.launch import _local_path as local_path
    return local_path(path)


def _importable(module):
    import importlib.util
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


class _Run:
    """What a run's cleanup removed (bytes of temporary files), and where
    they were."""
    before = 0
    removed = 0
    tmp_dir = None


#: errors of a write that found no room
_NO_ROOM = {getattr(errno, n) for n in ("ENOSPC", "EDQUOT", "EFBIG") if hasattr(errno, n)}


def os_error_text(e, tmp_dir=None):
    """One line for an :class:`OSError`: what, on which file, and for a full
    disk where the job's temporary files are."""
    if not e.strerror:
        return str(e)
    text = e.strerror + (" (%s)" % e.filename if e.filename else "")
    if e.errno in _NO_ROOM:
        text += (": the job's temporary files are in %s; free space there, or point TMPDIR "
                 "(or --local-tmp-dir) at a larger disk" % (tmp_dir or tempfile.gettempdir()))
    return text


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP in the launcher: ends the run as Ctrl-C does (a
    :class:`KeyboardInterrupt`, so mrjob's runners and ours unwind alike)."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


#: the signals that end a run in order: Ctrl-C; kill, timeout, a container's
#: or a CI's stop; a closed terminal
STOP_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


def _catch_sigint():
    """Ctrl-C, SIGTERM and SIGHUP raise :class:`KeyboardInterrupt` (SIGTERM and
    SIGHUP: :class:`Stopped`) in the launcher only: the launcher then ends
    its tasks and removes its temporary files.  The processes forked from it
    (mrjob's pool workers) ignore SIGINT and end at once, without a word, on
    the others (their launcher ends them too).  Returns a function that
    restores the previous handlers."""
    launcher = os.getpid()

    def handler(signum, frame):
        if os.getpid() == launcher:
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            raise Stopped(signum)
        if signum != signal.SIGINT:
            os._exit(128 + signum)
    previous = {}
    try:
        for name in STOP_SIGNALS:
            sig = getattr(signal, name, None)
            if sig is not None:
                previous[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread
        pass

    def restore():
        for sig, old in previous.items():
            signal.signal(sig, old)
    return restore


def _silence_stdout():
    """After a closed pipe: point stdout at /dev/null so that Python's flush
    at exit does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


class _FailureReport(logging.Filter):
    """Holds back mrjob's multi-line account of a failed task while a job runs
    (the task's own ``mrsparse: task failed:`` line says it in one); released
    when no such line is found."""

    def __init__(self):
        super().__init__()
        self.held = []
        self.handlers = []

    def filter(self, record):
        if ".mrsparse-incomplete-" in record.getMessage():
            return False  # where the committer's temporary output is: said after the commit
        if record.levelno >= logging.ERROR and record.name.startswith("mrjob"):
            self.held.append(record)
            return False
        return True

    def __enter__(self):
        self.handlers = list(logging.getLogger("mrjob").handlers)
        for h in self.handlers:
            h.addFilter(self)
        return self

    def __exit__(self, *exc):
        for h in self.handlers:
            h.removeFilter(self)
        return False

    def release(self):
        for record in self.held:
            logging.getLogger(record.name).handle(record)
        self.held = []


def _task_failure_line(runner):
    """The first ``mrsparse: task failed:`` line in the stderr of the failed
    step's tasks (inline and local runners), or None."""
    step_dir = getattr(runner, "_step_dir", None)
    if step_dir is None:
        return None
    steps = sorted(glob.glob(os.path.join(runner._get_local_tmp_dir(), "step", "[0-9]*")))
    for path in sorted(glob.glob(os.path.join(steps[-1], "*", "*", "stderr"))) if steps else ():
        try:
            with open(path, "rb") as f:
                for line in f:
                    if line.startswith(TASK_FAILED.encode()):
                        return line[len(TASK_FAILED):].decode("utf-8", "replace").rstrip()
        except OSError:
            continue
    return None


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
