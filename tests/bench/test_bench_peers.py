"""The peers' scripts give the job's answer; the kernel benchmark counts right.

Each peer's script (:mod:`bench.peer_scripts`) runs on small generated
corpora (one with ``--max-df``) and its lines must name the same neighbours
as the job's output, in the same order, scores within 1e-9 relative.  A
peer whose package is not installed is skipped, with the reason.  No timing
is asserted.
"""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
if str(REPO_ROOT) not in sys.path:  # ``bench`` is a folder of the repo, not installed
    sys.path.insert(0, str(REPO_ROOT))

from bench import peer_runs, peer_scripts, peers  # noqa: E402

#: (name, generator options, --max-df)
CORPORA = {"zipf-200": (dict(vectors=200, features_per_vector=50, vocabulary=20000, zipf=1.1,
                             seed=2), None),
           "zipf-300-cut": (dict(vectors=300, features_per_vector=30, vocabulary=5000, zipf=1.1,
                                 seed=1), 60)}


def _needs(peer):
    if not peer_runs.installed(peer):
        pytest.skip("%s is not installed (pip install -e '.[bench]' installs it)" % peer)


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    """``{name: (input path, job output path, max_df)}``: each corpus and the
    job's answer (inline runner, cosine, top-10)."""
    from examples.generate import write_corpus

    d = tmp_path_factory.mktemp("peers")
    out = {}
    for name, (gen, max_df) in CORPORA.items():
        path = d / ("%s.jsonl" % name)
        write_corpus(str(path), fmt="json", edge_cases=False, progress=False, **gen)
        cmd = [sys.executable, "-m", "mrjobs.dot_products", str(path), "--measure", "cosine",
               "--top-k", "10", "-r", "inline", "--local-tmp-dir", str(d / "tmp")]
        cmd += ["--max-df", str(max_df)] if max_df is not None else []
        job_out = d / ("%s.job" % name)
        with open(job_out, "wb") as f:
            subprocess.run(cmd, stdout=f, stderr=subprocess.DEVNULL, check=True, cwd=REPO_ROOT)
        out[name] = (path, job_out, max_df)
    return out


@pytest.mark.parametrize("corpus", sorted(CORPORA))
@pytest.mark.parametrize("peer", sorted(peer_scripts.PRODUCTS))
@pytest.mark.slow
@pytest.mark.smoke
def test_peer_script_finds_the_jobs_neighbours(corpora, tmp_path, peer, corpus):
    _needs(peer)
    path, job_out, max_df = corpora[corpus]
    out = tmp_path / "peer.out"
    phases = peer_scripts.run(peer, path, out, top_k=10, threads=2, max_df=max_df)
    assert list(phases) == ["parse", "matrix", "product", "select", "write"]
    c = peer_runs.compare_outputs(job_out, out)
    assert c["job_lines"] == c["peer_lines"] > 0
    assert c["same_neighbours"] and c["same_order"], c
    assert c["lines_tied_at_cut"] == c["lines_differing"] == 0
    assert c["max_rel_diff"] <= 1e-9 and c["scores_ok"]
    # the job's own format: a quoted UUID, a tab, a JSON object, best first
    for line in out.read_text().splitlines():
        key, value = line.split("\t")
        row = json.loads(value)
        assert len(json.loads(key)) == 36 and 0 < len(row) <= 10
        assert list(row.values()) == sorted(row.values(), reverse=True)
        assert json.loads(key) not in row


@pytest.mark.slow
def test_run_peer_measures_a_child_and_digests_its_output(corpora, tmp_path):
    peer = "sp_matmul_rs" if peer_runs.installed("sp_matmul_rs") else "sparse_dot_topn"
    _needs(peer)
    path, job_out, _ = corpora["zipf-200"]
    r = peer_runs.run_peer(peer, path, tmp_path / "out", passes=2)
    assert r["passes"] == len(r["wall_s_all"]) == len(r["cpu_s_all"]) == 2
    assert r["wall_s"] == min(r["wall_s_all"]) > 0 and r["cpu_s"] == min(r["cpu_s_all"]) > 0
    assert set(r["phases"]) == {"parse", "matrix", "product", "select", "write"}
    assert "--threads 2" in r["command"] and r["output_lines"] == 200
    from bench import measure

    assert r["neighbours_sha256"] == measure.read_output(job_out)["neighbours_sha256"]


