"""The planner's wall time on a cluster runner: every task sorts its own
input, so a step's CPU spreads over its tasks (no share waits on one process,
as the local runner's sort does); the pairs step takes at least its largest
task; each step adds its launch."""
import pytest

from mrjobs.plan import resources
from mrjobs.plan.cli import parser, plan

SAMPLE = "examples/sample.jsonl"


def _plan(*args):
    o = parser().parse_args([SAMPLE, "--measure", "cosine", *args])
    return plan(o)


def _pairs_only(products, share, reducers=100, block_pairs=1000):
    """A plan of one pairs step over no bytes, its largest task ``share`` of it."""
    return {"steps": [{"step": "pairs", "bytes": 0.0}], "products_computed": products,
            "reducers": reducers, "block_pairs": block_pairs, "largest_group_share": share,
            "map_tasks": 1}


@pytest.mark.parametrize("share", [0.5, 0.05, 0.001])
def test_the_pairs_step_takes_at_least_its_largest_task(share):
    c = resources.constants(resources.load_calibration(resources.CALIBRATION))
    e = _pairs_only(1e12, share)
    wall, cpu = resources.times(e, c, 100, cluster="hadoop")
    assert wall - resources.STEP_LAUNCH_S == pytest.approx(max(cpu * share, cpu / 100))


def test_the_local_runners_serial_share_is_not_a_clusters():
    c = resources.constants(resources.load_calibration(resources.CALIBRATION))
    e = _pairs_only(1e12, 0.001)
    local, cpu = resources.times(e, c, 100)
    cluster, _ = resources.times(e, c, 100, cluster="hadoop")
    # on the local runner (1 - par) of the CPU runs on one core
    assert local == pytest.approx((1 - c["par"]) * cpu + c["par"] * cpu / 100)
    assert cluster < local


def test_a_cluster_plan_spreads_each_step_over_its_slots():
    e = _plan("--top-k", "10", "-r", "hadoop", "--reducers", "100", "--vectors", "2000000")
    steps = len(e["steps"])
    assert e["wall_s"] >= steps * resources.STEP_LAUNCH_S + e["cpu_s"] / 100
    # far from the local runner's model, where 15% of 47 h would be 7 h
    assert e["wall_s"] - steps * resources.STEP_LAUNCH_S < 3 * e["cpu_s"] / 100
    fewer = _plan("--top-k", "10", "-r", "hadoop", "--reducers", "10", "--vectors", "2000000")
    assert fewer["wall_s"] > e["wall_s"]


def test_every_cluster_runner_and_no_local_one_is_planned_so():
    assert {"hadoop", "emr", "dataproc", "spark"} <= resources.CLUSTER_RUNNERS
    assert not {"local", "inline"} & resources.CLUSTER_RUNNERS


def test_spark_launches_once_for_all_the_steps():
    hadoop = _plan("--top-k", "10", "-r", "hadoop", "--reducers", "100", "--vectors", "2000000")
    spark = _plan("--top-k", "10", "-r", "spark", "--reducers", "100", "--vectors", "2000000")
    steps = len(hadoop["steps"])
    assert steps >= 2 and spark["cpu_s"] == pytest.approx(hadoop["cpu_s"])
    assert spark["wall_s"] == pytest.approx(hadoop["wall_s"] - (steps - 1)
                                            * resources.STEP_LAUNCH_S)

