"""Two runs whose clocks read the same microsecond (mrjobs/runtime/jobkey.py):
each claims a job key of its own, and neither touches the other's files."""
import datetime
import os
import re
import types
import uuid

import mrjob.runner
import pytest

from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.testing import write_lines
from tests.jobs_helpers import assert_scores_close, corpus, oracle

#: mrjob's job key: label.owner.YYYYmmdd.HHMMSS.micro (as its tools parse it)
KEY = re.compile(r"^(.*)\.(.*)\.(\d{8})\.(\d{6})\.(\d{6})$")
T0 = datetime.datetime(2026, 12, 4, 23, 0, 0, 123456)


class StoppedClock:
    """``datetime.datetime`` for mrjob.runner: the first ``same`` readings
    are one microsecond, then it moves on a microsecond a reading."""

    def __init__(self, same):
        self.same, self.readings = same, 0

    def utcnow(self):
        self.readings += 1
        return T0 + datetime.timedelta(microseconds=max(0, self.readings - self.same))


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.slow
def test_runs_made_in_one_microsecond_get_keys_and_directories_of_their_own(
        tmp_path, monkeypatch, runner):
    vectors = corpus(n=30, seed=4)
    write_lines(tmp_path / "corpus.jsonl", vectors)
    monkeypatch.setattr(mrjob.runner, "datetime", types.SimpleNamespace(
        datetime=StoppedClock(same=3)))
    tmp = tmp_path / "tmp"
    args = ["-r", runner, "--no-conf", "--local-tmp-dir", str(tmp), "--measure", "dot",
            str(tmp_path / "corpus.jsonl")]
    jobs = [MRSparseDotProducts(args) for _ in range(3)]
    runners = [job.make_runner() for job in jobs]
    keys = [r.get_job_key() for r in runners]
    assert len(set(keys)) == 3, keys
    assert all(KEY.match(k) and k.startswith("dot_products.") for k in keys), keys
    assert sorted(os.listdir(tmp)) == sorted(keys)
    # the first run's files stay while the others make and use theirs
    marker = tmp / keys[0] / "first-run-was-here"
    marker.write_text("")
    for job, r in zip(jobs[1:], runners[1:]):
        with r:
            r.run()
            assert_scores_close(dict(job.parse_output(r.cat_output())), oracle(vectors))
    assert marker.exists()
    with runners[0]:
        pass
    assert os.listdir(tmp) == []  # each runner's cleanup removed its own directory


@pytest.mark.parametrize("cleanup", ["ALL", "NONE"])
@pytest.mark.slow
def test_the_setup_wrappers_lock_goes_with_the_temporary_files(tmp_path, cleanup):
    # mrjob's setup wrapper (files shipped, --setup commands) makes
    # /tmp/wrapper.lock.<job key> in every task and never removes it
    write_lines(tmp_path / "corpus.jsonl", corpus(n=30, seed=6))
    label = "mrsparse-lock-test-%s" % uuid.uuid4().hex
    job = MRSparseDotProducts(["-r", "local", "--no-conf", "--label", label, "--setup", "true",
                               "--cleanup", cleanup, "--local-tmp-dir", str(tmp_path / "tmp"),
                               str(tmp_path / "corpus.jsonl")])
    with job.make_runner() as r:
        r.run()
        lock = "/tmp/wrapper.lock.%s" % r.get_job_key()
        assert r.get_job_key().startswith(label + ".") and os.path.exists(lock)
    try:
        assert os.path.exists(lock) == (cleanup == "NONE")  # kept only with the rest
    finally:
        if os.path.exists(lock):
            os.remove(lock)
