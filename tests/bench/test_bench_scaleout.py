"""bench.scaleout: its targets from its rows, and its runs on a small corpus
(the WordNet corpus itself comes from a Debian package: ``make bench`` only)."""
import pytest

from bench import scaleout


def _row(strategy, t, shuffle, sha="a" * 64, share=0.001, wall=60.0):
    return {"strategy": strategy, "threshold": t, "shuffle_bytes": shuffle,
            "vs_compact": shuffle / 100.0, "output_sha256": sha, "output_lines": 5,
            "plan_shuffle_bytes": shuffle * 1.1, "plan_by_step": [shuffle * 1.1],
            "shuffle_by_step": [shuffle], "largest_group_share": share,
            "cluster_wall_s": wall, "cluster_blocks": 90, "cluster_shuffle_bytes": 1e10}


def _checks(top_k=(1600.0, 2100.0), **prefix):
    rows = []
    for t in scaleout.THRESHOLDS:
        rows += [_row("prefix", t, **prefix), _row("blocks", t, 1600.0)]
    shuffle, wall = top_k
    rows.append(_row("blocks", None, shuffle, wall=wall))
    return {c["id"]: c["pass"] for c in scaleout.checks(rows, 100.0)}


def test_the_targets_pass_and_fail_on_their_own_numbers():
    ok = _checks(shuffle=250.0)
    assert ok["shuffle t=0.5"] and ok["output t=0.5"] and ok["plan bytes t=0.8"]
    assert ok["straggler t=0.8"] and ok["10^7 plan t=0.5"]
    assert not ok["top-k 10 shuffle"] and ok["top-k 10 10^7 plan"]
    ok = _checks(shuffle=250.0, top_k=(700.0, 3 * 3600.0))
    assert ok["top-k 10 shuffle"] and not ok["top-k 10 10^7 plan"]
    assert not _checks(shuffle=350.0)["shuffle t=0.5"]
    assert not _checks(shuffle=250.0, share=0.05)["straggler t=0.5"]
    assert not _checks(shuffle=250.0, wall=3600.0)["10^7 plan t=0.8"]


def test_outputs_that_differ_fail():
    rows = []
    for t in scaleout.THRESHOLDS:
        rows += [_row("prefix", t, 250.0, sha="b" * 64), _row("blocks", t, 1600.0)]
    found = {c["id"]: c["pass"] for c in scaleout.checks(rows, 100.0)}
    assert found["output t=0.5"] is False and found["output t=0.8"] is False


@pytest.mark.slow
def test_the_runs_on_a_small_corpus_give_the_same_output(tmp_path):
    import subprocess
    import sys
    corpus = tmp_path / "c.jsonl"
    subprocess.run([sys.executable, "-m", "mrjobs.generate", "--vectors", "400", "--seed", "2",
                    "-o", str(corpus), "--no-progress"], check=True)
    compact = scaleout.compact_bytes(corpus, tmp_path)
    rows = scaleout.rows_for(corpus, 0.5, tmp_path, compact, lambda *a: None)
    prefix, blocks = rows
    assert prefix["output_sha256"] == blocks["output_sha256"]
    # the df run, then pairs and rows (every id on one line): as the plan has them
    assert len(prefix["shuffle_by_step"]) == len(prefix["plan_by_step"]) == 3
    assert prefix["shuffle_bytes"] > compact
    assert 0.5 < prefix["plan_shuffle_bytes"] / prefix["shuffle_bytes"] < 2.0
