"""Task processes forked from one that has done their imports: for the local
runner's Python tasks what Hadoop's JVM reuse does for its Java ones.

Each task of the local runner is a process of its own, ``python
dot_products.py --step-num=N --mapper ...``, and a fresh interpreter spends
about 0.15 CPU second importing numpy, scipy, mrjob and the job before it
reads a line: more than the work of a small task, and on the path of every
map and reduce phase.  A :class:`TaskForker` starts one server process a run
(``python -c ...``, with the tasks' environment), which imports those modules
once and then forks a process for each task it is handed: the task's
standard streams, working directory, environment and arguments are the ones
mrjob gives the fresh interpreter, ``sitecustomize`` runs again with them,
its script runs as ``__main__`` (its directory first on ``sys.path``, as
Python puts it) and it ends as an interpreter does (its threads joined,
``atexit`` functions run, streams flushed); a task takes ~0.02 s to start
instead of ~0.17.

The tasks stay processes of the run's process group, each ended by the
runner as before (:class:`ForkedTask` has the part of
:class:`subprocess.Popen` the runner uses).  Between the server and each task
stands a small waiter process, which reports the task's exit status and
keeps its process id from being reused until the runner has read it; the
server reaps the waiters, so that the tasks' CPU counts in the run's
(``RUSAGE_CHILDREN``, as ``time`` reports it).

Used on Linux (elsewhere where the environment variable ``MRSPARSE_TASK_FORK``
is ``1``) where a task is run with the interpreter that the server runs and
a script (``PYTHON SCRIPT.py ARGS``; not through a setup wrapper); else,
where the server is gone (a signal to the process group ends it), or where
``MRSPARSE_TASK_FORK`` is ``0``, tasks start as fresh interpreters.  ``ps``
shows a forked task under the server's command line, and
``/proc/PID/environ`` holds the server's environment, not the task's
(``os.environ`` in the task is the task's).  The server's own streams are
``/dev/null``: a task's are put over them, and keep the text layers Python
made for them (encoding, errors, buffering: a fresh interpreter's, for files).
"""
import atexit
import builtins
import importlib
import importlib.machinery
import io
import json
import logging
import os
import resource
import signal
import socket
import struct
import subprocess
import sys
import threading
import types

__all__ = ["ENV", "TaskForker", "ForkedTask", "enabled", "preload_modules"]

log = logging.getLogger(__name__)

#: ``0`` (or ``false``, ``no``, ``off``): every task a fresh interpreter;
#: ``1``: forked tasks off Linux too
ENV = "MRSPARSE_TASK_FORK"
#: what a task process and the job scripts always import
BASE_MODULES = ("numpy", "scipy.sparse", "mrjob.job", "mrjobs.job")
_MAX_REQUEST = 1 << 20
_PID = struct.Struct("<q")
_STATUS = struct.Struct("<i")
_CPU = struct.Struct("<d")
_USAGE = b"usage"
_SERVE = "import sys; from mrjobs.runtime.taskfork import serve; serve(sys.argv[1:])"


def enabled(environ=None, platform=sys.platform):
    """Whether tasks are forked: on Linux unless ``MRSPARSE_TASK_FORK`` is
    ``0``; elsewhere only where it is ``1`` (macOS's system libraries, which
    numpy and scipy may load, are not promised to survive a fork), and only
    where the platform can."""
    value = (os.environ if environ is None else environ).get(ENV, "").strip().lower()
    wanted = (value in ("1", "true", "yes", "on") or not value and platform.startswith("linux"))
    return (wanted and hasattr(os, "fork") and hasattr(socket, "send_fds")
            and hasattr(socket, "AF_UNIX"))


def preload_modules(script):
    """The modules the server imports for tasks of ``script``: the usual ones
    and, where the script is a module of the ``mrjobs`` package, that module."""
    modules = list(BASE_MODULES)
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if script and os.path.dirname(os.path.realpath(script)) == os.path.realpath(package):
        name = os.path.splitext(os.path.basename(script))[0]
        if name.isidentifier():
            modules.append("mrjobs." + name)
    return modules


