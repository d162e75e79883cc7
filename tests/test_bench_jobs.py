"""The job benchmark's plumbing and byte counts (never its speed).

One run of ``python -m bench.jobs --quick`` is shared by the tests that read
its JSON: both wires must find the same pairs, the shuffle byte counts must be
real file sizes that add up, and every target must be reported.
"""
import re
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:  # ``bench`` is a folder of the repo, not installed
    sys.path.insert(0, str(REPO_ROOT))

from bench import common, jobs  # noqa: E402
from tests.bench_helpers import run_quick  # noqa: E402

ROW_FIELDS = {
    "corpus", "wire", "runner", "command", "wall_s", "cpu_s", "user_s", "sys_s",
    "step_wall_s", "max_rss_bytes", "tree_rss_peak_bytes", "tree_pss_peak_bytes",
    "memory_samples", "shuffle_bytes", "shuffle_bytes_by_step", "output_lines",
    "output_pairs", "output_bytes", "output_sha256", "neighbours_sha256", "score_sum",
    "partial_products", "pairs_scored",
    "stripe_entries_emitted", "counters", "sum_df2", "bytes_vs_json", "wall_vs_json",
    "cpu_vs_json", "wall_vs_scipy", "cpu_vs_scipy", "shuffle_bytes_per_pair",
    "ns_per_partial_product", "shuffle_mb", "tree_pss_mb", "max_rss_mb",
}


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    return run_quick("jobs", "jobs", tmp_path_factory.mktemp("jobs"))


def _rows(result):
    return {(r["corpus"], r["wire"], r["runner"]): r for r in result["results"]}


