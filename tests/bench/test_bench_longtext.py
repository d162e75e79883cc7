"""bench.longtext: its targets from its rows (the job's wall against both
peers'; the rest as bench.shorttext's)."""
from bench import longtext, shorttext

T = shorttext.THRESHOLD


def _rows(job=1.5, topn=1.2, rs=1.6, compact=1.1, pruned=0.5, full=1.1):
    cmp = {"lines_differing": 0, "lines_tied_at_cut": 1, "max_rel_diff": 1e-15,
           "scores_ok_but_ties": True}
    return [{"name": "job, JSON", "wall_s": job, "cpu_s": job * 3, "sha256": "a"},
            {"name": "job, compact", "wall_s": compact, "cpu_s": compact, "sha256": "a"},
            {"name": "job, t=%s pruned" % T, "wall_s": pruned, "cpu_s": 1.0, "sha256": "b"},
            {"name": "job, t=%s --no-prune" % T, "wall_s": full, "cpu_s": 1.0, "sha256": "b"},
            {"name": "sparse_dot_topn", "wall_s": topn, "cpu_s": topn, "compare": cmp},
            {"name": "sp_matmul_rs", "wall_s": rs, "cpu_s": rs, "compare": cmp}]


def test_the_job_is_held_to_each_peers_wall():
    ok = {c["id"]: c["pass"] for c in longtext.checks(_rows())}
    assert ok == {"long top-10 vs sparse_dot_topn": False, "long top-10 vs sp_matmul_rs": True,
                  "long top-10 = sparse_dot_topn": True, "long top-10 = sp_matmul_rs": True,
                  "long compact vs JSON": True, "long t=%s pruning" % T: True}
    ok = {c["id"]: c["pass"] for c in longtext.checks(_rows(job=1.0, compact=0.7))}
    assert all(ok.values())  # (the job's CPU, 3x its wall here, is not held)
