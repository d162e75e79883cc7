"""The launch of a job, from its options to its report: mrjob's ``run_job``
(make a runner, run it, cat the output) with what our runs add.

:func:`run_job` is what :meth:`mrjobs.job.SparseJob.run_job` calls: progress
on the inline and local runners, one-line messages instead of tracebacks, the
output committed only when the job succeeded (:mod:`mrjobs.runtime.commit`),
a report of skipped and dropped input at the end, and nothing left behind: on
an error, Ctrl-C (exit status 130) or a closed pipe on stdout (141, quietly,
as Unix tools end) the temporary files and task processes go; SIGTERM and
SIGHUP end the run as Ctrl-C does (exit status 143, 129).

What the job itself decides stays with the job: its options, the inputs its
options name (:meth:`~mrjobs.job.SparseJob.other_inputs`), its own checks
(:meth:`~mrjobs.job.SparseJob.check_launch`,
:meth:`~mrjobs.job.SparseJob.check_something_was_read`), the modules its
tasks import.
"""
import codecs
import glob
import importlib.util
import logging
import os
import signal
import subprocess
import sys
import tempfile

from mrjob.step import StepFailedException
from mrjob.util import log_to_null, log_to_stream

from mrjobs.counters import run_report
from mrjobs.parsing import InputError
from mrjobs.runtime.commit import FsOutputCommitter, OutputCommitter, OutputConflict
from mrjobs.runtime.errors import JobError, TaskFailed, os_error_text
from mrjobs.runtime.paths import (RECURSIVE_KEYS, InputPathError, OverlapError, is_local,
                                  local_path, refuse_overlap, refuse_unread, relation,
                                  tree_bytes)
from mrjobs.runtime.progress import ProgressMonitor
from mrjobs.runtime.report import FailureReport, log_cleanup, task_failure, write_output
from mrjobs.runtime.runnerargs import probe
from mrjobs.runtime.signals import (catch_stop_signals, open_closed_stdio, silence_stdout,
                                    stdout_name)
from mrjobs.runtime.streams import InputStreams
from mrjobs.runtime.tasks import TaskGuard, check_task_python
from mrjobs.runtime.tempdisk import check_temp_disk

__all__ = ["run_job", "Launch"]

log = logging.getLogger("mrjobs.job")


def run_job(job):
    """Run ``job`` (a :class:`~mrjobs.job.SparseJob` with parsed options) as
    mrjob does, with what the module docstring says; exits on an error."""
    Launch(job).run()


