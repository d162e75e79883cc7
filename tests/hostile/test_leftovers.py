"""Issue 44, item 8 (part): a run of a user's own job through
:mod:`mrjobs.testing` leaves nothing behind.

mrjob's setup wrapper script (every local run ships mrjob itself, so its
tasks run the wrapper) takes a lock on ``/tmp/wrapper.lock.<job key>`` -- the
path is written into the script, whatever TMPDIR says -- and nothing removes
it; a failed run also kept mrjob's temporary directory in TMPDIR (mrjob's
``cleanup_on_failure`` is ``NONE``).  Here: runs that succeed and runs that
fail, on the inline and local runners, with TMPDIR a fresh directory that
must be empty afterwards and no lock file of the run's job key in /tmp.
"""
import glob
import os
import subprocess
import sys
import tempfile
import textwrap
import uuid

import pytest

from mrjob.job import MRJob

from mrjobs.testing import run_job

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class MRWordCount(MRJob):
    """A user's job: fails on the word ``boom``."""

    def mapper(self, _, line):
        for word in line.split():
            if word == "boom":
                raise ValueError("boom")
            yield word, 1

    def reducer(self, word, counts):
        yield word, sum(counts)


@pytest.fixture
def fresh_tmp(tmp_path, monkeypatch):
    """TMPDIR (this process's tempfile and the tasks') a new empty directory."""
    d = tmp_path / "TMPDIR"
    d.mkdir()
    monkeypatch.setenv("TMPDIR", str(d))
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    return d


def locks(label):
    return glob.glob("/tmp/wrapper.lock.%s.*" % label)


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.slow
@pytest.mark.smoke
def test_a_user_job_leaves_nothing(fresh_tmp, runner):
    label = "mrsparse-leftovers-%s" % uuid.uuid4().hex
    result = run_job(MRWordCount, ["a b", "b"], args=["--label", label], runner=runner)
    assert dict(result.output) == {"a": 1, "b": 2}
    assert os.listdir(fresh_tmp) == [] and locks(label) == []


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.slow
@pytest.mark.smoke
def test_a_failed_user_job_leaves_nothing(fresh_tmp, runner):
    label = "mrsparse-leftovers-%s" % uuid.uuid4().hex
    with pytest.raises(Exception):
        run_job(MRWordCount, ["a boom"], args=["--label", label], runner=runner)
    assert os.listdir(fresh_tmp) == [] and locks(label) == []


@pytest.mark.slow
def test_mrsparse_jobs_leave_nothing_when_the_process_ends(fresh_tmp):
    # the jobs' own local runs, one failed (--strict on a bad line), one not,
    # in a process of their own: the zip of mrsparse shipped to the tasks
    # is the process's (built once, removed at its exit)
    label = "mrsparse-leftovers-%s" % uuid.uuid4().hex
    script = textwrap.dedent("""
        import sys
        from mrjobs.dot_products import MRSparseDotProducts
        from mrjobs.testing import run_job
        from tests.jobs_helpers import corpus
        args = ["--label", %r]
        try:
            run_job(MRSparseDotProducts, ["not a vector"], runner="local", args=args + ["--strict"])
        except Exception:
            pass
        else:
            sys.exit("the run did not fail")
        result = run_job(MRSparseDotProducts, corpus(n=20, seed=2, edge_cases=False),
                         runner="local", args=args)
        assert len(result.output) == 20
    """ % label)
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, cwd=REPO,
                       env=dict(os.environ, TMPDIR=str(fresh_tmp)))
    assert p.returncode == 0, p.stderr.decode()[-3000:]
    assert os.listdir(fresh_tmp) == [] and locks(label) == []


def test_a_temp_dir_given_in_args_wins(tmp_path, fresh_tmp):
    # the user's --local-tmp-dir is where mrjob's files go (and a failed
    # run's stay, as mrjob keeps them), the lock still goes
    mine = tmp_path / "mine"
    label = "mrsparse-leftovers-%s" % uuid.uuid4().hex
    with pytest.raises(Exception):
        run_job(MRWordCount, ["boom"], runner="local",
                args=["--label", label, "--local-tmp-dir", str(mine)])
    assert [n.split(".")[0] for n in os.listdir(mine)] == [label]
    assert os.listdir(fresh_tmp) == [] and locks(label) == []
