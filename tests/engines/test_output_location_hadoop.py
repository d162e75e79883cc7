"""``--output-dir`` on ``-r hadoop`` where Hadoop runs in local mode (no
cluster: its default filesystem is ``file:///``), on real Hadoop Streaming
(issue 44, item 4).

mrjob's hadoop runner rewrites a plain path to ``hdfs:///...``; in local mode
there is no HDFS, and the check of the output directory took "cannot reach"
for "nothing there": the run ended after the job in mrjob's "Streaming
Command Failed!" dump, which names neither the path nor the scheme.  Now a
plain path means what Hadoop itself takes it for, the local directory (a
relative one from the current directory, as the input paths), and an
``--output-dir`` on a filesystem Hadoop cannot reach is refused before the
work, in one line naming the path and the scheme.
"""
import os

import pytest

from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.testing import run_job
from tests.engines.support import REPO, hadoop_args, run_status, spark_args

#: the fixtures (streaming_jar, hadoop_tmp, ...)
pytest_plugins = ["tests.engines.fixtures"]
pytestmark = [pytest.mark.engines, pytest.mark.usefixtures("engine_env")]

SAMPLE = os.path.join(REPO, "examples", "sample.jsonl")
ARGS = ["--measure", "cosine", "--top-k", "3"]


def part_lines(out):
    return sorted(line for n in sorted(os.listdir(out)) if n.startswith("part-")
                  for line in (out / n).read_bytes().split(b"\n") if line)


@pytest.mark.parametrize("relative", [True, False], ids=["relative", "absolute"])
def test_a_plain_output_dir_is_the_local_directory_in_local_mode(
        streaming_jar, hadoop_tmp, tmp_path, monkeypatch, relative):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    argv = ["--no-conf"] + hadoop_args(streaming_jar, hadoop_tmp / ("plain-%s" % relative)) \
        + ARGS + ["--output-dir", "out" if relative else str(out), SAMPLE]
    status, stderr = run_status(MRSparseDotProducts, argv)
    assert status == 0, stderr[-5000:]
    assert "--output-dir %s: Hadoop runs in local mode; the output goes to the local " \
           "directory %s" % ("out" if relative else out, out) in stderr
    inline = run_job(MRSparseDotProducts, None, ARGS, input_paths=[SAMPLE])
    assert part_lines(out) == sorted(inline.lines)
    assert (out / "_SUCCESS").read_bytes() == b""
    assert sorted(os.listdir(tmp_path)) == ["out"]  # nothing staged left beside it


@pytest.mark.parametrize("output_dir, said", [
    ("hdfs:///mrsparse-test/out", "Incomplete HDFS URI, no host: hdfs:///mrsparse-test/out"),
    ("hdfs://127.0.0.1:1/out", "Call From "),
])
def test_an_unreachable_output_filesystem_is_refused_before_the_work(
        streaming_jar, hadoop_tmp, output_dir, said):
    work = hadoop_tmp / ("unreachable-%d" % len(said))
    argv = ["--no-conf"] + hadoop_args(streaming_jar, work) + ARGS + [
        "--output-dir", output_dir, SAMPLE]
    status, stderr = run_status(MRSparseDotProducts, argv)
    assert status == 1, stderr
    last = stderr.splitlines()[-1]
    assert last.startswith("mrsparse: error: --output-dir %s is on hdfs://, which Hadoop "
                           "cannot reach from here (%s" % (output_dir, said)), stderr
    assert last.endswith("): start that filesystem or give --output-dir on one Hadoop "
                         "reaches (a file:/// URI for a local directory)"), stderr
    for sign in ("Running step", "Streaming Command Failed", "Traceback", "Counters"):
        assert sign not in stderr, stderr
    # nothing was uploaded or left in Hadoop's working directory
    assert not work.exists() or not os.listdir(work)


def test_an_unreachable_output_filesystem_is_refused_on_spark_too(tmp_path):
    # the runners without a committer of ours look through mrjob's
    # filesystem: where that cannot reach --output-dir (no HDFS, no hadoop
    # client), the run is refused, not sent to spark-submit (before the fix:
    # Spark's 231-line Py4JJavaError after the whole job)
    out = "hdfs:///mrsparse-test/out"
    status, stderr = run_status(MRSparseDotProducts, ["--no-conf"] + spark_args() + ARGS + [
        "--local-tmp-dir", str(tmp_path), "--output-dir", out, SAMPLE])
    assert status == 1, stderr
    last = stderr.splitlines()[-1]
    assert last.startswith("mrsparse: error: --output-dir %s is on hdfs://, which cannot be "
                           "reached from here (" % out), stderr
    assert last.endswith("): make it reachable (the filesystem and its client, e.g. "
                         "--hadoop-bin for hdfs://) or give --output-dir on one that is")
    for sign in ("Running step", "spark-submit", "Traceback", "Py4JJavaError"):
        assert sign not in stderr, stderr
    # nothing written, nothing left (mrjob's spark runner kept its temporary
    # directory after a failure: tests/engines/test_hostile_hadoop.py)
    assert os.listdir(tmp_path) == []
