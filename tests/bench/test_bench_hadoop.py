"""The Hadoop benchmark's core (bench/hadoop.py) on the tests' HDFS + YARN cluster:
a tiny generated corpus, the products job in configurations (a) (JSON input,
mrjob's JSON between the steps) and (d) (compact input and wire).  Results
only: the rows' keys, Hadoop's counters read back, the same output lines."""
import json

import pytest

from bench import common
from bench import hadoop as bh

pytest_plugins = ["tests.engines.fixtures"]
pytestmark = [pytest.mark.engines, pytest.mark.usefixtures("cluster_env")]

KEYS = ("job", "input", "wire", "compression", "hdfs_bytes_read", "hdfs_bytes_written",
        "file_bytes_read", "file_bytes_written", "shuffle_bytes", "cpu_ms", "gc_ms", "wall_s",
        "lines_sha256")


def test_products_json_and_compact_on_the_cluster(hadoop_cluster, streaming_jar, task_python,
                                                  tmp_path):
    corpus = bh.Corpus("tiny", 120, vocabulary=400)
    json_path, compact_path, stats = bh.prepare_corpus(corpus, tmp_path, lambda msg: None)
    assert stats["round_trip_identical"]
    assert 0 < stats["compact_bytes"] < stats["json_bytes"]
    setup = bh.Setup(hadoop_cluster, streaming_jar, task_python)
    rows = bh.run_corpus(setup, corpus.name, json_path, compact_path, stats["blocks"],
                         [("dot_products", "a"), ("dot_products", "d")], lambda msg: None)
    assert [(r["config"], r["input"], r["wire"], r["compression"]) for r in rows] == [
        ("a", "json", "json", "none"), ("d", "compact", "compact", "none")]
    for r in rows:
        assert set(KEYS) <= set(r), r.keys()
        assert r["job"] == "dot_products"
        assert r["steps"] >= 1 and len(r["step_counters"]) == r["steps"]
        for key in KEYS[4:11]:
            assert isinstance(r[key], int) and r[key] > 0, (key, r[key])
        assert r["wall_s"] > 0
        assert r["output_lines"] > 100      # nearly every vector has a neighbour
        # the sums are over all steps: at least the first step's own count
        first = {g.strip(): n for g, n in r["step_counters"][0].items()}
        assert r["hdfs_bytes_read"] >= first["File System Counters"][
            "HDFS: Number of bytes read"] > 0
    a, d = rows
    # the first step reads the input file from HDFS: its size tells the formats apart
    assert a["hdfs_bytes_read"] > d["hdfs_bytes_read"]
    assert a["lines_sha256"] == d["lines_sha256"]
    assert all(s["same"] for s in bh.same_lines(rows))
    # what --json writes: one plain JSON row per run
    out = tmp_path / "runs.json"
    out.write_text(json.dumps([{k: v for k, v in r.items() if k != "step_counters"}
                               for r in rows]))
    assert [set(KEYS) <= set(r) for r in json.loads(out.read_text())] == [True, True]
    (pair,) = [r for r in bh.ratios(rows) if r["pair"] == "(d)/(a)"]
    assert 0 < pair["disk_bytes"] < 1
    checks = bh.evaluate_checks(rows, {corpus.name: stats}, {}, [])
    assert {c["id"] for c in checks} >= {"tiny: (d)/(a) disk bytes", "tiny: (d)/(a) CPU",
                                         "tiny: convert -> run -> convert back"}
    common.print_checks(checks)
