"""The hostile cases of tests/hostile/ on real Hadoop Streaming (local mode)
and Spark: a SIGTERM or SIGHUP to the run's process group while a task
runs, a failed run, a refusal -- each ends in one line and leaves nothing
behind: no Hadoop working files, no local temporary directory, no setup
wrapper's lock in /tmp, no process (mrjob keeps a failed or stopped run's
temporary files by default)."""
import glob
import os
import signal
import subprocess

import pytest

from mrjobs.testing import write_lines
from tests.engines.support import PYTHON, REPO, hadoop_args, spark_args
from tests.jobs_helpers import corpus as jobs_corpus
from tests.runtime.test_launch_faults import descendants, running, signal_group, wait_for

#: the fixtures (streaming_jar, hadoop_tmp, ...)
pytest_plugins = ["tests.engines.fixtures"]
pytestmark = [pytest.mark.engines, pytest.mark.usefixtures("engine_env")]

SAMPLE = os.path.join(REPO, "examples", "sample.jsonl")
ARGS = ["--no-conf", "--measure", "cosine", "--top-k", "3", "-q"]
#: seconds after which a signalled run counts as hung
HUNG = 300


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read()
    except OSError:
        return b""


def locks():
    return set(glob.glob("/tmp/wrapper.lock.*"))


def start(tmp_path, argv, **kw):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))
    return subprocess.Popen([PYTHON, "-m", "mrjobs.dot_products"] + argv, cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def assert_nothing_left(tmp_path, work, before_locks):
    assert os.listdir(tmp_path / "tmp") == []
    assert not work.exists() or [f for _, _, f in os.walk(work) if f] == []
    assert locks() <= before_locks


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
@pytest.mark.smoke
def test_a_signal_to_the_process_group_ends_a_hadoop_run(streaming_jar, hadoop_tmp, tmp_path,
                                                          sig):
    work, hold = hadoop_tmp / ("signal-%s" % sig.name), tmp_path / "hold"
    hold.mkdir()
    before = locks()
    proc = start(tmp_path, hadoop_args(streaming_jar, work) + ARGS + [
        "--cmdenv", "MRSPARSE_TEST_HOLD_ATTEMPT=start:_m_000000_",
        "--cmdenv", "MRSPARSE_TEST_DIR=%s" % hold, "-o", "out", SAMPLE],
        start_new_session=True)
    stderr, below = signal_group(proc, lambda: any(f.endswith(".held") for f in os.listdir(hold)),
                                 "a held map attempt", sig, bound=HUNG)
    assert proc.returncode == 128 + sig, stderr
    assert stderr.splitlines()[-1].startswith("mrsparse: stopped by %s; removed " % sig.name)
    wait_for(lambda: not any(running(p) for p in below), "Hadoop and its tasks to end")
    assert not (tmp_path / "out").exists()
    assert_nothing_left(tmp_path, work, before)


def test_a_failed_hadoop_run_leaves_nothing_behind(streaming_jar, hadoop_tmp, tmp_path):
    work = hadoop_tmp / "failed"
    (tmp_path / "bad.jsonl").write_text("this line is not a vector\n")
    before = locks()
    proc = start(tmp_path, hadoop_args(streaming_jar, work) + ARGS + [
        "--strict", "-o", "out", "bad.jsonl"])
    _, stderr = proc.communicate()
    assert proc.returncode == 1, stderr  # (what it says: tests/engines/test_cluster.py)
    assert not (tmp_path / "out").exists()
    assert_nothing_left(tmp_path, work, before)


def test_a_refused_spark_run_leaves_no_temporary_directory(tmp_path):
    proc = start(tmp_path, spark_args() + ARGS + ["--output-dir", "hdfs:///mrsparse-test/out",
                                                  SAMPLE])
    _, stderr = proc.communicate()
    assert proc.returncode == 1, stderr
    assert stderr.splitlines()[-1].startswith("mrsparse: error: --output-dir "), stderr
    assert os.listdir(tmp_path / "tmp") == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_to_the_process_group_ends_a_spark_run(tmp_path, sig):
    """(Spark's tasks carry no attempt ids for the test hooks: the signal
    comes once Spark's JVM runs, wherever the run then is.)"""
    corpus = tmp_path / "corpus.jsonl"
    write_lines(corpus, jobs_corpus(n=2000, seed=3))
    proc = start(tmp_path, spark_args() + ARGS[:-1] + [str(corpus)], start_new_session=True)
    for line in proc.stderr:
        if line.startswith("Running step"):
            break
    stderr, below = signal_group(
        proc, lambda: any(b"java" in cmdline(p) for p in descendants(proc.pid)),
        "Spark's JVM", sig, bound=HUNG)
    assert proc.returncode == 128 + sig, stderr
    assert stderr.splitlines()[-1].startswith("mrsparse: stopped by %s; removed " % sig.name)
    wait_for(lambda: not any(running(p) for p in below), "Spark and its workers to end")
    assert os.listdir(tmp_path / "tmp") == []


def test_a_relative_python_bin_is_warned_of(streaming_jar, hadoop_tmp, tmp_path):
    # found: --python-bin .venv/bin/python fails every Hadoop task (each starts
    # in a working directory of its own), and the run said only that a step failed
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").symlink_to(PYTHON)
    write_lines(str(tmp_path / "c.jsonl"), jobs_corpus(n=30, seed=2))
    args = hadoop_args(streaming_jar, hadoop_tmp / "relative", python_bin="bin/python")
    proc = start(tmp_path, args + [a for a in ARGS if a != "-q"] + ["c.jsonl"])
    _, stderr = proc.communicate()
    assert proc.returncode == 1
    assert ("--python-bin bin/python is a path relative to here, but each Hadoop task starts "
            "in a working directory of its own, where it is not: give an absolute path "
            "(here: %s)" % (tmp_path / "bin" / "python")) in stderr
