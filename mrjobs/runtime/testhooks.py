"""Test hooks: faults injected into task attempts, for the tests that run the
jobs on a real HDFS + YARN cluster (``tests/engines/test_cluster.py``).

Inert unless one of the variables below is set in a task's environment (the
tests pass them with mrjob's ``--cmdenv``; nothing sets them otherwise).
They act on mapper and reducer processes only (a combiner runs inside its map
attempt, under the same attempt id), and pick attempts by their id, as
Hadoop sets it (``mapreduce.task.attempt.id``, e.g.
``attempt_1764650000000_0001_r_000000_0``: the reducer of task 0, first
attempt), never by input.

MRSPARSE_TEST_FAIL_ATTEMPT=REGEX
    An attempt whose id matches (``re.search``) exits with status 1 as its
    process ends: after its task wrote all its output and counters, which
    Hadoop must then throw away.
MRSPARSE_TEST_HOLD_ATTEMPT=start:REGEX or exit:REGEX
    An attempt whose id matches waits, at its start (before it reads any
    input: Hadoop's progress for it stays below 100%) or as its process ends
    (after all its output and counters are written), until the file
    ``$MRSPARSE_TEST_DIR/release`` exists, or for at most
    MRSPARSE_TEST_HOLD_SECONDS (default 900).  A test kills it meanwhile,
    or stops its NodeManager, or lets speculative execution overtake it.
MRSPARSE_TEST_DIR=DIR
    Where the hooks say what they did, one file per event, named after the
    attempt: ``ATTEMPT.held`` (holding the process id; written when the hold
    begins), ``ATTEMPT.released`` (the hold ended), ``ATTEMPT.failed``.
"""
import atexit
import os
import re
import sys
import time

from mrjob.compat import jobconf_from_env

FAIL = "MRSPARSE_TEST_FAIL_ATTEMPT"
HOLD = "MRSPARSE_TEST_HOLD_ATTEMPT"
DIR = "MRSPARSE_TEST_DIR"
HOLD_SECONDS = "MRSPARSE_TEST_HOLD_SECONDS"

__all__ = ["task_hooks"]


def task_hooks(task):
    """Apply the test hooks to this task process (``task``: "mapper",
    "combiner" or "reducer"); does nothing unless a variable above is set."""
    fail, hold = os.environ.get(FAIL), os.environ.get(HOLD)
    if not (fail or hold) or task == "combiner":
        return
    attempt = jobconf_from_env("mapreduce.task.attempt.id", "")
    when, _, pattern = (hold or "").partition(":")
    if when not in ("", "start", "exit"):
        raise ValueError("%s must be start:REGEX or exit:REGEX, not %r" % (HOLD, hold))
    held = bool(pattern) and re.search(pattern, attempt) is not None
    failing = bool(fail) and re.search(fail, attempt) is not None
    if held and when == "start":
        _hold(attempt)
    if (held and when == "exit") or failing:
        atexit.register(_at_exit, attempt, held and when == "exit", failing)


def _at_exit(attempt, hold, fail):
    # what the task wrote must reach Hadoop before the hold or the failure
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    if hold:
        _hold(attempt)
    if fail:
        _note(attempt, "failed")
        sys.stderr.write("mrsparse: test hook %s: attempt %s fails on purpose\n"
                         % (FAIL, attempt))
        sys.stderr.flush()
        os._exit(1)


def _hold(attempt):
    directory = os.environ.get(DIR, "")
    release = os.path.join(directory, "release") if directory else None
    deadline = time.monotonic() + float(os.environ.get(HOLD_SECONDS) or 900)
    _note(attempt, "held", str(os.getpid()))
    while time.monotonic() < deadline and not (release and os.path.exists(release)):
        time.sleep(0.2)
    _note(attempt, "released")


def _note(attempt, event, text=""):
    directory = os.environ.get(DIR)
    if not directory:
        return
    path = os.path.join(directory, "%s.%s" % (attempt, event))
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)   # a reader never sees it half-written
