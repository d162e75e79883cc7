"""How a job is launched and how it ends, whatever ends it.

* :func:`refuse_overlap` -- an ``--output-dir`` that is, holds or lies inside
  one of the job's input paths is refused before anything is written or
  removed (local paths resolved, URIs compared by scheme, authority and path).
* :class:`OutputCommitter` -- on the inline and local runners the last step
  writes to a hidden directory beside ``--output-dir``; only a job that
  succeeded moves it into place (one atomic rename), with an empty
  ``_SUCCESS`` file as Hadoop's committer writes, and only onto what was
  there when the run started.  A failed or interrupted run leaves
  ``--output-dir`` as it was; a directory that appeared or changed there
  meanwhile makes the run fail, and both outputs are kept.
* :class:`TaskGuard` -- task processes of the local runner end with their
  launcher: the launcher holds a POSIX record lock (``fcntl.lockf``: not
  inherited by ``fork``, released by the kernel whenever the launcher's
  process ends, even by ``kill -9``); a thread in each task tries the lock
  every half second and ends the task once it can take it.  On an orderly
  end (Ctrl-C, a failed step) the launcher also stops the tasks it knows by
  the pid files they leave, and waits for them before temporary files go.
"""
import fnmatch
import glob
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from urllib.parse import urlsplit

__all__ = ["refuse_overlap", "OutputCommitter", "TaskGuard", "watch_launcher",
           "check_task_python", "probe_task_python", "tree_bytes", "OverlapError",
           "OutputConflict", "rename_noreplace", "InputPathError", "STDIN", "stdin_fd",
           "refuse_device", "is_stream", "input_kind", "matches"]

_GLOB = re.compile(r"[*?\[]")

#: environment of a local runner's tasks: the launcher's lock file
LOCK_ENV = "MRSPARSE_LAUNCHER_LOCK"
#: seconds between a task's looks at its launcher's lock
WATCH_EVERY = 0.5


class OverlapError(ValueError):
    """An output directory that would overwrite or swallow an input."""


# -- output apart from the inputs ----------------------------------------------

def _is_local(path):
    scheme = urlsplit(path).scheme
    return scheme in ("", "file") or len(scheme) == 1  # a Windows drive letter


def _local_path(path):
    """A local path or ``file:`` URI as a plain path (``file://x`` -- as mrjob
    writes a relative path -- is ``x``)."""
    if not path.startswith("file:"):
        return path
    parts = urlsplit(path)
    if parts.netloc and parts.netloc != "localhost":
        return parts.netloc + parts.path
    return parts.path or "/"


def _resolve_local(path):
    """Absolute, symlinks resolved, as far as the path has no glob characters."""
    parts = os.path.abspath(_local_path(path)).split(os.sep)
    for i, part in enumerate(parts):
        if _GLOB.search(part):
            head = os.path.realpath(os.sep.join(parts[:i]) or os.sep)
            return os.path.join(head, *parts[i:])
    return os.path.realpath(os.sep.join(parts))


def _key(path):
    """(scheme, authority, path components) of a path or URI."""
    if _is_local(path):
        return "file", "", [c for c in _resolve_local(path).split(os.sep) if c]
    parts = urlsplit(path)
    norm = os.path.normpath(parts.path or "/").replace(os.sep, "/")
    return parts.scheme.lower(), parts.netloc, [c for c in norm.split("/") if c]


def _relation(out, inp):
    """How the output ``out`` stands to the input ``inp`` (which may be a
    glob): "is", "holds", "lies inside" or None."""
    o_scheme, o_auth, o = _key(out)
    i_scheme, i_auth, i = _key(inp)
    if o_scheme != i_scheme or (o_auth and i_auth and o_auth != i_auth):
        return None
    if not all(fnmatch.fnmatchcase(a, b) for a, b in zip(o, i)):
        return None
    return "is" if len(o) == len(i) else "holds" if len(o) < len(i) else "lies inside"


