"""Pipes, stdin and devices as input: read once into files, or refused.

Pipes among the inputs (``<(zcat x.gz)``, a named FIFO, stdin) are read once,
before the job starts, into files of a temporary directory that the run
removes, as mrjob does with stdin: every size-dependent decision (--blocks,
the local runner's splits) then sees a file, and the tasks read it.  A path
that is neither a file, a directory nor a pipe (``/dev/zero``, a terminal, a
disk) is refused before the job starts: reading it could never end.
``/dev/null`` is read as an empty file.
"""
import logging
import os
import re
import shutil
import tempfile

from mrjobs.runtime.failures import JobError
from mrjobs.runtime.paths import (STDIN, InputPathError, input_kind, local_path, refuse_device,
                                  stdin_fd)

__all__ = ["InputStreams"]

log = logging.getLogger(__name__)


class InputStreams:
    """The files a run's streams were read into (in a temporary directory
    under ``tmp_dir``, made on the first stream), removed by :meth:`remove`."""

    def __init__(self, tmp_dir=None):
        self.tmp_dir = tmp_dir
        self.dir = None
        self.files = {}

    def read_inputs(self, options, stdin):
        """Replace the streams among ``options.args`` (``-`` for stdin, where
        ``stdin`` is None: mrjob's sandboxed stdin is read by mrjob) by files."""
        args = list(options.args) or ["-"]
        if "-" in args and stdin is None:
            what = "stdin" if options.args else "stdin (no input path was given)"
            args = [self.read(STDIN, what) if p == "-" else p for p in args]
        options.args = [p if p == "-" or kind(p, "input path") != "stream"
                        else self.read(p, "the input %s" % p) for p in args]

    def read(self, path, what):
        """The path of a file holding all that the stream ``path`` gives (read
        once: a stream named twice is the same file)."""
        try:
            st = os.fstat(stdin_fd()) if path is STDIN else os.stat(local_path(path))
        except OSError as e:
            raise JobError("%s cannot be read (%s): give INPUT paths" % (
                what, getattr(e, "strerror", None) or e)) from None
        if path is STDIN:
            try:
                refuse_device(st, what, os.isatty(stdin_fd()), socket=True)
            except InputPathError as e:
                raise JobError(str(e)) from None
        key = (st.st_dev, st.st_ino)
        if key in self.files:
            return self.files[key]
        if not self.dir:
            self.dir = tempfile.mkdtemp(prefix="mrsparse-pipes-", dir=self.tmp_dir)
        name = "stdin" if path is STDIN else re.sub(r"[^\w.-]+", "-", path.strip("/"))
        dest = os.path.join(self.dir, "%d-%s" % (len(self.files), name))
        log.info("reading %s to its end into %s", what, dest)
        try:
            with (open(stdin_fd(), "rb", closefd=False) if path is STDIN
                  else open(local_path(path), "rb")) as src, open(dest, "wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)
        except OSError as e:
            raise JobError("reading %s into %s: %s" % (what, dest, e.strerror or e)) from None
        self.files[key] = dest
        return dest

    def remove(self):
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
            self.files = {}


def kind(path, option):
    """:func:`mrjobs.runtime.paths.input_kind` ("stream" or "files"), a refused
    path as a :class:`~mrjobs.runtime.failures.JobError`."""
    try:
        return input_kind(path, option)
    except InputPathError as e:
        raise JobError(str(e)) from None
