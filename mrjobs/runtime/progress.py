"""Progress of a job on mrjob's inline and local runners.

Every task of the mrsparse jobs reports its input as it reads it, every few
seconds, as a Hadoop Streaming status line (``reporter:status:mrsparse
running: N lines, B bytes``; see :meth:`mrjobs.job.SparseJob._read_input`).
Hadoop shows those in its task status.  The inline and local runners write
each task's stderr to ``<tmp>/step/NNN/<mapper|reducer>/NNNNN/stderr``;
:class:`ProgressMonitor` reads the last status line of each and logs, every
few seconds while something changes, a line such as::

    step 2 of 3: mappers 2/2 done (20,000 lines, 51.0 MB); reducers 1/2 done, 2 running (1,204 lines, 12.3 MB)
"""
import glob
import os
import re
import threading

__all__ = ["ProgressMonitor", "status_text"]

_STATUS = re.compile(rb"reporter:status:mrsparse (running|done): (\d+) lines, (\d+) bytes")


def status_text(done, lines, nbytes):
    """The status line of a task (parsed back by :class:`ProgressMonitor`)."""
    return "mrsparse %s: %d lines, %d bytes" % ("done" if done else "running", lines, nbytes)


def _last_status(path):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 8192))
            tail = f.read()
    except OSError:
        return None
    found = _STATUS.findall(tail)
    if not found:
        return None
    state, lines, nbytes = found[-1]
    return state == b"done", int(lines), int(nbytes)


def _mb(n):
    return "%.1f MB" % (n / 1e6)


class ProgressMonitor:
    """A thread that logs the progress of a sim runner's (inline, local) tasks
    every ``every`` seconds; does nothing for other runners (Hadoop, Spark,
    EMR log their own progress)."""

    def __init__(self, runner, log, every=5.0):
        self.runner = runner
        self.log = log
        self.every = every
        self._stop = threading.Event()
        self._thread = None
        self._last = None

    def start(self):
        if not hasattr(self.runner, "_step_dir"):
            return
        self._thread = threading.Thread(target=self._run, name="mrsparse-progress",
                                        daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _run(self):
        while not self._stop.wait(self.every):
            try:
                line = self.summary()
            except Exception:  # progress must never break a job
                continue
            if line and line != self._last:
                self._last = line
                self.log.info(line)

    def summary(self):
        """One line on the step that runs now, or None."""
        tmp = self.runner._get_local_tmp_dir()
        steps = sorted(glob.glob(os.path.join(tmp, "step", "[0-9][0-9][0-9]")))
        if not steps:
            return None
        step = steps[-1]
        parts = []
        for task_type in ("mapper", "reducer"):
            tasks = sorted(glob.glob(os.path.join(step, task_type, "[0-9]*")))
            if not tasks:
                continue
            states = [_last_status(os.path.join(t, "stderr")) for t in tasks]
            if not any(states):
                continue  # not started, or mrjob's identity mapper (no task of ours)
            done = sum(1 for s in states if s and s[0])
            running = sum(1 for s in states if s and not s[0])
            lines = sum(s[1] for s in states if s)
            nbytes = sum(s[2] for s in states if s)
            text = "%ss %d/%d done" % (task_type, done, len(tasks))
            if running:
                text += ", %d running" % running
            parts.append("%s (%s lines, %s)" % (text, format(lines, ","), _mb(nbytes)))
        if not parts:
            return None
        return "step %d of %d: %s" % (int(os.path.basename(step)) + 1,
                                      self.runner._num_steps(), "; ".join(parts))