def refuse_overlap(output_dir, inputs):
    """Raise :class:`OverlapError` if ``output_dir`` is, holds or lies inside
    one of ``inputs`` (``(option, path)`` pairs; ``option`` names where the
    path came from, e.g. ``"the input"`` or ``"--queries"``).

    >>> refuse_overlap("/data", [("the input", "/data/in.jsonl")])
    Traceback (most recent call last):
    ...
    mrjobs.runtime.launch.OverlapError: --output-dir /data holds the input /data/in.jsonl: ...
    >>> refuse_overlap("hdfs:///out", [("the input", "hdfs://nn:8020/data/*.jsonl")])
    """
    if not output_dir:
        return
    for option, path in inputs:
        if path == "-":
            continue
        candidates = [path]
        if _is_local(path):  # what the glob finds, symlinks resolved
            import glob
            candidates += [os.path.realpath(m) for m in glob.glob(_local_path(path))]
        for candidate in candidates:
            rel = _relation(output_dir, candidate)
            if rel:
                raise OverlapError(
                    "--output-dir %s %s %s %s: the job would write its output over its "
                    "own input (and --overwrite-output would remove it). Choose an output "
                    "directory apart from every input" % (output_dir, rel, option, path))


# -- pipes, stdin and devices as input -------------------------------------------

class InputPathError(ValueError):
    """An input that cannot be read as a job's input (a device, a pipe in a
    directory)."""


#: stands for stdin in :meth:`mrjobs.job.SparseJob._read_stream`
STDIN = object()


def stdin_fd():
    """The file descriptor mrjob would read stdin from (0 where Python has no
    sys.stdin: fd 0 was closed)."""
    try:
        return sys.stdin.fileno()
    except (AttributeError, ValueError, OSError):
        return 0


def refuse_device(st, what, tty=False, socket=False):
    """A JobError for what is not a regular file, a directory or a stream
    (a pipe or /dev/null; a socket where ``socket``: stdin's)."""
    mode = st.st_mode
    if (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or is_stream(st)
            or socket and stat.S_ISSOCK(mode)):
        return
    kind = ("a terminal" if tty else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "not a regular file")
    raise InputPathError("%s is %s, not a file, a directory or a pipe: the job would read it "
                   "without end or not at all (give input files, or a pipe such as "
                   "<(zcat x.gz))" % (what, kind))


def is_stream(st):
    """A pipe, or /dev/null: read once, to its end."""
    if stat.S_ISFIFO(st.st_mode):
        return True
    if stat.S_ISCHR(st.st_mode):
        try:
            return st.st_rdev == os.stat(os.devnull).st_rdev
        except OSError:
            return False
    return False


def input_kind(path, option):
    """"stream" where the local path (no glob) is a pipe or /dev/null, else
    "files"; a JobError naming the path where it, or a file its glob or
    directory holds, is a device (or a pipe, which only a path of its own
    can name: each is read once)."""
    if path == "-" or not _is_local(path):
        return "files"
    plain = _local_path(path)
    try:
        st = os.stat(plain)
    except OSError:
        st = None
    if st is not None and not glob.has_magic(plain):
        refuse_device(st, "%s %s" % (option, path))
        if is_stream(st):
            return "stream"
    for f in matches(plain):
        try:
            fst = os.stat(f)
        except OSError:
            continue  # (vanished, or a dangling link: mrjob says so)
        if not stat.S_ISREG(fst.st_mode):
            if is_stream(fst):
                raise InputPathError("%s %s holds %s, a pipe: name a pipe as an input of its "
                               "own (it can be read only once)" % (option, path, f))
            refuse_device(fst, "%s (in %s %s)" % (f, option, path))
    return "files"


def matches(path):
    """Every file the local path, glob or directory names (unresolved)."""
    for m in glob.glob(path) or []:
        if os.path.isdir(m):
            for root, _, files in os.walk(m):
                for f in files:
                    yield os.path.join(root, f)
        else:
            yield m



# -- the output committer ------------------------------------------------------

class OutputConflict(OSError):
    """``--output-dir`` holds something the run was not allowed to replace."""


#: flags of Linux's renameat2(2)
_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2


class _NoRenameat2(Exception):
    """renameat2 is not there (not Linux, an old libc) or not supported by
    the filesystem: the portable fallback is used."""


def _renameat2(src, dst, flags):
    import ctypes
    import errno
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        raise _NoRenameat2() from None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                   ctypes.c_uint]
    if fn(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), flags) != 0:
        err = ctypes.get_errno()
        if err in (errno.ENOSYS, errno.EINVAL):
            raise _NoRenameat2()
        raise OSError(err, os.strerror(err), src, None, dst)


