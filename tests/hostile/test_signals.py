"""SIGTERM and SIGHUP to a run's whole process group, as ``timeout``, cron,
systemd, a container runtime or a closed terminal send them, at every
moment of a run: the run ends with exit status 128 + the signal and one line,
its task processes end and its temporary files go -- it never hangs.

The moment is made certain, never waited for by the clock: a task held by
the test hooks (mrjobs/runtime/testhooks.py), a ``--sort-bin`` that waits,
the copy to stdout blocked by a pipe nobody reads.  The hang this guards
against: mrjob's process pool, whose idle worker, ended by the signal while
it held the pool's queue lock, left ``Pool.terminate()`` waiting forever
(6 runs in 8 under ``timeout -s TERM 1``).
"""
import glob
import os
import re
import signal
import stat
import sys

import pytest

from mrjobs.testing import write_lines
from tests.jobs_helpers import corpus
from tests.runtime.test_launch_faults import descendants, running, signal_group, wait_for
from tests.runtime.test_output_protocol import held, hold_dir, launcher

pytestmark = [pytest.mark.versions,
              pytest.mark.skipif(not sys.platform.startswith("linux"),
                                 reason="reads the process tree from /proc")]

#: 3 blocks: 6 block pairs, keys enough for two reduce splits
RUN = ["corpus.jsonl", "--measure", "cosine", "--top-k", "3", "--blocks", "3",
       "--jobconf", "mapreduce.job.maps=2", "--jobconf", "mapreduce.job.reduces=2"]
SIGNALS = [signal.SIGTERM, signal.SIGHUP]
#: seconds after which a signalled run counts as hung
HUNG = 120

SORT_BIN = """#!/bin/sh
touch "%(hold)s/sorting"
while [ ! -e "%(hold)s/release" ]; do sleep 0.05; done
exec sort "$@"
"""


def attempts(pid):
    """``{attempt: pid}`` of the task processes below ``pid``: each known by
    its stderr, mrjob's ``step/NNN/TYPE/NNNNN/stderr`` (a forked task's
    ``/proc/PID/environ`` is its fork server's), named as its attempt id ends."""
    found = {}
    for p in descendants(pid):
        try:
            err = os.readlink("/proc/%d/fd/2" % p)
        except OSError:
            continue
        task = re.search(r"/step/(\d+)/(mapper|combiner|reducer)/(\d+)/stderr$", err)
        if task and running(p):
            step, kind, num = task.groups()
            found["task_%s_%04d%d_0" % (kind, int(step), int(num))] = p
    return found


def task_done(tmp_path, proc, task_type, task_num):
    """Whether task ``task_num`` of the first step has run and ended: its
    output was written and no process of it is left."""
    suffix = "_%s_0000%d_0" % (task_type, task_num)
    run = tmp_path / "tmp" / "*"
    outputs = (glob.glob(str(run / "step" / "000" / task_type / ("%05d" % task_num) / "output"))
               + glob.glob(str(run / "**" / ("part-%05d" % task_num)), recursive=True))
    return (any(os.path.getsize(o) for o in outputs)
            and not any(a.endswith(suffix) for a in attempts(proc.pid)))


