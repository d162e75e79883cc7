"""Progress of a job on mrjob's inline and local runners.

Every task of the mrsparse jobs tells its progress, every few seconds, as a
Hadoop Streaming status line (:mod:`mrjobs.runtime.taskstatus`): the lines
and bytes it has read and, in the blocks strategy's pair step, the products
(multiply-adds) it has done and planned.  Hadoop shows those in its task
status.  The inline and local runners write each task's stderr to
``<tmp>/step/NNN/<mapper|reducer>/NNNNN/stderr``; :class:`ProgressMonitor`
reads the last status line of each, and the files the runner writes between
the tasks, and says what the running step does (the mappers, mrjob's sort
of their output, its split among the reducers, the reducers), e.g.::

    step 1 of 2: mappers 2/2 done (50,000 lines, 127.9 MB); reducers 0/4 done, 2 running (20 lines, 103.2 of 186.1 MB); products 4.12G of ~11.5G (35%), ETA 21 s

as a log line every ``every`` seconds when it changed (and at least every 10
seconds while something runs) or, when the log goes to a terminal, as a
``tqdm`` bar.

The products' total: each block pair's products are planned exactly before
it multiplies (Σ_f dfA_f·dfB_f over the pair's kept features: O(nnz), against
the product's Σ df²), and a task tells the sum over the pairs it has begun
with their *share* of the step (a diagonal pair is expected to hold 1/B² of
the products, another pair 2/B², the blocks being a uniform hash partition of
the vectors).  The total shown is the planned products over the shares begun,
marked ``~`` while it is so estimated; once every pair has begun it is exact:
the planner's Σ_f df_f(df_f-1)/2 over the kept features.  (Counting the
total in an earlier step would take each feature's global df, a shuffle of
its own; the reducers' input bytes grow with a pair's size, not with its
products.)  The ETA is the products left at the rate so far: the step's
products done over the time since its reducers' input was written (their
start, with what each pair costs besides its products); "ETA unknown" until
that rate has :data:`ETA_AFTER` seconds and :data:`ETA_SHARE` of the
products behind it (the tasks' start weighs on it less and less).
"""
import glob
import os
import threading
import time
from typing import NamedTuple, Optional

from mrjobs.runtime.taskstatus import parse_status

__all__ = ["ProgressMonitor", "View", "products_total", "ETA_AFTER", "ETA_SHARE", "HEARTBEAT"]

#: seconds, and share of the products done, behind a rate before an ETA is given
ETA_AFTER, ETA_SHARE = 10.0, 0.05
#: seconds after which the same line is logged again while something runs
HEARTBEAT = 10.0


class _Task(NamedTuple):
    started: bool  # its stderr is there (a process of ours, or mrjob's, runs it)
    status: Optional[tuple]  # parse_status's, or None
    input_bytes: int
    input_time: float  # when its input was written (0.0: not known)


class View(NamedTuple):
    """What one look at the running step sees.

    ``key`` names the phase (step number, phase), ``text`` says what runs,
    ``done`` of ``total`` (None: not known) counts ``unit`` (``"B"`` for
    bytes read, ``"products"``), ``running`` is True while a task, the sort
    or the split is under way, ``extra`` is what the log line adds (the
    products and ETA), ``label`` the bar's shorter text (else ``text``)."""

    key: tuple
    text: str
    done: int = 0
    total: Optional[int] = None
    unit: str = "B"
    running: bool = False
    extra: str = ""
    label: str = ""

    @property
    def line(self):
        return self.text + ("; " + self.extra if self.extra else "")


def _tail(path, nbytes=8192):
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - nbytes))
            return f.read()
    except OSError:
        return None


def _size(path):
    try:
        return os.path.getsize(path)  # (through a link: the file it names)
    except OSError:
        return 0


def _mtime(path):
    try:
        return os.path.getmtime(path)
    except OSError:
        return 0.0


def _tasks(step, task_type):
    out = []
    for t in sorted(glob.glob(os.path.join(step, task_type, "[0-9]*"))):
        tail = _tail(os.path.join(t, "stderr"))
        out.append(_Task(tail is not None, None if tail is None else parse_status(tail),
                         _size(os.path.join(t, "input")), _mtime(os.path.join(t, "input"))))
    return out


