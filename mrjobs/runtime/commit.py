"""How a job's output is put in place: only a job that succeeded moves it.

* :class:`OutputCommitter` -- on the inline and local runners the last step
  writes to a hidden directory beside ``--output-dir``; only a job that
  succeeded moves it into place (one atomic rename), with an empty
  ``_SUCCESS`` file as Hadoop's committer writes, and only onto what was
  there when the run started.  A failed or interrupted run leaves
  ``--output-dir`` as it was; a directory that appeared or changed there
  meanwhile makes the run fail, and both outputs are kept.
* :class:`FsOutputCommitter` -- the same on Hadoop's default filesystem.

Both look at the output location before any work (:meth:`OutputCommitter.note`):
a place the commit could not rename into (a mount point, a read-only or
unwritable parent) or a filesystem Hadoop cannot reach is refused then, not
after the whole run.
"""
import os
import shutil
import uuid
from urllib.parse import urlsplit

__all__ = ["OutputCommitter", "FsOutputCommitter", "OutputConflict", "OutputLocationError",
           "rename_noreplace"]

from mrjobs.runtime.paths import local_path

class OutputConflict(OSError):
    """``--output-dir`` holds something the run was not allowed to replace."""


class OutputLocationError(OutputConflict):
    """``--output-dir`` is where the commit cannot put the output: a mount
    point, an unwritable parent, a filesystem that cannot be reached."""


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


def _make_and_rename(probe):
    """Make the directory ``probe``, rename it, remove it: what the commit
    will need of its parent.  Raises the :class:`OSError` of the first step
    that failed."""
    os.mkdir(probe)
    try:
        os.rename(probe, probe + "-renamed")
        probe += "-renamed"
    finally:
        os.rmdir(probe)


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
        path = os.path.abspath(local_path(output_dir)).rstrip(os.sep) or os.sep
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
        self.check_location()
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

    def check_location(self):
        """Refuse what the commit's rename would fail on, before any work:
        ``--output-dir`` on a mount point, or a parent in which this process
        cannot make and rename a directory (a read-only filesystem, no
        permission) -- tried for real, as the run would do it.  Raises
        :class:`OutputLocationError`."""
        if os.path.ismount(self.final):
            raise OutputLocationError(
                "--output-dir %s is a mount point, which the job cannot replace (it "
                "writes its output beside it and renames it into place at the end): "
                "give a directory inside it, e.g. %s" % (
                    self.given, os.path.join(self.given, "output")))
        where = os.path.dirname(self.final)
        while not os.path.lexists(where):  # the run makes the missing parents
            where = os.path.dirname(where)
        probe = os.path.join(where, ".%s.mrsparse-probe-%s" % (
            os.path.basename(self.final), uuid.uuid4().hex[:8]))
        try:
            _make_and_rename(probe)
        except OSError as e:
            raise OutputLocationError(
                "--output-dir %s cannot be written: making and renaming a directory in "
                "%s failed (%s), and the job writes its output there and renames it into "
                "place at the end: choose a directory you can write to" % (
                    self.given, where, e.strerror or e)) from None

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

    def local_mode_path(self):
        """The local directory a plain ``--output-dir`` path (no scheme)
        means where Hadoop runs in local mode, its default filesystem
        ``file:///``: Hadoop itself takes the path there, as mrjob takes plain
        input paths -- not on an HDFS that is not there (mrjob's rewrite).
        None for a URI, or on a cluster."""
        if urlsplit(self.given).scheme:
            return None
        try:  # the first column of `fs -df /`: the default filesystem's URI
            rows = [r.split() for r in self._hadoop("-df", "/").stdout.splitlines()]
        except OSError:
            return None  # unknown: the look at the path says what is wrong
        default = rows[1][0] if len(rows) > 1 and rows[1] else ""
        return os.path.abspath(self.given) if default.startswith("file:") else None

    def _look(self, path):
        stat = self._hadoop("-stat", "%F|%Y", path, ok=(0, 1))
        if stat.returncode and "No such file or directory" in stat.stderr:
            return None
        if stat.returncode:  # "nothing there" is not what Hadoop said
            self._unreachable(path, stat.stderr)
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

    def _unreachable(self, path, stderr):
        said = ([l for l in stderr.splitlines() if l.strip() and " WARN " not in l]
                or ["no reason given"])[-1]
        said = said.split("; For more details see")[0].removeprefix("stat: ")
        raise OutputLocationError(
            "--output-dir %s%s is on %s://, which Hadoop cannot reach from here (%s): "
            "start that filesystem or give --output-dir on one Hadoop reaches (a "
            "file:/// URI for a local directory)" % (
                self.given, "" if path.startswith(self.given) else " (%s)" % path,
                urlsplit(path).scheme or "the default filesystem", said))

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
