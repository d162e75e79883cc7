"""The task processes of a run: they end with their launcher, and the task
Python is checked before a local run.

* :class:`TaskGuard` -- task processes of the local runner end with their
  launcher: the launcher holds a POSIX record lock (``fcntl.lockf``: not
  inherited by ``fork``, released by the kernel whenever the launcher's
  process ends, even by ``kill -9``); a thread in each task tries the lock
  every half second and ends the task once it can take it.  On an orderly
  end (Ctrl-C, a failed step) the launcher also stops the tasks it knows by
  the pid files they leave, and waits for them before temporary files go.
* :func:`probe_task_python`, :func:`check_task_python` -- what the task
  Python can import, asked without importing it.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

from mrjobs.parsing import InputError
from mrjobs.runtime.failures import INPUT_FAILED, TASK_FAILED, TaskFailed, os_error_text
from mrjobs.runtime.testhooks import task_hooks

__all__ = ["task_errors", "TaskGuard", "watch_launcher", "probe_task_python", "check_task_python"]

LOCK_ENV = "MRSPARSE_LAUNCHER_LOCK"
#: seconds between a task's looks at its launcher's lock
WATCH_EVERY = 0.5


class TaskGuard:
    """The launcher's side: a held lock, and the tasks' pid files.

    Use as a context manager around the run; :attr:`env` goes into the
    tasks' environment (mrjob's ``cmdenv``).
    """

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="mrsparse-tasks-")
        self.lock = os.path.join(self.dir, "launcher.lock")
        self._fd = None
        self.env = {}
        try:
            import fcntl
        except ImportError:  # no POSIX locks (Windows): tasks go unwatched
            return
        self._fd = os.open(self.lock, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.lockf(self._fd, fcntl.LOCK_EX)
        self.env = {LOCK_ENV: self.lock}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def pids(self):
        return [int(f) for f in os.listdir(self.dir) if f.isdigit()]

    def stop(self, patience=30.0):
        """End every task still running (SIGTERM, then SIGKILL after
        ``patience`` seconds), release the lock, remove the pid files."""
        if not os.path.isdir(self.dir):
            return
        if self._fd is not None:
            os.close(self._fd)  # releases the lock: watching tasks end themselves
            self._fd = None
        pids = self.pids()
        for pid in pids:
            _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + patience
        while pids and time.monotonic() < deadline:
            time.sleep(0.05)
            pids = [p for p in pids if _alive(p)]
        for pid in pids:
            _signal(pid, getattr(signal, "SIGKILL", signal.SIGTERM))
        shutil.rmtree(self.dir, ignore_errors=True)


def _signal(pid, sig):
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def _alive(pid):
    """Whether task ``pid`` still runs.  A task the launcher started itself (a
    step of one task runs without a pool) is reaped here once it ended: else
    it would stay a zombie, which ``os.kill`` finds (Ctrl-C waited the whole
    patience)."""
    try:
        if os.waitpid(pid, os.WNOHANG)[0]:
            return False
    except (OSError, AttributeError):  # not the launcher's child; no WNOHANG (Windows)
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def watch_launcher():
    """In a task process of the local runner: leave a pid file for the
    launcher, and end this process once the launcher's lock is free (the
    launcher ended, however).  Does nothing elsewhere.  Returns a function
    that removes the pid file."""
    lock = os.environ.get(LOCK_ENV)
    if not lock:
        return lambda: None
    import fcntl
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:  # the launcher already cleaned up
        os._exit(1)
    pid_file = os.path.join(os.path.dirname(lock), str(os.getpid()))
    try:
        open(pid_file, "w").close()
    except OSError:
        pid_file = None

    def watch():
        while True:
            try:
                fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:  # held: the launcher lives
                time.sleep(WATCH_EVERY)
                continue
            os._exit(1)

    threading.Thread(target=watch, name="mrsparse-launcher-watch", daemon=True).start()

    def done():
        if pid_file:
            try:
                os.remove(pid_file)
            except OSError:
                pass
    return done


# -- the task Python -----------------------------------------------------------

#: run by the task Python: where it finds each module (a JSON line), without
#: importing any (a package's submodule is looked up in the package's
#: directories); its own directory, which a task's is not, left out
_PROBE = r"""
import importlib.machinery, importlib.util, json, os, sys
if sys.path and sys.path[0] == "":
    del sys.path[0]
