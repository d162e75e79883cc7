"""The checks a launch makes before any work (:class:`LaunchChecks`, a part of
:class:`mrjobs.runtime.launch.Launch`): the inputs exist and are what Hadoop
would read, the output's place can take it (not over an input, not holding
the temporary directory, not a mount point, writable, on a filesystem the
runner reaches), stdout is there if the output goes to it, the task Python
can import what the tasks import.  Each refusal is a :class:`JobError`:
one line that says what, where, and what to do."""
import glob
import importlib.util
import logging
import os
import sys
import tempfile

from mrjobs.runtime.commit import FsOutputCommitter, OutputCommitter, OutputConflict
from mrjobs.runtime.failures import JobError
from mrjobs.runtime.paths import (RECURSIVE_KEYS, InputPathError, OverlapError, is_local,
                                  local_path, refuse_overlap, refuse_unread, relation)
from mrjobs.runtime.runnerargs import probe
from mrjobs.runtime.tasks import check_task_python

__all__ = ["LaunchChecks", "importable"]

log = logging.getLogger("mrjobs.job")


class LaunchChecks:
    """The checks of a :class:`~mrjobs.runtime.launch.Launch` (its ``job``,
    ``options``, ``alias``, ``committer``, ``streams`` and ``closed_stdio``)
    and the committer they look at."""

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

    def check_output_dir(self, runner, writes=True):
        """The output's place checked; ``writes``: ``runner`` writes the output
        (not a first run whose output a second one reads)."""
        out = self.options.output_dir
        if isinstance(self.committer, FsOutputCommitter):
            self.committer.fs = runner.fs.hadoop
            local = self.committer.local_mode_path()
            if local:
                self.commit_locally(local)
            else:
                self.note_output(self.committer)
            if writes:
                self.direct_output(runner)
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

    def commit_locally(self, local):
        """Hadoop in local mode (no cluster) takes a plain ``--output-dir``
        path as the local directory ``local``, not mrjob's ``hdfs://``: the
        local committer then, with its checks, and Hadoop writes beside it."""
        log.info("--output-dir %s: Hadoop runs in local mode; the output goes to the local "
                 "directory %s", self.options.output_dir, local)
        self.committer = OutputCommitter(self.options.output_dir, self.options.overwrite_output)
        self.note_output(self.committer)
        self.refuse_temp_inside_output(self.committer)

    def direct_output(self, runner):
        """Hadoop's ``runner`` writes to the local committer's place (local mode)."""
        if self.alias == "hadoop" and isinstance(self.committer, OutputCommitter) \
                and not isinstance(self.committer, FsOutputCommitter):
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
        elif self.alias == "hadoop":
            self.warn_relative_python(runner)

    def warn_relative_python(self, runner):
        """A ``--python-bin`` path relative to here on Hadoop, whose tasks
        start in working directories of their own: they would not find it
        (it may be meant for them: an archive unpacked in their working
        directory), so a warning, not a refusal."""
        python = (runner._opts.get("python_bin") or [None])[0]
        if python and "/" in python and not os.path.isabs(python) and os.path.exists(python):
            log.warning("--python-bin %s is a path relative to here, but each Hadoop task "
                        "starts in a working directory of its own, where it is not: give an "
                        "absolute path (here: %s)", python, os.path.abspath(python))


def importable(module):
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False
