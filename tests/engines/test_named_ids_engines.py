"""``--ids any`` on the real engines: Hadoop Streaming in local mode, Spark
and the HDFS + YARN cluster give the inline runner's lines, ids of any kind
in and out (the job's run, then the second run that gives the ids back)."""
import pytest

from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.testing import run_job, write_lines
from tests.engines.cluster import hadoop
from tests.engines.support import hadoop_args, run_cli, run_status, spark_args
from tests.jobs.test_named_ids import named_corpus

#: the fixtures (streaming_jar, hadoop_tmp, hadoop_cluster, ...)
pytest_plugins = ["tests.engines.fixtures"]
pytestmark = [pytest.mark.engines, pytest.mark.usefixtures("engine_env")]

ARGS = ["--measure", "cosine", "--top-k", "3", "--ids", "any"]


@pytest.fixture(scope="module")
def named(tmp_path_factory):
    """A corpus with string and integer ids, and the inline runner's lines."""
    path = str(tmp_path_factory.mktemp("named") / "named.jsonl")
    lines = named_corpus(n=80, seed=4)
    write_lines(path, lines)
    inline = run_job(MRSparseDotProducts, None, ARGS, input_paths=[path])
    assert len(inline.lines) > 40
    return path, inline


def check(run, inline):
    assert run.lines == inline.lines
    assert run.output == inline.output
    assert run.counters["mrsparse ids"]["output lines with their ids"] == len(inline.lines)


@pytest.mark.smoke
def test_hadoop_local_mode_gives_the_ids_back(streaming_jar, hadoop_tmp, named, tmp_path):
    # into --output-dir: Hadoop's local mode writes the second run's output
    # where the committer takes it (the first run's stays in Hadoop's temp dir)
    path, inline = named
    out = tmp_path / "out"
    status, log = run_status(MRSparseDotProducts, ["--no-conf"] + hadoop_args(
        streaming_jar, hadoop_tmp / "named") + ARGS + [path, "--output-dir", str(out)])
    assert status == 0, log
    lines = sorted(l for p in out.glob("part-*") for l in p.read_bytes().splitlines() if l)
    assert lines == inline.lines and (out / "_SUCCESS").exists()


@pytest.mark.smoke
def test_spark_gives_the_ids_back(named):
    path, inline = named
    check(run_cli(MRSparseDotProducts, ["--no-conf"] + spark_args() + ARGS + [path]), inline)


def test_the_cluster_gives_the_ids_back(hadoop_cluster, cluster_env, streaming_jar,
                                        task_python, named):
    from tests.engines.test_cluster import cluster_args
    path, inline = named
    hadoop(hadoop_cluster, "fs", "-put", path, "/data/named.jsonl")
    run = run_cli(MRSparseDotProducts, cluster_args(hadoop_cluster, streaming_jar, task_python)
                  + ARGS + ["hdfs:///data/named.jsonl"])
    check(run, inline)
    assert "hdfs://" in run.log
