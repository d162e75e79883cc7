"""bench.measure: a run's wall is its child's, not rounded up to the memory
samples' interval."""
import sys

from bench import measure


def test_a_run_that_ends_between_samples_is_timed_when_it_ends(tmp_path):
    # an interval far beyond the child's life: before, the wall came out as
    # the interval (the loop slept through it); now the child's exit wakes it
    interval = 20.0
    m = measure.run_checked([sys.executable, "-c", "print('x')"], tmp_path / "out", interval)
    assert m["returncode"] == 0 and (tmp_path / "out").read_bytes() == b"x\n"
    assert m["samples"] == 1 and m["wall_s"] < interval