def test_quick_run_writes_json_chart_and_profile(quick_run):
    out, result, _ = quick_run
    assert result["benchmark"] == "jobs"
    assert result["settings"]["quick"] is True
    assert result["settings"]["top_k"] == jobs.TOP_K
    assert result["settings"]["reference_corpora"] == list(jobs.REFERENCE["quick"])
    assert (out / "jobs.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = (out / "jobs-profile.txt").read_text()
    assert "Where the time goes" in text and "What would close the gap" in text
    assert result["findings"] and result["findings"] in text
    profile = result["profile"]
    assert profile["corpus"] == jobs.PROFILE_CORPUS["quick"]
    assert profile["profiled_total_s"] > 0
    assert "ncalls" in profile["top_tottime"] and "ncalls" in profile["top_cumulative"]
    assert [p["part"] for p in profile["parts"]] == [p[0] for p in jobs.PROFILE_PARTS]


def test_quick_run_has_one_complete_row_per_planned_run(quick_run):
    _, result, _ = quick_run
    rows = _rows(result)
    assert list(rows) == [tuple(r) for r in result["settings"]["runs"]]
    assert set(rows) == set(jobs.QUICK_RUNS)
    for r in result["results"]:
        assert set(r) == ROW_FIELDS
        assert r["wall_s"] > 0 and r["cpu_s"] > 0 and r["max_rss_bytes"] > 0
        assert r["cpu_s"] == pytest.approx(r["user_s"] + r["sys_s"])
        assert len(r["step_wall_s"]) == 3
        assert "--wire %s" % " ".join(jobs.WIRES[r["wire"]]) in r["command"]
        assert "-r %s" % r["runner"] in r["command"]
        assert "--top-k %d" % jobs.TOP_K in r["command"]


def test_shuffle_bytes_are_positive_per_step_and_add_up(quick_run):
    _, result, _ = quick_run
    for r in result["results"]:
        by_step = r["shuffle_bytes_by_step"]
        assert len(by_step) == 3 and all(b > 0 for b in by_step)
        assert r["shuffle_bytes"] == sum(by_step)
        assert r["shuffle_mb"] == pytest.approx(r["shuffle_bytes"] / 1e6)


def test_both_wires_find_the_same_pairs(quick_run):
    _, result, _ = quick_run
    rows = _rows(result)
    for (corpus, wire, runner), c in rows.items():
        if wire != "compact" or (corpus, "json", runner) not in rows:
            continue
        j = rows[corpus, "json", runner]
        assert c["output_pairs"] == j["output_pairs"] > 0
        assert c["output_lines"] == j["output_lines"] > 0
        assert c["neighbours_sha256"] == j["neighbours_sha256"]
        assert c["score_sum"] == pytest.approx(j["score_sum"], rel=1e-9)
        assert c["partial_products"] == j["partial_products"]
        assert c["pairs_scored"] == j["pairs_scored"]
        # the same records cross the wire, each smaller in the compact encoding
        assert 0 < c["shuffle_bytes"] < j["shuffle_bytes"]
        assert c["bytes_vs_json"] == pytest.approx(c["shuffle_bytes"] / j["shuffle_bytes"])
        assert j["bytes_vs_json"] == 1.0
        # both runners run the same tasks on the same splits
        for other in ("inline", "local"):
            if (corpus, wire, other) in rows:
                assert rows[corpus, wire, other]["shuffle_bytes_by_step"] == c[
                    "shuffle_bytes_by_step"]


def test_job_counters_match_the_corpus_computed_with_numpy_and_scipy(quick_run):
    _, result, _ = quick_run
    for r in result["results"]:
        st = result["corpora"][r["corpus"]]
        assert r["partial_products"] == st["partial_products"] > 0
        assert r["pairs_scored"] == st["pairs"] > 0
        assert r["sum_df2"] == st["sum_df2"]
        # every vector with a neighbour gets a line of at most top-k neighbours
        assert r["output_pairs"] <= jobs.TOP_K * r["output_lines"]
        assert r["output_pairs"] <= 2 * st["pairs"]
    for c in result["consistency"]:
        assert c["partial_products_match"] is True and c["pairs_scored_match"] is True
        assert c["same_neighbours_as_json"] in (True, None)


def test_corpora_stats_are_consistent(quick_run):
    _, result, _ = quick_run
    for name, st in result["corpora"].items():
        spec = {c.name: c for c in jobs.QUICK_CORPORA}[name]
        assert st["vectors"] == spec.vectors
        assert st["scipy_wall_s"] == min(st["scipy_wall_s_all"]) > 0
        assert st["sum_df2"] >= 2 * st["partial_products"]
        if spec.max_df is None:
            assert st["features_dropped"] == 0 and st["kept_nnz"] == st["nnz"]
        else:
            assert st["kept_nnz"] < st["nnz"]


def test_quick_run_reports_each_target(quick_run):
    _, result, stdout = quick_run
    ids = [c["id"] for c in result["checks"]]
    runs = set(jobs.QUICK_RUNS)
    for name in jobs.REFERENCE["quick"]:
        for runner in ("local", "inline"):
            if (name, "json", runner) in runs:
                assert "bytes %s %s" % (name, runner) in ids
            if (name, "compact", runner) in runs:
                assert "scipy %s %s" % (name, runner) in ids
        assert ("wall %s local" % name in ids) == ((name, "json", "local") in runs)
    for c in result["checks"]:
        assert c["measured"]
        if c["id"].startswith("scipy") or c["id"].endswith(" f32"):
            assert c["pass"] is None
        else:
            assert isinstance(c["pass"], bool)
            assert re.search(r"^%s\s+%s\s" % (re.escape(c["id"]), common.pass_fail(c["pass"])),
                             stdout, re.M)


# -- the helpers, on literal input ---------------------------------------------------

def test_parse_counters_reads_mrjobs_logged_counters():
    lines = [(0.0, "Running step 1 of 2..."), (0.1, "Counters: 2"), (0.1, "\tmrsparse work"),
             (0.1, "\t\tpartial products=12"), (0.1, "\t\tpairs scored=3"),
             (1.0, "Running step 2 of 2..."), (1.5, "Counters: 1"),
             (1.5, "\tother group"), (1.5, "\t\tx=y=4")]
    assert jobs.parse_counters(lines) == [
        {"mrsparse work": {"partial products": 12, "pairs scored": 3}},
        {"other group": {"x=y": 4}}]
    assert jobs.step_times(lines, 3.0) == [1.0, 2.0]


def test_shuffle_bytes_sums_sorted_reducer_input_by_step(tmp_path):
    for step, size in (("000", 5), ("002", 7), ("001", 11)):
        d = tmp_path / "job.x" / "step" / step / "reducer"
        d.mkdir(parents=True)
        (d / "sorted-input").write_bytes(b"x" * size)
        (d / "other").write_bytes(b"y" * 100)
    assert jobs.shuffle_bytes(tmp_path) == [5, 11, 7]