def rename_noreplace(src, dst):
    """Rename ``src`` to ``dst`` only if nothing is at ``dst`` (atomically
    where the kernel can: renameat2's RENAME_NOREPLACE; else an exclusive
    ``mkdir`` of ``dst`` claims the name and ``src`` replaces that empty
    directory).  Raises :class:`FileExistsError` if something is there."""
    import errno
    try:
        _renameat2(src, dst, _RENAME_NOREPLACE)
        return
    except _NoRenameat2:
        pass
    except OSError as e:
        if e.errno in (errno.EEXIST, errno.ENOTEMPTY):
            raise FileExistsError(errno.EEXIST, "exists", dst) from None
        raise
    os.mkdir(dst)  # FileExistsError if anything is there
    try:
        os.rename(src, dst)  # over our own empty directory
    except OSError as e:
        if e.errno in (errno.EEXIST, errno.ENOTEMPTY):  # filled meanwhile: not ours
            raise FileExistsError(errno.EEXIST, "exists", dst) from None
        raise


def _exchange(a, b):
    """Swap the directories ``a`` and ``b`` atomically (renameat2's
    RENAME_EXCHANGE); where that is not available, ``b`` moves to ``a``'s
    name after ``a`` has moved aside -- two renames, each atomic."""
    try:
        _renameat2(a, b, _RENAME_EXCHANGE)
        return
    except _NoRenameat2:
        pass
    aside = a + ".aside"
    os.rename(a, aside)
    os.rename(b, a)
    try:
        rename_noreplace(aside, b)
    except OSError:
        os.rename(a, b)
        os.rename(aside, a)
        raise


