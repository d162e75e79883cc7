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
import logging
import os
import signal
import subprocess
import sys

from mrjob.step import StepFailedException
from mrjob.util import log_to_null, log_to_stream

from mrjobs.counters import run_report
from mrjobs.parsing import InputError
from mrjobs.runtime.epilogue import FailureReport, log_cleanup, task_failure, write_output
from mrjobs.runtime.failures import JobError, TaskFailed, os_error_text
from mrjobs.runtime.commit import FsOutputCommitter
from mrjobs.runtime.launchchecks import LaunchChecks
from mrjobs.runtime.manifest import MANIFEST, write_manifest
from mrjobs.runtime.paths import local_input_files, tree_bytes
from mrjobs.runtime.progress import ProgressMonitor
from mrjobs.runtime.signals import (catch_stop_signals, open_closed_stdio, silence_stdout,
                                    stdout_name)
from mrjobs.runtime.streams import InputStreams
from mrjobs.runtime.tasks import TaskGuard
from mrjobs.runtime.tempdisk import check_temp_disk

__all__ = ["run_job", "Launch"]

log = logging.getLogger("mrjobs.job")


def run_job(job):
    """Run ``job`` (a :class:`~mrjobs.job.SparseJob` with parsed options) as
    mrjob does, with what the module docstring says; exits on an error."""
    Launch(job).run()


class Launch(LaunchChecks):
    """One run of a job: its committer, its task guard, its streams read into
    files, and what its cleanup removed; its checks before the work are
    :class:`~mrjobs.runtime.launchchecks.LaunchChecks`."""

    def __init__(self, job):
        self.job = job
        self.options = job.options
        self.alias = job._runner_class().alias
        self.committer = None
        self.guard = None
        self.streams = InputStreams(getattr(job.options, "local_tmp_dir", None))
        self.tmp_dir = None
        self.before = self.removed = 0
        self.tmp_dirs = []

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
        self.job.set_up_runs()
        self.guard = TaskGuard() if self.alias == "local" else None
        try:
            with self.job.make_runner() as runner:
                self.tmp_dir = getattr(runner, "_local_tmp_dir", None)
                try:
                    self.check_output_dir(runner, writes=not self.job.second_run())
                    if self.alias == "local":
                        check_temp_disk(self.job, os.path.dirname(runner._get_local_tmp_dir()),
                                        runner._get_input_paths())
                    self.check_task_python(runner)
                    self.run_steps(runner, log_stream)
                    self.after_run(runner, log_stream)
                finally:
                    self.end_tasks()
                    self.note_tmp(runner)
        finally:
            self.end_tasks()  # also when the runner could not be made
            self.removed = self.before - sum(tree_bytes(d) for d in self.tmp_dirs)

    def note_tmp(self, runner):
        """Note ``runner``'s temporary directory and its bytes, before its
        cleanup (what the run's end says it removed: of every run)."""
        d = getattr(runner, "_local_tmp_dir", None)
        if d:
            self.tmp_dirs.append(d)
            self.before += tree_bytes(d)

    def after_run(self, runner, log_stream, counters=None):
        """After the run of ``runner``: the job's next run over its output
        (:meth:`~mrjobs.job.Runs.second_run`), or the end.  The checks
        and report are of the job's own run (``counters``, where a run after
        it reads its output), not of a run before it that only prepares
        (:meth:`~mrjobs.job.Runs.preliminary_run`)."""
        if not self.job.preliminary_run() and counters is None:
            counters = runner.counters()
        if not self.job.second_run():
            return self.finish(runner, log_stream, counters)
        if counters is not None:
            self.check_read(counters, log_stream)
        self.job.start_second_run(runner)
        with self.job.make_runner() as second:
            try:
                self.direct_output(second)
                self.run_steps(second, log_stream)
                self.after_run(second, log_stream, counters)
            finally:
                self.note_tmp(second)

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
            if self.options.quiet:  # (mrjob's log, which says why, is off)
                raise JobError("%s; run without -q for the runner's log of it"
                               % _step_failed(e)) from None
            logging.getLogger("mrjob").error(str(e))
            sys.exit(1)
        except Exception:
            failures.release()  # whatever mrjob said about it
            raise
        finally:
            if monitor:
                monitor.stop()

    def report(self, counters):
        report = run_report(counters)
        if self.options.quiet:  # only what says input was lost
            report = "\n".join(l for l in report.splitlines()
                               if l.startswith("mrsparse: skipped"))
        return report

    def check_read(self, counters, log_stream):
        """The job's check that something was read; what was skipped says why."""
        try:
            self.job.check_something_was_read(counters)
        except JobError:
            report = self.report(counters)
            if report:
                log_stream.write(report + "\n")
                log_stream.flush()
            raise

    def finish(self, runner, log_stream, counters=None):
        """The end-of-run checks, then (only if they pass) the commit of the
        output, the output on stdout, and the report (of ``counters``, the
        first run's, where the output went through a second)."""
        counters = counters if counters is not None else runner.counters()
        report = self.report(counters)
        self.check_read(counters, log_stream)
        if self.committer:
            self.write_manifest(runner)
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

    def write_manifest(self, runner):
        """The manifest of what made the output (the job's
        :meth:`~mrjobs.job.SparseJob.manifest`), written beside it before the
        commit, where the output and the input files are local."""
        made = self.job.manifest()
        if made is None or isinstance(self.committer, FsOutputCommitter):
            return
        inputs = local_input_files(runner._get_input_paths())
        if inputs is None:
            log.info("no %s: an input is not a local file", MANIFEST)
            return
        os.makedirs(self.committer.tmp, exist_ok=True)
        write_manifest(self.committer.tmp, made, inputs)

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


def _step_failed(e):
    """mrjob's StepFailedException ``e`` in a few words: its steps, not the command."""
    if e.step_num is None:
        return "the job failed"
    last = e.last_step_num if e.last_step_num is not None else e.step_num
    steps = ("step %d" % (e.step_num + 1) if last == e.step_num
             else "steps %d-%d" % (e.step_num + 1, last + 1))
    return "%s of %s failed" % (steps, e.num_steps or "?")
