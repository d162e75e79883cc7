"""The task processes of a local run that are running, and how to end them:
each started as a fork of the run's :class:`~mrjobs.runtime.taskfork.TaskForker`
where it can be, else as a fresh interpreter (mrjob's ``Popen``)."""
import logging
import subprocess
import threading
import time
from concurrent.futures import wait

from mrjob.util import cmd_line

__all__ = ["TaskProcesses"]

log = logging.getLogger(__name__)


class TaskProcesses:
    """The task processes of a run that are running, and how to end them.

    A task whose process was started here (on the launcher's main thread or
    one of its task threads) is ended here: on the main thread a signal or
    Ctrl-C during its wait ends it before the exception goes on; on the
    threads, :meth:`stop`.  After :meth:`stop` no task starts."""

    #: seconds a task has to end on SIGTERM before SIGKILL
    PATIENCE = 30.0

    def __init__(self):
        self._lock = threading.Lock()
        self._running = set()
        self._stopping = False
        #: the run's :class:`~mrjobs.runtime.taskfork.TaskForker`, or None;
        #: how many tasks it forked and how many started as fresh interpreters
        self.forker = None
        self.forked = self.fresh = 0

    def invoke(self, task, args, stdin, stdout, stderr, wd, env):
        """mrjob's ``_invoke_task_in_subprocess``: run the task (``task``: its
        ``task_type``, ``step_num``, ``task_num`` and the ``num_steps``) with
        the command ``args``, raise mrjob's task failure when it fails."""
        log.debug("> %s", cmd_line(args))
        failed = None
        with self._lock:
            if self._stopping:
                failed = "the run is stopping"
        if failed is None:
            try:
                proc, forked = self._start(args, stdin, stdout, stderr, wd, env)
            except OSError as e:
                failed = str(e)
            else:
                with self._lock:
                    self._running.add(proc)
                    self.forked += forked
                    self.fresh += not forked
                    late = self._stopping  # (stop() came while it started)
                if late:
                    _end([proc], self.PATIENCE)
        if failed is None:
            try:
                status = proc.wait()
            except BaseException:  # a signal or Ctrl-C on the main thread
                _end([proc], self.PATIENCE)
                raise
            finally:
                with self._lock:
                    self._running.discard(proc)
            if status:
                failed = str(subprocess.CalledProcessError(status, args))
        if failed is not None:
            from mrjob.local import _TaskFailedException  # (after localrunner's import of it)
            raise _TaskFailedException(reason=failed, **task)

    def _start(self, args, stdin, stdout, stderr, wd, env):
        """The task's process, and whether it was forked: where the run's forker
        can (waiting for its server's imports, outside the lock that
        :meth:`stop` takes), else a fresh interpreter."""
        proc = self.forker and self.forker.start(args, stdin, stdout, stderr, wd, env)
        if proc:
            return proc, True
        return subprocess.Popen(args, stdin=stdin, stdout=stdout, stderr=stderr, cwd=wd,
                                env=env), False

    def stop(self, futures=()):
        """No task starts from now on; the running ones end (SIGTERM, then
        SIGKILL after :attr:`PATIENCE` seconds) and ``futures`` (their
        threads' work) are waited for."""
        with self._lock:
            self._stopping = True
            running = list(self._running)
        _end(running, self.PATIENCE)
        wait(futures, timeout=self.PATIENCE)


def _end(procs, patience):
    """SIGTERM to each of ``procs``, SIGKILL to those still there after
    ``patience`` seconds; reaps them."""
    for proc in procs:
        if proc.poll() is None:
            try:
                proc.terminate()
            except OSError:
                pass
    deadline = time.monotonic() + patience
    for proc in procs:
        try:
            proc.wait(max(deadline - time.monotonic(), 0))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
