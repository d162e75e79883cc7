"""The peak memory of each kind of process a local run starts, for
``--compare`` and ``--calibrate``.

:class:`ProcessPeaks` is a context manager: a daemon thread looks every
``every`` seconds at the processes descended from this one (Linux's
``/proc``) and keeps, for each kind, the largest ``VmHWM`` seen (the peak
resident set size the kernel keeps for a process over its life, so a
process looked at once, late, still gives its peak).  Kinds: ``sort`` (the
local runner's ``sort`` of a step's map output), ``step N mapper`` and
``step N reducer`` (a task: ``--step-num=N`` is on its command line, counted
from 0, or, forked, its stderr is the task's file), ``launcher`` (``python -m
mrjobs.<job>``), ``other`` (the local runner's fork server and waiters among
them).  A process that starts and ends between two looks is missed; the largest of a run (a block-pair reducer, the sort of the pair
step's input) live for seconds.  Where there is no ``/proc``, nothing is
measured (:attr:`ProcessPeaks.peaks` stays empty).
"""
import os
import re
import threading

__all__ = ["ProcessPeaks", "process_kind"]

_STEP = re.compile(r"^--step-num=(\d+)$")
_TASK_STDERR = re.compile(r"/step/(\d+)/(mapper|combiner|reducer)/\d+/stderr$")


def process_kind(argv, stderr=None):
    """The kind of a process from its arguments, or (a task forked from the
    local runner's server, :mod:`mrjobs.runtime.taskfork`, whose arguments are
    the server's) from the path of its ``stderr``, mrjob's
    ``step/NNN/TYPE/NNNNN/stderr`` (see the module).

    >>> process_kind(["python", "dot_products.py", "--step-num=1", "--reducer"])
    'step 1 reducer'
    >>> process_kind(["python", "-c", "..."], "/tmp/run/step/000/mapper/00001/stderr")
    'step 0 mapper'
    >>> process_kind(["sort", "-t", "\\t", "-k", "1,1", "-s", "a", "b"])
    'sort'
    """
    if argv and os.path.basename(argv[0]) == "sort":
        return "sort"
    step = next((int(m.group(1)) for m in map(_STEP.match, argv) if m), None)
    task = next((a[2:] for a in argv if a in ("--mapper", "--reducer", "--combiner")), None)
    if step is not None and task is not None:
        return "step %d %s" % (step, task)
    forked = _TASK_STDERR.search(stderr or "")
    if forked:
        return "step %d %s" % (int(forked.group(1)), forked.group(2))
    if any(a.startswith("mrjobs.") for a in argv[1:3]):
        return "launcher"  # python -m mrjobs.<job>
    return "other"


def _children():
    """{pid: ppid} of every process, from /proc (empty without it)."""
    out = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1:
            out[int(name)] = int(fields[1])
    return out


def _peak_rss(pid):
    """(VmHWM in bytes, argv, the path of its stderr) of a process, or None
    once it is gone."""
    try:
        with open("/proc/%d/status" % pid, "rb") as f:
            hwm = next((int(l.split()[1]) for l in f if l.startswith(b"VmHWM:")), None)
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            argv = [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
    except (OSError, ValueError, IndexError):
        return None
    try:
        stderr = os.readlink("/proc/%d/fd/2" % pid)
    except OSError:
        stderr = None
    return None if hwm is None else (hwm * 1024, argv, stderr)


class ProcessPeaks:
    """Peak RSS by kind of process of the processes descended from ``root``
    (default: this one), sampled while the context is open.

    Attributes: ``peaks`` ({kind: bytes}).
    """

    def __init__(self, root=None, every=0.25):
        self.root = os.getpid() if root is None else root
        self.every = every
        self.peaks = {}
        self._stop = threading.Event()
        self._thread = None

    def sample(self):
        parents = _children()
        ours, frontier = set(), {self.root}
        while frontier:
            frontier = {p for p, pp in parents.items() if pp in frontier} - ours
            ours |= frontier
        for pid in ours:
            got = _peak_rss(pid)
            if got:
                kind = process_kind(got[1], got[2])
                self.peaks[kind] = max(self.peaks.get(kind, 0), got[0])

    def _run(self):
        while not self._stop.wait(self.every):
            try:
                self.sample()
            except Exception:  # a measurement must never break the run
                continue

    def __enter__(self):
        self._thread = threading.Thread(target=self._run, name="mrsparse-procmem",
                                        daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        return False
