"""bench.shorttext: its targets from its rows (the WordNet corpus itself comes
from a Debian package: ``make bench`` only)."""
from bench import shorttext

T = shorttext.THRESHOLD


def _rows(job=10.0, rs=12.0, compact=7.0, pruned=5.0, full=11.0, same=True, tied=3):
    cmp = {"lines_differing": 0, "lines_tied_at_cut": tied, "max_rel_diff": 1e-15,
           "scores_ok_but_ties": True}
    return [{"name": "job, JSON", "wall_s": job, "cpu_s": job * 1.5, "sha256": "a"},
            {"name": "job, compact", "wall_s": compact, "cpu_s": compact, "sha256": "a"},
            {"name": "job, t=%s pruned" % T, "wall_s": pruned, "cpu_s": 1.0, "sha256": "b"},
            {"name": "job, t=%s --no-prune" % T, "wall_s": full, "cpu_s": 1.0,
             "sha256": "b" if same else "c"},
            {"name": "sp_matmul_rs", "wall_s": rs, "cpu_s": rs * 2, "compare": cmp},
            {"name": "sparse_dot_topn", "wall_s": rs, "cpu_s": rs, "compare": cmp}]


def _ok(**kw):
    return {c["id"]: c["pass"] for c in shorttext.checks(_rows(**kw))}


def test_the_targets_pass_and_fail_on_their_own_numbers():
    ok = _ok()
    assert all(ok.values()) and len(ok) == 5
    assert not _ok(job=13.0)["short top-10 vs sp_matmul_rs"]
    assert not _ok(compact=9.0)["short compact vs JSON"]
    assert not _ok(full=9.0)["short t=%s pruning" % T]
    assert not _ok(same=False)["short t=%s pruning" % T]


def test_a_peer_not_installed_leaves_its_rows_out():
    rows = [r for r in _rows() if r["name"] != "sp_matmul_rs"]
    ids = {c["id"] for c in shorttext.checks(rows)}
    assert "short top-10 vs sp_matmul_rs" not in ids and "short top-10 = sparse_dot_topn" in ids
