"""The update run (mrjobs.update) on the real engines: its two runs of the job on
Hadoop Streaming in local mode, Spark and the HDFS + YARN cluster, merged into
yesterday's output, give the bytes of the inline runner's full run on today's
corpus."""
import pytest

from mrjobs.update.__main__ import main as update_main
from tests.engines.support import hadoop_args, spark_args
from tests.update.test_update import LINES, Day, full_run, output_bytes, split_day

#: the fixtures (streaming_jar, hadoop_tmp, hadoop_cluster, ...)
pytest_plugins = ["tests.engines.fixtures"]
pytestmark = [pytest.mark.engines, pytest.mark.usefixtures("engine_env")]

ARGS = ["--measure", "cosine", "--top-k", "4"]


def update_on(tmp, runner_args, args=ARGS):
    """Yesterday's full run (inline), the update on ``runner_args``, today's
    full run (inline): (the update's bytes, the full run's)."""
    day = Day(tmp, *split_day(LINES, 10, 4, 2, seed=3))
    full_run(day.yesterday, args, tmp / "prev")
    status = update_main(day.update_args(tmp / "prev", tmp / "out") + ["--no-conf"]
                         + runner_args)
    assert status == 0
    return output_bytes(tmp / "out"), full_run(day.today, args)


@pytest.mark.smoke
def test_hadoop_local_mode_updates_with_the_full_runs_bytes(streaming_jar, hadoop_tmp,
                                                            tmp_path):
    got, want = update_on(tmp_path, hadoop_args(streaming_jar, hadoop_tmp / "update"))
    assert want and got == want


@pytest.mark.smoke
def test_spark_updates_with_the_full_runs_bytes(tmp_path):
    got, want = update_on(tmp_path, spark_args(),
                          ["--measure", "jaccard", "--threshold", "0.2"])
    assert want and got == want


def test_the_cluster_updates_with_the_full_runs_bytes(hadoop_cluster, cluster_env,
                                                      streaming_jar, task_python, tmp_path):
    from tests.engines.test_cluster import cluster_args
    args = cluster_args(hadoop_cluster, streaming_jar, task_python)
    if args[0] == "--no-conf":
        args = args[1:]
    day = Day(tmp_path, *split_day(LINES, 10, 4, 2, seed=3))
    full_run(day.yesterday, ARGS, tmp_path / "prev")
    assert update_main(day.update_args(tmp_path / "prev", tmp_path / "out") + args) == 0
    assert output_bytes(tmp_path / "out") == full_run(day.today, ARGS)


def test_hadoop_local_mode_updates_from_a_reserve(streaming_jar, hadoop_tmp, tmp_path):
    # the reserve made inline (--reserve 3: one run at top 7), the next update's
    # runs on Hadoop at top 7, merged with the reserve's rows
    day = Day(tmp_path, *split_day(LINES, 10, 8, 2, seed=4))
    full_run(day.yesterday, ARGS, tmp_path / "d0")
    (tmp_path / "none").mkdir()
    assert update_main(Day(tmp_path / "none", [], [], []).update_args(
        tmp_path / "d0", tmp_path / "r") + ["--reserve", "3"]) == 0
    assert update_main(day.update_args(tmp_path / "r", tmp_path / "out") + ["--no-conf"]
                       + hadoop_args(streaming_jar, hadoop_tmp / "reserve")) == 0
    assert output_bytes(tmp_path / "out") == full_run(day.today, ARGS)