class Launch:
    """One run of a job: its committer, its task guard, its streams read into
    files, and what its cleanup removed."""

    def __init__(self, job):
        self.job = job
        self.options = job.options
        self.alias = job._runner_class().alias
        self.committer = None
        self.guard = None
        self.streams = InputStreams(getattr(job.options, "local_tmp_dir", None))
        self.tmp_dir = None
        self.before = self.removed = 0

    def run(self):
        self.closed_stdio = open_closed_stdio()
        log_stream = self.set_up_logging()
        restore = catch_stop_signals()
        self.job.launcher = self
        try:
            self.launch(log_stream)
            return
        except KeyboardInterrupt as e:
            signum = getattr(e, "signum", signal.SIGINT)
            status, message = 128 + signum, "%s; removed %.0f MB of temporary files" % (
                "interrupted" if signum == signal.SIGINT else
                "stopped by %s" % signal.Signals(signum).name, self.removed / 2**20)
        except BrokenPipeError:
            silence_stdout()
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
            status, message = 1, "error: %s" % (os_error_text(e, self.tmp_dir),)
        finally:
            self.streams.remove()  # pipes' copies (see mrjobs.runtime.streams)
            self.job.launcher = None
            restore()
        if message:
            log_stream.write("mrsparse: %s\n" % message)
            log_stream.flush()
        sys.exit(status)

    def set_up_logging(self):
        o = self.options
        log_stream = codecs.getwriter("utf_8")(self.job.stderr)
        self.job.set_up_logging(quiet=o.quiet, verbose=o.verbose, stream=log_stream)
        if o.quiet:
            log_to_null(name="mrjobs")
        else:
            log_to_stream(name="mrjobs", debug=o.verbose, stream=log_stream)
        if not o.verbose:
            # "No configs found; falling back on auto-configuration" on every run
            logging.getLogger("mrjob.conf").setLevel(logging.ERROR)
        return log_stream

    def launch(self, log_stream):
        """Check, run, commit the output, report; measure what cleanup removes."""
        self.check_inputs()
        self.check_launch_options()
        self.check_stdout()
        self.committer = self.make_committer()
        self.guard = TaskGuard() if self.alias == "local" else None
        tmp_dirs = []
        try:
            with self.job.make_runner() as runner:
                tmp_dirs = [getattr(runner, "_local_tmp_dir", None)]
                self.tmp_dir = tmp_dirs[0]
                try:
                    self.check_output_dir(runner)
                    if self.alias == "local":
                        check_temp_disk(self.job, os.path.dirname(runner._get_local_tmp_dir()),
                                        runner._get_input_paths())
                    self.check_task_python(runner)
                    self.run_steps(runner, log_stream)
                    self.finish(runner, log_stream)
                finally:
                    self.end_tasks()
                    tmp_dirs = [getattr(runner, "_local_tmp_dir", None)]
                    self.before = sum(tree_bytes(d) for d in tmp_dirs if d)
        finally:
            self.end_tasks()  # also when the runner could not be made
            self.removed = self.before - sum(tree_bytes(d) for d in tmp_dirs if d)

    def make_committer(self):
        """The committer of ``--output-dir`` (None: the runner writes it)."""
        out, alias = self.options.output_dir, self.alias
        master = getattr(self.options, "spark_master", None) or "local"
        spark_local = alias == "spark" and master.startswith("local")
        committer = None
        if out and is_local(out) and (alias in ("inline", "local") or spark_local
                                      or out.startswith("file:")):
            committer = OutputCommitter(out, self.options.overwrite_output)
        elif out and alias == "hadoop":
            # a path on Hadoop's default filesystem (HDFS on a cluster), looked
            # at once the runner's filesystem is there (check_output_dir)
            committer = FsOutputCommitter(out, self.options.overwrite_output)
        if committer and not isinstance(committer, FsOutputCommitter):
            self.note_output(committer)
            self.refuse_temp_inside_output(committer)
        return committer

    def note_output(self, committer):
        try:
            seen = committer.note()
        except OutputConflict as e:
            raise JobError(str(e)) from None
        if seen and seen[3]:
            log.info("--overwrite-output: %s is replaced when the job succeeds",
                     self.options.output_dir)

    def end_tasks(self):
        if self.guard:
            self.guard.stop()
        if self.committer:
            self.committer.abort()

    def run_steps(self, runner, log_stream=None):
        monitor = (ProgressMonitor(runner, log, stream=log_stream)
                   if not self.options.quiet else None)
        failures = FailureReport()
        try:
            if monitor:
                monitor.start()
            with failures:
                runner.run()
        except StepFailedException as e:
            error = task_failure(runner)
            if error:
                raise error from None
            failures.release()
            logging.getLogger("mrjob").error(str(e))
            sys.exit(1)
        except Exception:
            failures.release()  # whatever mrjob said about it
            raise
        finally:
            if monitor:
                monitor.stop()

    def finish(self, runner, log_stream):
        """The end-of-run checks, then (only if they pass) the commit of the
        output, the output on stdout, and the report."""
        counters = runner.counters()
        report = run_report(counters)
        if self.options.quiet:  # only what says input was lost
            report = "\n".join(l for l in report.splitlines()
                               if l.startswith("mrsparse: skipped"))
        try:
            self.job.check_something_was_read(counters)
        except JobError:
            if report:  # what was skipped says why
                log_stream.write(report + "\n")
                log_stream.flush()
            raise
        if self.committer:
            self.committer.commit()
            log.info("job output is in %s", self.options.output_dir)
            runner._output_dir = self.committer.final  # for --cat-output
            self.committer = None
        if self.job._should_cat_output():
            self.write_stdout(runner)
        if report:
            log_stream.write(report + "\n")
            log_stream.flush()
        log_cleanup(runner)

    def write_stdout(self, runner):
        """The output to stdout; an error writing there (a full disk, a
        closed or read-only descriptor) says so, not that TMPDIR is full."""
        try:
            write_output(runner, self.job.stdout)
        except BrokenPipeError:
            raise
        except OSError as e:
            if e.filename is not None:  # a part file's, not stdout's
                raise
            where = stdout_name()
            silence_stdout()  # (Python's flush at exit would fail again)
            raise JobError("cannot write the output to stdout%s: %s: make room there, or give "
                           "--output-dir DIR" % (where, e.strerror or e)) from None

    # -- checks before anything runs ---------------------------------------------

    def refuse_temp_inside_output(self, committer):
        """A temporary directory at or inside ``--output-dir`` would be
        replaced with it (under --overwrite-output) or would change it while
        the job runs: refused before anything is written."""
        temps = [("TMPDIR", tempfile.gettempdir())]
        if getattr(self.options, "local_tmp_dir", None):
            temps.append(("--local-tmp-dir", self.options.local_tmp_dir))
        for what, path in temps:
            if relation(committer.final, path) in ("is", "holds"):
                raise JobError("the temporary directory %s (%s) is or lies inside --output-dir "
                               "%s, which the job replaces when it succeeds: set %s to a "
                               "directory apart from the output" % (
                                   path, what, self.options.output_dir, what))

    def check_inputs(self):
        """Local input paths that do not exist, or that Hadoop would not read
        (:func:`~mrjobs.runtime.paths.refuse_unread`): a message, not a traceback."""
        jobconf = getattr(self.options, "jobconf", None) or {}
        recursive = any(str(jobconf.get(k)).strip().lower() == "true" for k in RECURSIVE_KEYS)
        for option, path in [("input path", p) for p in self.options.args] + [
                ("%s path" % opt, p) for opt, p in self.job.other_inputs()]:
            if path == "-" or not is_local(path):
                continue
            if not glob.glob(local_path(path)):
                raise JobError("%s %s does not exist" % (option, path))
            try:
                refuse_unread(path, option, recursive)
            except InputPathError as e:
                raise JobError(str(e)) from None

    def check_stdout(self):
        """Output to a stdout the run was started without is refused before
        the work (it would be lost)."""
        if "stdout" in self.closed_stdio and self.job._should_cat_output():
            raise JobError("stdout is closed (the run was started with >&- or without a "
                           "stdout): give --output-dir DIR for the output, or open stdout")

    def check_launch_options(self):
        """Checks only the launcher can make (the tasks never see them)."""
        inputs = [("the input", p) for p in self.options.args]
        inputs += [(opt, p) for opt, p in self.job.other_inputs()]
        try:
            refuse_overlap(self.options.output_dir, inputs)
        except OverlapError as e:
            raise JobError(str(e)) from None
        self.job.read_streams(self.streams)
        self.job.check_launch()

    def check_output_dir(self, runner):
        out = self.options.output_dir
        if isinstance(self.committer, FsOutputCommitter):
            self.committer.fs = runner.fs.hadoop
            local = self.committer.local_mode_path()
            if local:
                self.commit_locally(runner, local)
            else:
                self.note_output(self.committer)
            return
        if not out or self.committer:
            return  # the committer looked at it (OutputCommitter.note)
        if is_local(out) and os.path.exists(local_path(out)) \
                and not os.path.isdir(local_path(out)):
            raise JobError("--output-dir %s is a file, not a directory: give a directory "
                           "(the job writes part files into it)" % out)
        try:
            exists = runner.fs.exists(out)
            entries = list(runner.fs.ls(out)) if exists else []
        except (IOError, OSError) as e:  # not "nothing there": refused before the work
            raise JobError("--output-dir %s is on %s, which cannot be reached from here (%s): "
                           "make it reachable (the filesystem and its client, e.g. "
                           "--hadoop-bin for hdfs://) or give --output-dir on one that is"
                           % (out, out.partition("://")[0] + "://" if "://" in out else
                              "the runner's filesystem", e)) from None
        if not entries:
            return
        if not self.options.overwrite_output:
            raise JobError("--output-dir %s is not empty (%d entries, e.g. %s): the job "
                           "would mix its part files with what is there. Choose another "
                           "directory, remove it, or pass --overwrite-output"
                           % (out, len(entries), entries[0]))
        log.info("--overwrite-output: removing the contents of %s", out)
        runner.fs.rm(out)

    def commit_locally(self, runner, local):
        """Hadoop in local mode (no cluster) takes a plain ``--output-dir``
        path as the local directory ``local``, not mrjob's ``hdfs://``: the
        local committer then, with its checks, and Hadoop writes beside it."""
        log.info("--output-dir %s: Hadoop runs in local mode; the output goes to the local "
                 "directory %s", self.options.output_dir, local)
        self.committer = OutputCommitter(self.options.output_dir, self.options.overwrite_output)
        self.note_output(self.committer)
        self.refuse_temp_inside_output(self.committer)
        runner._output_dir = "file://" + self.committer.tmp

    def check_task_python(self, runner):
        if self.alias == "inline":
            missing = [m for m in self.job.task_modules() if not importable(m)]
            if missing:
                raise JobError("this Python (%s) cannot import %s: install it"
                               % (sys.executable, ", ".join(missing)))
        elif self.alias == "local":
            python = runner._task_python_bin()
            error = check_task_python(python, self.job.task_modules(), probed=probe(
                self.job, python, runner._opts.get("cmdenv")))
            if error:
                raise JobError(error)


def importable(module):
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False
