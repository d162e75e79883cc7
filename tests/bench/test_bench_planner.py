"""bench.planner: the planner held to its +-30% against real runs."""
import json

import pytest

from bench import planner


def test_a_ratio_outside_the_band_is_a_miss_and_only_that():
    rows = {"wall s": (13.0, 10.0), "CPU s": (13.1, 10.0), "peak memory of a task or sort":
            (6.9, 10.0), "temporary disk": (7.0, 10.0), "shuffle bytes": (1.0, 0.0),
            "blocks": (9, 1)}
    missed = planner.misses(rows)
    assert [what for what, _ in missed] == ["CPU s", "peak memory of a task or sort"]
    assert [ratio for _, ratio in missed] == pytest.approx([1.31, 0.69])


@pytest.mark.slow
def test_the_quick_run_compares_plan_and_run_on_every_checked_quantity(tmp_path):
    status = planner.main(["--quick", "--out", str(tmp_path)])
    data = json.loads((tmp_path / "planner.json").read_text())
    (result,) = data["results"]
    assert result["vectors"] == planner.CORPORA[0]
    assert set(planner.CHECKED) <= set(result["rows"])
    assert all(plan > 0 and run > 0 for plan, run in
               (result["rows"][what] for what in planner.CHECKED))
    assert status == (1 if result["misses"] else 0)