def _look(path):
    """What is at ``path``, as :class:`OutputCommitter` compares it: None
    (nothing), or the kind of entry, its device and inode, and for a
    directory the name, inode, size and modification time of each entry."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    import stat
    if not stat.S_ISDIR(st.st_mode):
        return ("other", st.st_dev, st.st_ino, st.st_mode)
    listing = []
    try:
        with os.scandir(path) as it:
            for e in it:
                try:
                    s = e.stat(follow_symlinks=False)
                    listing.append((e.name, s.st_ino, s.st_size, s.st_mtime_ns))
                except OSError:
                    listing.append((e.name, None, None, None))
    except OSError as e:
        listing = [("(unreadable: %s)" % e.strerror, None, None, None)]
    return ("dir", st.st_dev, st.st_ino, tuple(sorted(listing)))


def _describe(seen):
    if seen is None:
        return "nothing"
    if seen[0] != "dir":
        return "a file"
    n = len(seen[3])
    return "an empty directory" if not n else "a directory of %d entr%s" % (
        n, "y" if n == 1 else "ies")


class OutputCommitter:
    """The output of a run on the inline and local runners: written beside
    ``--output-dir``, moved into place only by a run that succeeded.

    The rule, in two sentences: the output is committed only by a run that
    succeeded (its end-of-run checks included), in one atomic rename, and only
    onto what the run was allowed to replace -- what :meth:`note` saw at the
    start (nothing, an empty directory, or under ``--overwrite-output`` a
    non-empty one), the same directory with the same entries.  Anything else
    there at the end (a directory that appeared, another run's output, changed
    contents) makes the run fail with :class:`OutputConflict`, and both are
    kept: the occupant where it is, this run's output beside it.

    Parameters
    ----------
    output_dir : str
        The local ``--output-dir`` (a path or ``file:`` URI); a symbolic link
        stands for the directory it points to.
    overwrite : bool
        Replace a non-empty directory (only at :meth:`commit`).
    """

    def __init__(self, output_dir, overwrite=False):
        self.given = output_dir
        path = os.path.abspath(_local_path(output_dir)).rstrip(os.sep) or os.sep
        parent, name = os.path.split(path)
        # the parent's links resolved; the last component's below, in note()
        self.final = os.path.join(os.path.realpath(parent), name)
        self.overwrite = overwrite
        self.noted = None
        self._new_tmp()

    def _new_tmp(self):
        parent, name = os.path.split(self.final)
        self.tmp = os.path.join(parent, ".%s.mrsparse-incomplete-%s" % (name, uuid.uuid4().hex[:8]))

    def note(self):
        """Look at ``--output-dir`` as the run starts: what the run may
        replace.  Raises :class:`OutputConflict` for what it may not (a file;
        a non-empty directory without ``overwrite``; a dangling link)."""
        if os.path.islink(self.final):
            target = os.path.realpath(self.final)
            if not os.path.isdir(target):
                raise OutputConflict(
                    "--output-dir %s is a symbolic link to %s, which is %s: make that "
                    "directory, or give the directory itself" % (
                        self.given, target,
                        "a file" if os.path.exists(target) else "not there"))
            self.final = target  # the output goes where the link points
            self._new_tmp()
        seen = _look(self.final)
        if seen is not None and seen[0] != "dir":
            raise OutputConflict("--output-dir %s is a file, not a directory: give a "
                                 "directory (the job writes part files into it)" % self.given)
        if seen is not None and seen[3] and not self.overwrite:
            names = sorted(e[0] for e in seen[3])
            raise OutputConflict(
                "--output-dir %s is not empty (%d entries, e.g. %s): the job would mix its "
                "part files with what is there. Choose another directory, remove it, or "
                "pass --overwrite-output" % (self.given, len(names), names[0]))
        self.noted = seen
        return seen

    def commit(self):
        """Write ``_SUCCESS`` and move the output into place: one rename (an
        exchange where a directory was there), then the replaced directory
        goes.  Raises :class:`OutputConflict` when ``--output-dir`` is not what
        :meth:`note` saw; this run's output is then kept beside it."""
        import errno
        os.makedirs(self.tmp, exist_ok=True)  # a job with no output lines
        open(os.path.join(self.tmp, "_SUCCESS"), "wb").close()
        now = _look(self.final)
        if now != self.noted:
            self._conflict(now)
        if self.noted is None:
            try:
                rename_noreplace(self.tmp, self.final)
            except FileExistsError:
                self._conflict(_look(self.final))
            return
        if not self.noted[3]:  # an empty directory: a rename replaces it only while empty
            try:
                os.rename(self.tmp, self.final)
            except OSError as e:
                if e.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR,
                                   errno.EISDIR):
                    raise
                self._conflict(_look(self.final))
            return
        _exchange(self.tmp, self.final)  # the old output is now at self.tmp
        if _look(self.tmp) != self.noted:  # changed between the look and the exchange
            _exchange(self.tmp, self.final)
            self._conflict(_look(self.final))
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _conflict(self, now):
        parent, name = os.path.split(self.final)
        kept = os.path.join(parent, "%s.mrsparse-%s" % (name, self.tmp.rsplit("-", 1)[1]))
        os.rename(self.tmp, kept)
        raise OutputConflict(
            "--output-dir %s changed while the job ran (it held %s at the start, %s now: "
            "another run or program wrote there): it is left as it is, and this run's "
            "output is in %s" % (self.given, _describe(self.noted), _describe(now), kept))

    def abort(self):
        """Remove what an unfinished run wrote."""
        shutil.rmtree(self.tmp, ignore_errors=True)


# -- task processes end with their launcher ------------------------------------

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


def tree_bytes(path):
    """Bytes of the files under ``path`` (0 if there is none)."""
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


# -- the output committer on HDFS ------------------------------------------------