class TaskForker:
    """The server of a run's forked tasks (see the module).

    Parameters
    ----------
    python : str
        The interpreter of the tasks; only tasks run with it are forked.
    env : dict
        The environment the server imports in (the run's tasks').
    modules : list of str
        What it imports.
    """

    def __init__(self, python, env, modules):
        self.python = python
        self._lock = threading.Lock()
        self._sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._server = subprocess.Popen(
                [python, "-c", _SERVE, str(theirs.fileno())] + list(modules),
                pass_fds=[theirs.fileno()], env=env, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError:
            self._sock.close()
            raise
        finally:
            theirs.close()

    def start(self, args, stdin, stdout, stderr, cwd, env):
        """The task ``args`` (``[python, script, ...]``) started in a forked
        process: a :class:`ForkedTask`, or None where this task cannot be
        forked (another interpreter, no script) or the server is gone."""
        if (len(args) < 2 or args[0] != self.python or args[1].startswith("-")
                or not args[1].endswith(".py")):
            return None
        request = json.dumps({"argv": list(args), "cwd": cwd, "env": dict(env)}).encode()
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with self._lock:
                socket.send_fds(self._sock, [request], [
                    stdin.fileno(), stdout.fileno(), stderr.fileno(), theirs.fileno()])
            theirs.close()  # (before the wait: an end of file then means the server is gone)
            data = _recv_exactly(mine, _PID.size)
        except OSError as e:
            log.debug("task fork server: %s; the task starts as a fresh interpreter", e)
            data = b""
        finally:
            theirs.close()
        if not data:
            mine.close()
            return None
        return ForkedTask(_PID.unpack(data)[0], args, mine)

    def usage(self):
        """CPU seconds of the server and of every task it forked that has
        ended (waited for here: call it between steps), which this process's
        ``RUSAGE_CHILDREN`` holds only once the server ends (0.0 where the
        server is gone)."""
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with self._lock:
                socket.send_fds(self._sock, [_USAGE], [theirs.fileno()])
            theirs.close()
            data = _recv_exactly(mine, _CPU.size)
        except OSError:
            data = b""
        finally:
            theirs.close()
            mine.close()
        return _CPU.unpack(data)[0] if data else 0.0

    def close(self):
        """End the server (tasks it forked go on; their waiters report them)."""
        self._sock.close()
        try:
            self._server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._server.kill()
            self._server.wait()


class ForkedTask:
    """A forked task: the ``pid``, ``args``, ``returncode``, ``poll``,
    ``wait``, ``send_signal``, ``terminate`` and ``kill`` of
    :class:`subprocess.Popen`."""

    def __init__(self, pid, args, reply):
        self.pid, self.args, self.returncode = pid, args, None
        self._reply = reply
        self._lock = threading.Lock()

    def wait(self, timeout=None):
        if self.returncode is not None:
            return self.returncode
        if not self._lock.acquire(timeout=-1 if timeout is None else timeout):
            raise subprocess.TimeoutExpired(self.args, timeout)
        try:
            if self.returncode is None:
                self._reply.settimeout(timeout)
                try:
                    data = _recv_exactly(self._reply, _STATUS.size)
                except (socket.timeout, BlockingIOError):
                    raise subprocess.TimeoutExpired(self.args, timeout) from None
                # (no status: the waiter was killed; so, surely, was the task)
                self.returncode = (os.waitstatus_to_exitcode(_STATUS.unpack(data)[0])
                                   if data else -signal.SIGKILL)
                self._reply.close()  # (the waiter may now reap the task)
        finally:
            self._lock.release()
        return self.returncode

    def poll(self):
        try:
            return self.wait(0)
        except subprocess.TimeoutExpired:
            return None

    def send_signal(self, sig):
        if self.poll() is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def terminate(self):
        self.send_signal(signal.SIGTERM)

    def kill(self):
        self.send_signal(signal.SIGKILL)


def _recv_exactly(sock, n):
    """``n`` bytes from ``sock``, or b"" where it closes first."""
    data = b""
    while len(data) < n:
        got = sock.recv(n - len(data))
        if not got:
            return b""
        data += got
    return data


# -- the server and what it forks (in their own processes) -------------------------


def serve(argv):
    """The server: ``argv`` is its socket's descriptor and the modules to
    import; a request is the task's JSON and four descriptors (its stdin,
    stdout, stderr and the socket its waiter answers on).  Ends when the
    runner closes its socket."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # (Ctrl-C is for the tasks and the runner)
    sock = socket.socket(fileno=int(argv[0]))
    for name in argv[1:]:
        try:
            __import__(name)
        except Exception:  # (the task imports it itself, and says what is wrong)
            pass
    while True:
        _reap(os.WNOHANG)
        try:
            request, fds, flags, _ = socket.recv_fds(sock, _MAX_REQUEST, 4)
        except OSError:
            break
        if not request and not fds:
            break
        if request == _USAGE and len(fds) == 1:
            _report_usage(fds[0])
            continue
        if len(fds) != 4 or flags & socket.MSG_TRUNC:
            for fd in fds:
                os.close(fd)
            continue
        pid = os.fork()
        if pid == 0:
            sock.close()
            _waiter(request, fds)
        for fd in fds:
            os.close(fd)
    _reap(0)
    os._exit(0)


def _report_usage(fd):
    """Send the CPU seconds of the server and its ended waiters' (their tasks
    included) on ``fd``, all of them waited for first."""
    _reap(0)
    cpu = sum(r.ru_utime + r.ru_stime for r in (
        resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)))
    with socket.socket(fileno=fd) as sock:
        try:
            sock.sendall(_CPU.pack(cpu))
        except OSError:
            pass


def _reap(options):
    """Reap the waiters that ended (``options`` 0: all, waiting for them), so
    that their tasks' CPU counts in the run's (``RUSAGE_CHILDREN``)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, options)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _waiter(request, fds):
    """Fork the task; tell the runner its pid, then its status (the task
    left a zombie until the runner has read it); never returns."""
    code = 0
    try:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)  # (the waiter outlives its task, to report it)
        *streams, reply = fds
        task = json.loads(request)
        pid = os.fork()
        if pid == 0:
            os.close(reply)
            _task(task, streams)
        for fd in streams:
            os.close(fd)
        with socket.socket(fileno=reply) as sock:
            sock.sendall(_PID.pack(pid))
            if hasattr(os, "waitid"):
                status = _exit_status(os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT))
                sock.sendall(_STATUS.pack(status))
                try:
                    sock.recv(1)  # (until the runner has it: the pid stays the task's)
                except OSError:
                    pass
                os.waitpid(pid, 0)
            else:
                sock.sendall(_STATUS.pack(os.waitpid(pid, 0)[1]))
    except BaseException:
        code = 1
    os._exit(code)


