"""Runs started without a standard stream (``>&-``, ``2>&-``, ``<&-``: cron,
daemons, a supervisor), and a stdout with no room (``> /dev/full``): the
output is refused before the work where it would be lost, a run that needs
no stdout runs, and an error writing stdout is blamed on stdout, not on
TMPDIR."""
import os
import subprocess
import sys

import pytest

from mrjobs.testing import write_lines
from tests.jobs_helpers import corpus
from tests.runtime.test_launch_faults import env_for

pytestmark = pytest.mark.versions

RUNNERS = ["inline", "local"]
ARGS = ["corpus.jsonl", "--measure", "cosine", "--top-k", "3"]


def run(tmp_path, args, close=(), stdout=subprocess.PIPE):
    """The job in its own process, with the descriptors ``close`` closed
    before it starts (as a shell's ``>&-`` does)."""
    write_lines(tmp_path / "corpus.jsonl", corpus(n=80, seed=3))
    stderr = subprocess.PIPE if 2 not in close else subprocess.DEVNULL
    return subprocess.run([sys.executable, "-m", "mrjobs.dot_products"] + args, cwd=tmp_path,
                          env=env_for(tmp_path), stdout=stdout, stderr=stderr,
                          preexec_fn=lambda: [os.close(fd) for fd in close])


def expected(tmp_path):
    proc = run(tmp_path, ARGS + ["-q"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count(b"\n") >= 70
    return proc.stdout


def assert_nothing_left(tmp_path):
    assert os.listdir(tmp_path / "tmp") == []


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.slow
def test_output_to_a_closed_stdout_is_refused_before_the_work(tmp_path, runner):
    proc = run(tmp_path, ARGS + ["-r", runner], close=(1,))
    assert proc.returncode == 1
    stderr = proc.stderr.decode()
    assert stderr.splitlines() == [
        "mrsparse: error: stdout is closed (the run was started with >&- or without a "
        "stdout): give --output-dir DIR for the output, or open stdout"], stderr
    assert_nothing_left(tmp_path)


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.slow
def test_a_closed_stdout_is_no_matter_with_output_dir(tmp_path, runner):
    want = expected(tmp_path)
    proc = run(tmp_path, ARGS + ["-r", runner, "-o", "out", "-q"], close=(1,))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""
    assert (tmp_path / "out" / "part-00000").read_bytes() == want
    assert_nothing_left(tmp_path)


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("closed", [(2,), (0,), (0, 2)], ids=["stderr", "stdin", "both"])
@pytest.mark.slow
def test_a_run_without_stderr_or_stdin_runs(tmp_path, runner, closed):
    want = expected(tmp_path)
    proc = run(tmp_path, ARGS + ["-r", runner], close=closed)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == want
    assert_nothing_left(tmp_path)


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.slow
@pytest.mark.smoke
def test_a_full_stdout_is_blamed_on_stdout(tmp_path, runner):
    with open("/dev/full", "wb") as full:
        proc = run(tmp_path, ARGS + ["-r", runner, "-q"], stdout=full)
    assert proc.returncode == 1
    stderr = proc.stderr.decode()
    assert stderr.splitlines()[-1] == (
        "mrsparse: error: cannot write the output to stdout%s: No space left on device: "
        "make room there, or give --output-dir DIR" % (
            " (/dev/full)" if sys.platform.startswith("linux") else "")), stderr
    assert "TMPDIR" not in stderr and "Traceback" not in stderr and "Exception" not in stderr
    assert_nothing_left(tmp_path)