def test_compare_outputs_tells_a_different_neighbour_and_a_far_score(tmp_path):
    a, b = "a" * 36, "b" * 36
    job = tmp_path / "job"
    job.write_text('"%s"\t{"%s": 0.5}\n"%s"\t{"%s": 0.5}\n' % (a, b, b, a))
    near = tmp_path / "near"
    near.write_text('"%s"\t{"%s": 0.5000000000001}\n"%s"\t{"%s": 0.5}\n' % (b, a, a, b))
    c = peer_runs.compare_outputs(job, near)
    assert c["same_neighbours"] and c["scores_ok"] and c["lines_differing"] == 0
    far = tmp_path / "far"
    far.write_text('"%s"\t{"%s": 0.5001}\n"%s"\t{"%s": 0.5}\n' % (a, b, b, a))
    c = peer_runs.compare_outputs(job, far)
    assert c["same_neighbours"] and not c["scores_ok"] and c["max_rel_diff"] > 1e-9
    other = tmp_path / "other"
    other.write_text('"%s"\t{"%s": 0.5}\n' % (a, b))
    c = peer_runs.compare_outputs(job, other)
    assert not c["same_neighbours"] and c["lines_differing"] == 1 and c["peer_lines"] == 1


def test_compare_outputs_tells_a_tie_at_the_cut_from_another_neighbour(tmp_path):
    a, b, c, d = ("%s" % x * 36 for x in "abcd")
    job = tmp_path / "job"
    # a's 2 best: b, then c and d tied at 0.25 (the job keeps c, the smaller)
    job.write_text('"%s"\t{"%s": 0.5, "%s": 0.25}\n' % (a, b, c))
    tied = tmp_path / "tied"
    tied.write_text('"%s"\t{"%s": 0.5, "%s": 0.25000000000000006}\n' % (a, b, d))
    t = peer_runs.compare_outputs(job, tied)
    assert (t["lines_tied_at_cut"], t["lines_differing"]) == (1, 0)
    assert not t["same_neighbours"] and not t["scores_ok"]
    assert t["same_but_ties"] and t["scores_ok_but_ties"]
    other = tmp_path / "other"  # d in place of b: not a tie
    other.write_text('"%s"\t{"%s": 0.5, "%s": 0.25}\n' % (a, d, c))
    o = peer_runs.compare_outputs(job, other)
    assert (o["lines_tied_at_cut"], o["lines_differing"]) == (0, 1)
    assert not o["same_but_ties"] and not o["scores_ok_but_ties"]


def test_block_counts_count_both_ways():
    import scipy.sparse as sp

    # features held by 3, 2 and 1 rows; row 3 empty
    A = sp.csr_matrix(np.array([[1.0, 1, 0], [1, 0, 0], [1, 1, 1], [0, 0, 0]]))
    c = peers.block_counts(A)
    assert c["upper_madds"] == 3 + 1 + 0 and c["full_madds"] == 9 + 4 + 1
    assert c["upper_pairs"] == 3 and c["full_cells"] == 9


def test_kernel_rows_on_a_small_zipf_block():
    from mrjobs.strategies.scheme import block_of

    ids, A = peers.zipf_block(dict(vectors=300, features_per_vector=20, vocabulary=3000,
                                   zipf=1.1, seed=3), 2, 1)
    assert all(block_of(x.ljust(16, b"\0"), 2) == 1 for x in ids.tolist())
    assert (ids[1:] > ids[:-1]).all() and 100 < A.shape[0] < 200
    assert np.allclose(np.asarray(A.multiply(A).sum(axis=1)).ravel(), 1.0)
    counts, rows = peers.kernel_rows(ids, A, 10, passes=1)
    by = {r["kernel"]: r for r in rows}
    from mrjobs import _c

    if _c.C is not None:
        assert counts["pair_best_products_match"] is True
        assert by["mrsparse pair_best (C)"]["products"] == counts["upper_pairs"]
        assert by["mrsparse dots() alone (C)"]["products"] == counts["upper_pairs"]
    for peer in peer_scripts.PRODUCTS:
        if peer_runs.installed(peer):
            assert by[peer]["products"] == counts["full_cells"]
            assert by[peer]["madds"] == counts["full_madds"]
            assert by[peer]["same_top_k"] in (True, None if _c.C is None else True)
    for r in rows:
        assert r["cpu_s"] > 0 and r["products_per_cpu_s"] > 0