def _mb(n):
    return "%.1f MB" % (n / 1e6)


def _of_mb(n, total):
    return "%.1f of %.1f MB" % (n / 1e6, total / 1e6) if total else _mb(n)


def _count(n):
    """A count for people, to three digits: 812, 81.2k, 1.21G."""
    for div, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= div:
            return ("%.3g" % (n / div)) + suffix
    return "%d" % n


def _duration(seconds):
    """5 s, 3m10s, 1h02m."""
    s = int(round(seconds))
    if s < 60:
        return "%d s" % s
    if s < 3600:
        return "%dm%02ds" % (s // 60, s % 60)
    return "%dh%02dm" % (s // 3600, s % 3600 // 60)


def _tasks_text(task_type, tasks):
    """``mappers 1/2 done, 1 running (lines, bytes)`` and the same without
    what is in brackets, or None if no task of ours has started (mrjob's
    identity mapper has no process)."""
    started = [t for t in tasks if t.started]
    if not started:
        return None
    states = [t.status for t in started if t.status]
    done = sum(1 for s in states if s[0])
    lines = sum(s[1] for s in states)
    nbytes = sum(s[2] for s in states)
    text = "%ss %d/%d done" % (task_type, done, len(tasks))
    if len(started) > done:
        text += ", %d running" % (len(started) - done)
    return "%s (%s lines, %s)" % (text, format(lines, ","), _of_mb(
        nbytes, sum(t.input_bytes for t in tasks))), text


def products_total(works, all_done=False):
    """``(done, total, exact)`` of the products from the tasks' ``work``
    (:func:`~mrjobs.runtime.taskstatus.status_text`'s), ``total`` None when
    no share has begun; exact once every share has begun (or every task
    ended).

    >>> products_total([(10, 40, 1, 4), (0, 60, 3, 4)])
    (10, 100, True)
    >>> products_total([(10, 40, 1, 4)])
    (10, 160, False)
    """
    done = sum(w[0] for w in works)
    planned = sum(w[1] for w in works)
    begun = sum(w[2] for w in works)
    shares = max(w[3] for w in works)
    if all_done or begun >= shares:
        return done, planned, True
    if not begun:
        return done, None, False
    return done, int(round(planned * shares / begun)), False


class ProgressMonitor:
    """A thread that tells the progress of a sim runner's (inline, local)
    steps every ``every`` seconds, as log lines or, when ``stream`` (where
    the log goes) is a terminal, as a tqdm bar; does nothing for other
    runners (Hadoop, Spark, EMR log their own progress)."""

    def __init__(self, runner, log, every=5.0, stream=None):
        self.runner = runner
        self.log = log
        self.every = every
        self.stream = stream
        self._stop = threading.Event()
        self._thread = None
        self._last = None
        self._logged_at = 0.0
        self._seen = {}  # phase key -> time first seen
        #: the :class:`~mrjobs.runtime.progressbar.Bar` once started on a terminal
        self.bar = None

    def start(self):
        if not hasattr(self.runner, "_step_dir"):
            return
        if _isatty(self.stream):
            try:
                from mrjobs.runtime.progressbar import Bar  # (tqdm: on a terminal only)
                self.bar = Bar(self.stream)
            except Exception:  # (tqdm missing or broken: the log lines)
                self.bar = None
        self._thread = threading.Thread(target=self._run, name="mrsparse-progress",
                                        daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self.bar is not None:
            try:
                self.bar.close()
            except Exception:  # progress must never break a job
                pass

    def _run(self):
        wait = min(self.every, 1.0) if self.bar is not None else self.every
        while not self._stop.wait(wait):
            try:
                self.poll()
            except Exception:  # progress must never break a job
                continue

    def poll(self, now=None):
        """One look: the bar updated, or a line logged if it changed (or,
        while something runs, :data:`HEARTBEAT` seconds have passed)."""
        now = time.time() if now is None else now
        view = self.view(now)
        if self.bar is not None:
            self.bar.show(view)
            return
        if view is None:
            return
        if view.line != self._last or (view.running and now - self._logged_at >= HEARTBEAT):
            self._last, self._logged_at = view.line, now
            self.log.info(view.line)

    def summary(self):
        """One line on the step that runs now, or None."""
        view = self.view()
        return None if view is None else view.line

    def view(self, now=None, step=None):
        """A :class:`View` of the step that runs now (or of step number
        ``step``, from 0), or None; ``now`` as ``time.time()``, the clock of
        the files' times."""
        now = time.time() if now is None else now
        tmp = self.runner._get_local_tmp_dir()
        steps = sorted(glob.glob(os.path.join(tmp, "step", "[0-9][0-9][0-9]")))
        if step is not None:
            steps = [s for s in steps if int(os.path.basename(s)) == step]
        if not steps:
            return None
        step = steps[-1]
        head = "step %d of %d: " % (int(os.path.basename(step)) + 1, self.runner._num_steps())
        mappers, reducers = _tasks(step, "mapper"), _tasks(step, "reducer")
        map_text = _tasks_text("mapper", mappers)
        if os.path.isdir(os.path.join(step, "reducer")):
            return self._reduce_view(step, head, map_text, mappers, reducers, now)
        key = (step, "map")
        if map_text is None:
            if not mappers:
                return None
            return View(key, head + "preparing the mappers' input (%s)" % _mb(
                sum(t.input_bytes for t in mappers)), running=True)
        return self._tasks_view(key, head + map_text[0], mappers, head + map_text[1])

    def _tasks_view(self, key, text, tasks, label):
        states = [t.status for t in tasks if t.status]
        return View(key, text, sum(s[2] for s in states), sum(t.input_bytes for t in tasks),
                    running=sum(1 for s in states if s[0]) < len(tasks), label=label)

    def _reduce_view(self, step, head, map_text, mappers, reducers, now):
        before = head + (map_text[0] + "; " if map_text else "")
        sorted_bytes = _size(os.path.join(step, "reducer", "sorted-input"))
        if not reducers:
            key = (step, "sort")
            return View(key, before + "sorting the mappers' output (%s, %s so far)" % (
                _mb(sum(_size(p) for p in glob.glob(os.path.join(step, "mapper", "[0-9]*",
                                                                 "output")))),
                _duration(now - self._seen.setdefault(key, now))), running=True)
        reduce_text = _tasks_text("reducer", reducers)
        if reduce_text is None:
            return View((step, "split"), before + "splitting the sorted input among the "
                        "reducers (%s)" % _of_mb(sum(t.input_bytes for t in reducers),
                                                 sorted_bytes), running=True)
        works = [t.status[3] for t in reducers if t.status and t.status[3]]
        if not works:
            return self._tasks_view((step, "reduce"), before + reduce_text[0], reducers,
                                    head + reduce_text[1])
        return self._products_view((step, "products"), (before + reduce_text[0],
                                                        head + reduce_text[1]), reducers,
                                   works, now)

    def _products_view(self, key, texts, reducers, works, now):
        all_done = all(t.status and t.status[0] for t in reducers)
        done, total, exact = products_total(works, all_done)
        t0 = max(t.input_time for t in reducers)  # (the split's end: the reducers' start)
        extra = "products %s" % _count(done)
        if total is not None:
            extra += " of %s%s (%d%%)" % ("" if exact else "~", _count(total),
                                          100 * done // max(total, 1))
        if all_done:
            pass
        elif (total is not None and t0 and now - t0 >= ETA_AFTER
              and done >= ETA_SHARE * total > 0):
            rate = done / (now - t0)
            extra += ", ETA %s" % _duration(max(total - done, 0) / rate)
        else:
            extra += ", ETA unknown"
        return View(key, texts[0], done, total, "products", not all_done, extra, texts[1])


def _isatty(stream):
    try:
        return stream is not None and bool(stream.isatty())
    except Exception:  # (a closed or odd stream: no bar)
        return False
