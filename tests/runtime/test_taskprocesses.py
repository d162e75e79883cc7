"""The local runner's task processes (:mod:`mrjobs.runtime.taskprocesses`):
a task never outlives a run that stops, however the start and the stop
interleave."""
import subprocess
import sys

import pytest
from mrjob.local import _TaskFailedException

from mrjobs.runtime.taskprocesses import TaskProcesses

TASK = dict(task_type="mapper", step_num=0, task_num=0, num_steps=1)
#: a task that would run for a minute if nothing ended it (and then succeed)
SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]


class StopsWhileStarting:
    """A forker whose task starts while the run stops: ``stop()`` comes
    between the process's start and its being noted as running (the order a
    signal on the main thread can give a task thread)."""

    def __init__(self, tasks):
        self.tasks, self.started = tasks, []

    def start(self, args, stdin, stdout, stderr, cwd, env):
        proc = subprocess.Popen(args, stdin=stdin, stdout=stdout, stderr=stderr, cwd=cwd)
        self.started.append(proc)
        self.tasks.stop()
        return proc


def test_a_task_started_while_the_run_stops_is_ended(tmp_path):
    tasks = TaskProcesses()
    tasks.forker = StopsWhileStarting(tasks)
    with open(tmp_path / "o", "wb") as o, open(tmp_path / "e", "wb") as e:
        with pytest.raises(_TaskFailedException):
            tasks.invoke(TASK, SLEEPER, subprocess.DEVNULL, o, e, str(tmp_path), None)
    (proc,) = tasks.forker.started
    assert proc.poll() is not None  # (ended, not left sleeping)
    assert tasks.forked == 1


def test_no_task_starts_once_the_run_stops(tmp_path):
    tasks = TaskProcesses()
    tasks.stop()
    with open(tmp_path / "o", "wb") as o, open(tmp_path / "e", "wb") as e:
        with pytest.raises(_TaskFailedException, match="the run is stopping"):
            tasks.invoke(TASK, SLEEPER, subprocess.DEVNULL, o, e, str(tmp_path), None)
    assert tasks.forked == tasks.fresh == 0
