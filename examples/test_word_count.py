"""A test of your own job with mrjobs.testing.run_job (docs/guide/testing.md).

Run it with ``python -m pytest examples/test_word_count.py``.
"""
from mrjob.job import MRJob

from mrjobs.testing import run_job


class MRWordCount(MRJob):
    def mapper(self, _, line):
        for word in line.split():
            yield word, 1

    def reducer(self, word, counts):
        yield word, sum(counts)


def test_word_count():
    result = run_job(MRWordCount, ["a b", "b"])
    assert dict(result.output) == {"a": 1, "b": 2}
    # result.counters: {group: {name: count}}; result.lines: raw output lines, sorted
    assert result.lines == [b'"a"\t1', b'"b"\t2']
