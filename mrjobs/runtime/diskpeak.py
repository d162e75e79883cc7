"""The peak bytes of a directory tree while something runs in it.

:class:`DiskPeak` is a context manager: a daemon thread walks the tree under
``path`` every ``every`` seconds (with :func:`os.scandir`, symlinks not
followed) and keeps the largest total it has seen, in :attr:`DiskPeak.peak`::

    with DiskPeak(tmp_dir) as disk:
        run_the_job(tmp_dir)
    disk.peak      # bytes

What is counted is each regular file's ``st_size`` (its apparent size), not
``st_blocks * 512`` (what the file system allocated): the apparent size is
what a job writes, the same on every file system, and comparable with the
size of its input files; allocated blocks lag behind the writes on file
systems that allocate late, and are fewer than the bytes for sparse or
compressed files.

The walk is robust to a tree that changes under it: a file or directory that
vanishes between being listed and being looked at counts for nothing, and
``path`` itself may be missing at first (it counts 0 until it appears). A
sample is taken when the context is entered and another when it is left, so
a peak present at either end is never missed; one that comes and goes
between two samples can be, so the peak is a lower bound of the true one,
sharper with a smaller ``every``.
"""
import os
import threading

__all__ = ["DiskPeak", "tree_size"]


def tree_size(path):
    """Total ``st_size`` of the regular files under ``path`` (0 if it is
    missing); entries that vanish during the walk are skipped."""
    total = 0
    stack = [path]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        elif entry.is_file(follow_symlinks=False):
                            total += entry.stat(follow_symlinks=False).st_size
                    except OSError:  # gone between the listing and the look
                        continue
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue
    return total


class DiskPeak:
    """Samples :func:`tree_size` of ``path`` every ``every`` seconds in a
    daemon thread while the context is open.

    Attributes: ``peak`` (largest total seen, bytes), ``samples`` (how many
    walks were made), ``last`` (the total at the last sample).
    """

    def __init__(self, path, every=0.5):
        if every <= 0:
            raise ValueError("every must be positive, not %r" % (every,))
        self.path = path
        self.every = every
        self.peak = 0
        self.last = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = None
        self._lock = threading.Lock()

    def sample(self):
        """Walk the tree once and update :attr:`peak`; returns the total."""
        total = tree_size(self.path)
        with self._lock:
            self.samples += 1
            self.last = total
            self.peak = max(self.peak, total)
        return total

    def _run(self):
        while not self._stop.wait(self.every):
            self.sample()

    def start(self):
        if self._thread is not None:
            raise RuntimeError("DiskPeak already started")
        self.sample()
        self._thread = threading.Thread(target=self._run, name="diskpeak", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        """Stop the thread and take a last sample; returns :attr:`peak`."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
            self.sample()
        return self.peak

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    def __repr__(self):
        return "DiskPeak(%r, peak=%d, samples=%d)" % (self.path, self.peak, self.samples)
