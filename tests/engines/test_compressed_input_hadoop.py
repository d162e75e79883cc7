"""Compressed input of several members on real Hadoop Streaming (local
mode): what the inline and local runners now match.

Hadoop's codecs read every gzip member and bz2 stream of a file
(``DecompressorStream`` resets its decompressor at each one's end); mrjob's
runners read up to the end of the first only, until
:mod:`mrjobs.runtime.compressed`.  The same files as
``tests/hostile/test_compressed_input.py`` (two members; three with an empty
one in the middle) give on Hadoop the lines and the count of vectors read
that the inline runner gives for the plain file.
"""
import bz2
import gzip

import pytest

from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.generate import write_corpus
from mrjobs.testing import run_job
from tests.engines.support import hadoop_args, run_cli

#: the fixtures (streaming_jar, hadoop_tmp, ...)
pytest_plugins = ["tests.engines.fixtures"]
pytestmark = [pytest.mark.engines, pytest.mark.usefixtures("engine_env")]

VECTORS = 150
ARGS = ["--measure", "cosine", "--top-k", "3"]


def test_hadoop_reads_every_member_as_the_inline_runner_does(streaming_jar, hadoop_tmp, tmp_path):
    plain = tmp_path / "c.jsonl"
    write_corpus(str(plain), vectors=VECTORS, seed=12, progress=False)
    lines = plain.read_bytes().splitlines(keepends=True)
    gz = tmp_path / "c.jsonl.gz"
    gz.write_bytes(gzip.compress(b"".join(lines[:50])) + gzip.compress(b"")
                   + gzip.compress(b"".join(lines[50:])))
    bz = tmp_path / "c.jsonl.bz2"
    bz.write_bytes(bz2.compress(b"".join(lines[:80])) + bz2.compress(b"".join(lines[80:])))
    inputs = [str(gz), str(bz)]  # every vector twice: merged, as the plain file twice
    inline = run_job(MRSparseDotProducts, None, ARGS, input_paths=[str(plain)] * 2)
    for runner_args in (["-r", "inline"],
                        hadoop_args(streaming_jar, hadoop_tmp / "members")):
        run = run_cli(MRSparseDotProducts, ["--no-conf"] + runner_args + ARGS + inputs)
        assert run.counters["mrsparse input"]["vectors read"] == 2 * VECTORS, runner_args[1]
        assert run.lines == sorted(inline.lines), runner_args[1]