def find(name):
    parent, _, child = name.rpartition(".")
    if not parent:
        return importlib.util.find_spec(name)
    spec = find(parent)
    if spec is None:
        raise ModuleNotFoundError("No module named %r" % parent, name=parent)
    if spec.submodule_search_locations is None:
        return None
    return importlib.machinery.PathFinder.find_spec(name, spec.submodule_search_locations)
found, missing = {}, {}
for name in sys.argv[1:]:
    try:
        spec = find(name)
    except ImportError as e:
        spec, error = None, "%s: %s" % (type(e).__name__, e)
    else:
        error = "ModuleNotFoundError: No module named %r" % name
    if spec is None:
        missing[name] = error
        continue
    found[name] = os.path.realpath(spec.origin) if spec.origin and spec.has_location else None
print(json.dumps({"found": found, "missing": missing}))
"""


def probe_task_python(python_bin, modules, env=None):
    """Where the interpreter ``python_bin`` (a command list, run with the
    environment ``env``) finds each of ``modules``, found by name as an import
    would, without importing them (milliseconds, where ``import scipy.sparse``
    takes half a CPU second).

    Returns
    -------
    (dict, dict or str)
        ``{module: real path of its file, or None}`` for the modules found,
        and ``{module: why not}`` for the others -- or, where the interpreter
        does not run or answer, one line that says why, for every module.
    """
    try:
        proc = subprocess.run(list(python_bin) + ["-c", _PROBE] + list(modules),
                              capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              env=env)
    except OSError as e:
        return {}, "the task Python %s does not run (%s)" % (" ".join(python_bin), e)
    try:
        report = json.loads(proc.stdout.strip().splitlines()[-1])
        return dict(report["found"]), dict(report["missing"])
    except (ValueError, IndexError, KeyError, TypeError):
        return {}, (proc.stderr.strip().splitlines() or
                    ["exit status %d" % proc.returncode])[-1]


def _cannot_import(python_bin, modules, why):
    return ("the task Python %s cannot import %s (%s): install %s in the task Python "
            "(--python-bin / --task-python-bin)" % (" ".join(python_bin), ", ".join(modules),
                                                    why, " and ".join(
                                                        sorted({m.split(".")[0] for m in modules}))))


def check_task_python(python_bin, modules, env=None, probed=None):
    """An error message if the interpreter ``python_bin`` (a command list)
    cannot find ``modules``, else None.  ``probed``: what
    :func:`probe_task_python` answered for (at least) these modules."""
    found, missing = probed or probe_task_python(python_bin, modules, env)
    if isinstance(missing, str):
        if missing.startswith("the task Python "):
            return missing
        return _cannot_import(python_bin, modules, missing)
    why = next((missing[m] for m in modules if m in missing), None)
    return _cannot_import(python_bin, modules, why) if why else None


class task_errors:
    """Around a task: numpy's floating-point errors raise (no warning text on
    mrjob's byte streams), and a bad line under ``--strict``, a decoding or
    numeric error, running out of memory or a missing module leaves the task
    as one clear line on its stderr, saying what to do -- on Hadoop and the
    local runner that is what the job's failure shows -- instead of a
    traceback from deep inside.  On the inline runner the error reaches the
    launcher, which prints the same line.  A task of the local runner also
    ends when its launcher does (:func:`mrjobs.runtime.tasks.watch_launcher`)."""

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
            prefix = INPUT_FAILED if isinstance(exc, InputError) else TASK_FAILED
            sys.stderr.write("%s%s\n" % (prefix, message))
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