def _exit_status(info):
    """A ``waitpid`` status from a ``waitid`` result."""
    if info.si_code == os.CLD_EXITED:
        return (info.si_status & 0xff) << 8
    return info.si_status & 0x7f  # (killed or dumped: the signal)


def _task(task, streams):
    """Become the task: ``python SCRIPT ARGS`` as a fresh interpreter runs it;
    never returns."""
    code = 1
    try:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for target, fd in enumerate(streams):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(task["cwd"])
        os.environ.clear()
        os.environ.update(task["env"])
        script = os.path.abspath(task["argv"][1])  # (its __file__, as Python gives it)
        sys.argv = list(task["argv"][1:])
        # (the server's sys.path[0] is -c's "": a fresh interpreter's site runs
        # without a first entry, then puts the script's directory there -- or
        # nothing, under -P / PYTHONSAFEPATH)
        safe_path = getattr(sys.flags, "safe_path", False)
        if not safe_path:
            del sys.path[0]
        _site_again()
        if not safe_path:
            sys.path.insert(0, os.path.dirname(os.path.realpath(script)))
        code = _run_main(script)
    except BaseException:  # (its place or streams failed it: said on its stderr)
        try:
            sys.excepthook(*sys.exc_info())
        except BaseException:
            pass
    finally:
        os._exit(code)


def _site_again():
    """Run ``sitecustomize`` and ``usercustomize`` again, as a fresh
    interpreter's ``site`` would with the task's arguments and environment
    (the server imported them with its own)."""
    for name in ("sitecustomize", "usercustomize"):
        module = sys.modules.get(name)
        if module is None or getattr(module, "__file__", None) is None:
            continue
        try:
            importlib.reload(module)
        except Exception as e:  # (as site.py reports it, and goes on)
            sys.stderr.write("Error in %s; set PYTHONVERBOSE for traceback:\n%s: %s\n"
                             % (name, type(e).__name__, e))


def _run_main(script):
    """Run ``script`` as ``__main__`` and finish as the interpreter would:
    the exit status."""
    try:
        _exec_main(script)
        code = 0
    except SystemExit as e:
        code = _system_exit_code(e.code)
    except KeyboardInterrupt:
        _flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)  # (as Python ends on an uncaught Ctrl-C)
        code = 130
    except BaseException:
        kind, value, tb = sys.exc_info()
        first = tb
        while first is not None and first.tb_frame.f_code.co_filename != script:
            first = first.tb_next  # (the traceback from the script on, as Python prints it)
        sys.excepthook(kind, value.with_traceback(first or tb), first or tb)
        code = 1
    threading._shutdown()  # (the interpreter's own exit: non-daemon threads joined)
    atexit._run_exitfuncs()
    if not _flush() and code == 0:
        code = 120  # (Python's status where flushing stdout fails at exit)
    return code


def _exec_main(script):
    """Execute ``script`` as the module ``__main__`` (as the interpreter
    does: ``runpy.run_path`` would change ``sys.argv[0]``)."""
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=script, __cached__=None, __builtins__=builtins,
                         __loader__=importlib.machinery.SourceFileLoader("__main__", script))
    sys.modules["__main__"] = main
    with io.open_code(script) as f:
        source = f.read()
    exec(compile(source, script, "exec", dont_inherit=True), main.__dict__)


def _system_exit_code(value):
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xff
    try:
        sys.stderr.write("%s\n" % (value,))
    except Exception:
        pass
    return 1


def _flush():
    ok = True
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            ok = False
    return ok
