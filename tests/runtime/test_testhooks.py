"""The test hooks of mrjobs/runtime/testhooks.py, in task-like processes of their own
(the cluster tests in tests/engines/test_cluster.py use them on real attempts)."""
import os
import subprocess
import sys

import pytest

from mrjobs.runtime.testhooks import task_hooks

ATTEMPT = "attempt_1764650000000_0001_r_000002_0"

#: a task process: the hooks, then some output, then a normal end
TASK = ("import sys; from mrjobs.runtime.testhooks import task_hooks; task_hooks(sys.argv[1]); "
        "sys.stdout.write('all of the output\\n')")


def run_task(tmp_path, task="reducer", attempt=ATTEMPT, **variables):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MRSPARSE_TEST_")}
    env.update(variables, mapreduce_task_attempt_id=attempt, MRSPARSE_TEST_DIR=str(tmp_path))
    return subprocess.run([sys.executable, "-c", TASK, task], env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def notes(tmp_path):
    return sorted(n for n in os.listdir(tmp_path) if n != "release")


def test_inert_without_the_variables(tmp_path):
    proc = run_task(tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "all of the output\n", "")
    assert notes(tmp_path) == []


def test_a_matching_attempt_fails_after_its_output(tmp_path):
    proc = run_task(tmp_path, MRSPARSE_TEST_FAIL_ATTEMPT="_r_[0-9]+_0$")
    assert proc.returncode == 1
    assert proc.stdout == "all of the output\n"          # written, then thrown away by Hadoop
    assert "fails on purpose" in proc.stderr
    assert notes(tmp_path) == [ATTEMPT + ".failed"]


@pytest.mark.parametrize("task,attempt", [
    ("reducer", ATTEMPT[:-1] + "1"),      # a retry
    ("mapper", ATTEMPT.replace("_r_", "_m_")),
    ("combiner", ATTEMPT),                # runs inside its map attempt, under its id
])
@pytest.mark.slow
def test_other_attempts_and_combiners_are_left_alone(tmp_path, task, attempt):
    proc = run_task(tmp_path, task, attempt, MRSPARSE_TEST_FAIL_ATTEMPT="_r_[0-9]+_0$",
                    MRSPARSE_TEST_HOLD_ATTEMPT="start:_r_[0-9]+_0$")
    assert (proc.returncode, proc.stdout) == (0, "all of the output\n")
    assert notes(tmp_path) == []


@pytest.mark.parametrize("when", ["start", "exit"])
def test_a_held_attempt_goes_on_once_released(tmp_path, when):
    (tmp_path / "release").write_text("")
    proc = run_task(tmp_path, MRSPARSE_TEST_HOLD_ATTEMPT=when + ":_r_000002_0$")
    assert (proc.returncode, proc.stdout) == (0, "all of the output\n")
    assert notes(tmp_path) == [ATTEMPT + ".held", ATTEMPT + ".released"]
    pid = (tmp_path / (ATTEMPT + ".held")).read_text()
    assert pid.isdigit()


def test_a_bad_hold_is_refused(monkeypatch):
    monkeypatch.setenv("MRSPARSE_TEST_HOLD_ATTEMPT", "later:_r_")
    monkeypatch.setenv("mapreduce_task_attempt_id", ATTEMPT)
    with pytest.raises(ValueError, match="start:REGEX or exit:REGEX"):
        task_hooks("reducer")
