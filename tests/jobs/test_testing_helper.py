"""mrjobs.testing.run_job on a job that is not ours (the example of docs/guide/testing.md)."""
import uuid

import pytest
from mrjob.job import MRJob
from mrjob.protocol import JSONValueProtocol

from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.testing import JobRun, run_job


class MRWordCount(MRJob):
    def mapper(self, _, line):
        for word in line.split():
            yield word, 1
            self.increment_counter("words", "seen")

    def combiner(self, word, counts):
        yield word, sum(counts)

    def reducer(self, word, counts):
        yield word, sum(counts)


class MRLengths(MRJob):
    OUTPUT_PROTOCOL = JSONValueProtocol

    def mapper(self, _, line):
        yield None, len(line)

    def reducer(self, _, lengths):
        yield None, sorted(lengths)


def test_word_count():
    result = run_job(MRWordCount, ["a b", "b", "", "c b"])
    assert isinstance(result, JobRun)
    assert result.output == [("a", 1), ("b", 3), ("c", 1)]
    assert result.counters == {"words": {"seen": 5}}
    assert result.lines == [b'"a"\t1', b'"b"\t3', b'"c"\t1']


def test_bytes_input_and_value_protocol():
    assert run_job(MRLengths, [b"xyz", b"", "\u00e9"]).output == [(None, [0, 1, 3])]  # text lines: "\u00e9" is 1 char


def test_input_paths_and_args(tmp_path):
    p = tmp_path / "in.jsonl"
    p.write_text('{"id": "%s", "features": {"%s": 2}}\n{"id": "%s", "features": {"%s": 3}}\n'
                 % (uuid.UUID(int=1), uuid.UUID(int=9), uuid.UUID(int=2), uuid.UUID(int=9)))
    result = run_job(MRSparseDotProducts, None, ["--include-self"], input_paths=[str(p)])
    assert dict(result.output)[uuid.UUID(int=1)] == {uuid.UUID(int=1): 4.0, uuid.UUID(int=2): 6.0}


def test_job_errors_propagate():
    class MRBroken(MRJob):
        def mapper(self, _, line):
            raise RuntimeError("boom on " + line)

    with pytest.raises(RuntimeError, match="boom on x"):
        run_job(MRBroken, ["x"])


@pytest.mark.slow
def test_local_runner_runs_a_job_class_of_a_test_module():
    # this module has no `if __name__ == "__main__": MRWordCount.run()`: the
    # local runner's tasks still run the job, not an empty script
    result = run_job(MRWordCount, ["a b", "b", "", "c b"], runner="local")
    assert result.output == [("a", 1), ("b", 3), ("c", 1)]
    assert result.counters == {"words": {"seen": 5}}


def test_importing_the_jobs_shows_no_deprecation_warning_of_mrjob():
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c",
                           "import mrjobs.dot_products, mrjobs.testing, mrjob.local"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