def start(tmp_path, runner, moment, extra=()):
    """The launcher, started in a session of its own, and a function true
    once it is at ``moment``."""
    write_lines(tmp_path / "corpus.jsonl", corpus(n=300, seed=11))
    hd = hold_dir(tmp_path)
    args = list(RUN) + ["-r", runner] + list(extra)
    hold = None
    if moment == "maps":
        hold = "start:_mapper_00000_"
        at = lambda: held(hd)  # noqa: E731
    elif moment == "between maps":
        hold = "start:_mapper_00001_"
        at = lambda: held(hd) and task_done(tmp_path, proc, "mapper", 0)  # noqa: E731
    elif moment == "reducers":
        hold = "start:_reducer_00000_"
        at = lambda: held(hd)  # noqa: E731
    elif moment == "between reducers":
        hold = "start:_reducer_00001_"
        at = lambda: held(hd) and task_done(tmp_path, proc, "reducer", 0)  # noqa: E731
    elif moment == "sort":
        sort_bin = tmp_path / "slow-sort"
        sort_bin.write_text(SORT_BIN % {"hold": hd})
        sort_bin.chmod(sort_bin.stat().st_mode | stat.S_IXUSR)
        args += ["--sort-bin", str(sort_bin)]
        at = lambda: (hd / "sorting").exists()  # noqa: E731
    else:
        assert moment == "copy"
        args += ["--top-k", "200"]  # ~3 MB of output: more than a pipe holds
        at = lambda: proc.stdout.read(1) != ""  # noqa: E731
    proc = launcher(tmp_path, args + ["-q"], hold=hold, hold_dir=hd, start_new_session=True)
    return proc, at


def assert_stopped(tmp_path, proc, stderr, sig, below, removed=None):
    assert proc.returncode == 128 + sig, stderr
    assert stderr.count("\n") == 1, stderr
    assert stderr.startswith("mrsparse: stopped by %s; removed " % signal.Signals(sig).name), \
        stderr
    if removed:
        assert removed(int(stderr.split("; removed ")[1].split(" MB")[0])), stderr
    wait_for(lambda: not any(running(p) for p in below), "the task processes to end")
    assert os.listdir(tmp_path / "tmp") == []


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: signal.Signals(s).name)
@pytest.mark.parametrize("runner,moment", [
    ("local", "maps"), ("local", "between maps"), ("local", "sort"), ("local", "reducers"),
    ("local", "between reducers"), ("local", "copy"), ("inline", "reducers"),
    ("inline", "copy")])
@pytest.mark.slow
@pytest.mark.smoke
def test_a_signal_to_the_process_group_ends_the_run(tmp_path, runner, moment, sig):
    proc, at = start(tmp_path, runner, moment)
    stderr, below = signal_group(proc, at, "the run to reach the " + moment, sig, bound=HUNG)
    assert_stopped(tmp_path, proc, stderr, sig, below)


@pytest.mark.slow
def test_a_signal_after_a_first_run_counts_the_cleanup_of_both(tmp_path):
    """TERM during the copy of a prefix run, whose df run came first: the
    job's own run's staged output (~3 MB) is counted as removed, not only
    the df run's temporary files."""
    write_lines(tmp_path / "corpus.jsonl", corpus(n=300, seed=11))
    args = ["corpus.jsonl", "--measure", "cosine", "--threshold", "0", "--top-k", "200",
            "--strategy", "prefix", "-r", "local", "-q"]
    proc = launcher(tmp_path, args, hold_dir=hold_dir(tmp_path), start_new_session=True)
    stderr, below = signal_group(proc, lambda: proc.stdout.read(1) != "",
                                 "the run to reach the copy", signal.SIGTERM, bound=HUNG)
    assert_stopped(tmp_path, proc, stderr, signal.SIGTERM, below, removed=lambda mb: mb >= 2)


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.slow
def test_a_second_signal_neither_cuts_the_cleanup_short_nor_its_count(tmp_path, runner):
    """TERM, then HUP during the copy (a supervisor that repeats itself): the
    first ends the run, the second changes nothing -- the staged output
    (~3 MB) is removed and counted, not "removed 0 MB"."""
    proc, at = start(tmp_path, runner, "copy")
    # (a second TERM may merge with the first: HUP)
    stderr, below = signal_group(proc, at, "the run to reach the copy", signal.SIGTERM,
                                 signal.SIGHUP, bound=HUNG)
    # (both pending at once: the one the kernel hands over first ends the run)
    first = signal.SIGHUP if proc.returncode == 128 + signal.SIGHUP else signal.SIGTERM
    assert_stopped(tmp_path, proc, stderr, first, below, removed=lambda mb: mb >= 2)