class FsOutputCommitter(OutputCommitter):
    """The same rule as :class:`OutputCommitter` for an ``--output-dir`` on a
    Hadoop filesystem (``hdfs://``), through the ``hadoop fs`` commands of
    the runner's filesystem.

    What is compared: the directory's modification time and the listing of
    everything under it (``fs -ls -R``: kinds, sizes, times, paths).  The
    commit is ``fs -mv`` of the job's directory to ``--output-dir`` (after the
    old one moved aside, under ``--overwrite-output``), each an HDFS rename;
    an occupant that appears between the last look and the rename (the shell
    moves a directory *into* one that exists) is found right after it, and
    the job's output is moved back out beside it.

    Parameters
    ----------
    output_dir : str
        The ``--output-dir`` URI.
    overwrite : bool
        Replace a non-empty directory (only at :meth:`commit`).
    fs : mrjob.fs.hadoop.HadoopFilesystem
        The runner's Hadoop filesystem.
    """

    def __init__(self, output_dir, overwrite=False, fs=None):
        self.given = output_dir
        # a plain absolute path is on HDFS, as mrjob's hadoop runner takes it
        self.final = ("hdfs://" + output_dir if output_dir.startswith("/") else
                      output_dir).rstrip("/")
        self.overwrite = overwrite
        self.fs = fs
        self.noted = None
        self._new_tmp()

    def _new_tmp(self):
        parent, sep, name = self.final.rpartition("/")
        self.tmp = "%s%s.%s.mrsparse-incomplete-%s" % (parent, sep, name, uuid.uuid4().hex[:8])

    def _hadoop(self, *args, ok=(0,)):
        import subprocess
        proc = subprocess.run(self.fs.get_hadoop_bin() + ["fs"] + list(args),
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if proc.returncode not in ok:
            raise OSError("hadoop fs %s failed: %s" % (" ".join(args), (
                proc.stderr.strip().splitlines() or ["exit status %d" % proc.returncode])[-1]))
        return proc

    def _look(self, path):
        stat = self._hadoop("-stat", "%F|%Y", path, ok=(0, 1))
        if stat.returncode:
            return None
        kind, _, mtime = stat.stdout.strip().rpartition("|")
        if kind != "directory":
            return ("other", kind, mtime, ())
        # kinds, sizes, times, and paths relative to ``path`` (the same entries
        # compare equal after the directory moved)
        where = urlsplit(path).path.rstrip("/") + "/"
        entries = []
        for line in self._hadoop("-ls", "-R", path).stdout.splitlines():
            fields = line.split(None, 7)
            if len(fields) == 8:
                head, _, rel = fields[7].partition(where)
                entries.append(tuple(fields[:7]) + (rel if _ else head,))
        return ("dir", None, mtime, tuple(sorted(entries)))

    def note(self):
        seen = self._look(self.final)
        if seen is not None and seen[0] != "dir":
            raise OutputConflict("--output-dir %s is a file, not a directory: give a "
                                 "directory (the job writes part files into it)" % self.given)
        if seen is not None and seen[3] and not self.overwrite:
            raise OutputConflict(
                "--output-dir %s is not empty (%d entries, e.g. %s): the job would mix its "
                "part files with what is there. Choose another directory, remove it, or "
                "pass --overwrite-output" % (self.given, len(seen[3]), seen[3][0][-1]))
        self.noted = seen
        return seen

    def commit(self):
        self._hadoop("-mkdir", "-p", self.tmp)  # a job with no output lines
        self._hadoop("-touchz", self.tmp + "/_SUCCESS")
        now = self._look(self.final)
        if now != self.noted:
            self._conflict(now)
        aside = None
        if self.noted is not None:
            aside = self.tmp.replace("-incomplete-", "-replaced-")
            self._hadoop("-mv", self.final, aside)
            if self._look(aside)[3] != self.noted[3]:  # changed just before the move
                self._hadoop("-mv", aside, self.final)
                self._conflict(self._look(self.final))
        self._hadoop("-mv", self.tmp, self.final)
        inside = self.final + "/" + self.tmp.rpartition("/")[2]
        if self._look(inside) is not None:  # final appeared meanwhile: moved into it
            self._hadoop("-mv", inside, self.tmp)
            self._conflict(self._look(self.final), aside)
        if aside:
            self._hadoop("-rm", "-r", "-f", "-skipTrash", aside)

    def _conflict(self, now, aside=None):
        parent, sep, name = self.final.rpartition("/")
        kept = "%s%s%s.mrsparse-%s" % (parent, sep, name, self.tmp.rsplit("-", 1)[1])
        self._hadoop("-mv", self.tmp, kept)
        raise OutputConflict(
            "--output-dir %s changed while the job ran (it held %s at the start, %s now: "
            "another run or program wrote there): it is left as it is, and this run's "
            "output is in %s%s" % (
                self.given, _describe(self.noted), _describe(now), kept,
                "; the output it replaced is in %s" % aside if aside else ""))

    def abort(self):
        try:
            self._hadoop("-rm", "-r", "-f", "-skipTrash", self.tmp)
        except OSError:
            pass
