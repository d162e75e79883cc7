"""The job benchmark's plumbing, byte counts and agreement (never its speed).

One run of ``python -m bench.jobs --quick`` is shared by the tests that read
its JSON (a failed run is reported once, see ``tests/bench_helpers.py``): both
strategies and the scipy floor must find the same neighbours, sparse_dot_topn
the same scores, the counters must match the corpus, the shuffle byte counts
must be real file sizes that add up, task memory must be sampled, and every
target must be reported.  The text corpus builder is tested on files of its own.
"""
import json
import re
import sys
from pathlib import Path

import pytest

from mrjobs.runtime import taskfork
from mrjobs.strategies.scheme import pairs_write_rows

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
if str(REPO_ROOT) not in sys.path:  # ``bench`` is a folder of the repo, not installed
    sys.path.insert(0, str(REPO_ROOT))

from bench import common, floor, jobs, measure, peers, profiling, textcorpus  # noqa: E402
from tests.bench_helpers import quick_run_fixture  # noqa: E402

ROW_FIELDS = {
    "corpus", "family", "vectors", "strategy", "runner", "variant", "top_k", "command",
    "blocks", "steps",
    "wall_s", "cpu_s", "user_s", "sys_s", "step_wall_s", "max_rss_bytes",
    "task_peak_rss_bytes", "task_peaks", "task_processes_seen", "largest_process",
    "tree_rss_peak_bytes",
    "tree_pss_peak_bytes", "memory_samples", "shuffle_bytes", "shuffle_bytes_by_step",
    "output_lines", "output_pairs", "output_bytes", "output_sha256", "lines_sha256",
    "neighbours_sha256", "score_sum", "work", "counters", "wall_vs_floor", "cpu_vs_floor",
    "wall_vs_topn", "cpu_vs_topn", "wall_vs_rs", "cpu_vs_rs",
    "wall_vs_stripes", "cpu_vs_stripes", "shuffle_vs_estimate", "shuffle_mb",
    "task_peak_mb", "max_rss_mb", "tree_pss_mb", "input_bytes", "temp_disk_peak_bytes",
    "temp_disk_samples", "temp_disk_mb", "temp_disk_vs_input",
}
#: steps of the job: vectors + the strategy's + rows, but blocks without
#: --max-df (the mappers feed the block pairs); the quick runs are inline
#: and local with few block pairs, so blocks' --max-df takes the count tables
STEPS = {("blocks", False): 2, ("blocks", True): 3, ("stripes", False): 4,
         ("stripes", True): 4}


def _steps(r):
    """The steps of a run: :data:`STEPS`, less the rows step where one block
    writes the rows (:func:`~mrjobs.strategies.scheme.pairs_write_rows`)."""
    cut = _spec(r["corpus"]).max_df is not None
    return STEPS[r["strategy"], cut] - (
        r["strategy"] == "blocks" and pairs_write_rows(r["blocks"], r["top_k"], False))


# the job runs' files go to {out}/work, removed with the rest at teardown
#: (each task a fresh interpreter: the memory sampler, every 0.2 s, sees it; a task
#: the local runner forks lives tens of milliseconds on these small corpora)
quick_run = quick_run_fixture("jobs", "--workdir", "{out}/work", env={taskfork.ENV: "0"})


def _rows(result):
    return {(r["corpus"], r["strategy"], r["runner"], r["variant"]): r
            for r in result["results"]}


def _pruned(r):
    return r["variant"].startswith("t") and not r["variant"].endswith("no-prune")


def _spec(name):
    return {c.name: c for c in jobs.QUICK_CORPORA}[name]


def _strategies(name):
    """The strategies the quick plan runs on a corpus: not stripes on text."""
    return ("blocks",) if _spec(name).source == "text" else jobs.STRATEGIES


@pytest.mark.slow
def test_quick_run_writes_json_chart_and_profiles(quick_run):
    out, result, _ = quick_run.get()
    assert result["benchmark"] == "jobs"
    s = result["settings"]
    assert s["quick"] is True
    assert (s["measure"], s["top_k"], s["num_cores"]) == (jobs.MEASURE, jobs.TOP_K,
                                                           jobs.NUM_CORES)
    assert s["workloads"] == jobs.WORKLOADS["quick"]
    assert (out / "jobs.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = (out / "jobs-profile.txt").read_text()
    assert [(p["strategy"], p["corpus"]) for p in result["profiles"]] == list(
        jobs.PROFILES["quick"])
    for p in result["profiles"]:
        assert "Profile: --strategy %s" % p["strategy"] in text
        assert p["profiled_total_s"] > 0
        assert "ncalls" in p["top_tottime"] and "ncalls" in p["top_cumulative"]
        assert [x["part"] for x in p["parts"]] == [x[0] for x in profiling.PROFILE_PARTS]
        found = {x["part"] for x in p["parts"] if x["cum_s"] is not None}
        # the spec names functions that exist and ran: each strategy's own
        # reducers, the vectors step and the rows step (none where one block
        # writes the rows), the output
        assert "output: NeighboursJSONProtocol.write" in found
        if p["strategy"] == "stripes":
            assert "rows reducer: join partial rows, top-k" in found
        assert "vectors mapper: parse, check input" in found
        if p["strategy"] == "blocks":
            assert "blocks: block-pair reducer" in found
            assert not any(f.startswith("stripes:") for f in found)
        else:
            assert {"stripes: postings -> stripes", "stripes: sum stripes, score"} <= found
            assert not any(f.startswith("blocks:") for f in found)


@pytest.mark.slow
def test_quick_run_has_one_complete_row_per_planned_run(quick_run):
    _, result, _ = quick_run.get()
    rows = _rows(result)
    assert list(rows) == [tuple(r) for r in result["settings"]["runs"]]
    assert set(rows) == set(jobs.QUICK_RUNS)
    for r in result["results"]:
        assert set(r) == ROW_FIELDS
        assert r["wall_s"] > 0 and r["cpu_s"] > 0 and r["max_rss_bytes"] > 0
        assert r["cpu_s"] == pytest.approx(r["user_s"] + r["sys_s"])
        assert r["steps"] == len(r["step_wall_s"]) == _steps(r)
        cut = _spec(r["corpus"]).max_df is not None
        assert "--strategy %s" % r["strategy"] in r["command"]
        assert "-r %s" % r["runner"] in r["command"]
        assert "--measure %s %s -r" % (jobs.MEASURE, " ".join(jobs.VARIANTS[r["variant"]])) in (
            r["command"])
        assert ("--max-df" in r["command"]) == cut


@pytest.mark.slow
def test_shuffle_bytes_are_positive_per_step_and_add_up(quick_run):
    _, result, _ = quick_run.get()
    for r in result["results"]:
        by_step = r["shuffle_bytes_by_step"]
        assert len(by_step) == r["steps"] and all(b > 0 for b in by_step)
        assert r["shuffle_bytes"] == sum(by_step)
        assert r["shuffle_mb"] == pytest.approx(r["shuffle_bytes"] / 1e6)
        st = result["corpora"][r["corpus"]]
        assert r["shuffle_vs_estimate"] == pytest.approx(
            r["shuffle_bytes"] / st["stripes_estimate_bytes"])


@pytest.mark.slow
def test_both_strategies_and_the_floor_find_the_same_neighbours(quick_run):
    _, result, _ = quick_run.get()
    rows = _rows(result)
    corpora = {c for c, _, _, _ in rows}
    assert corpora == {c.name for c in jobs.QUICK_CORPORA}
    for name in corpora:
        st = result["corpora"][name]
        runs = [r for (c, _, _, v), r in rows.items() if c == name and not v]
        assert {r["strategy"] for r in runs} == set(_strategies(name))
        for r in runs:
            assert r["neighbours_sha256"] == st["floor_neighbours_sha256"]
            assert r["output_lines"] == st["floor_output_lines"] > 0
            assert r["output_pairs"] == st["floor_output_pairs"]
            assert r["output_pairs"] <= jobs.TOP_K * r["output_lines"]
            assert r["score_sum"] == pytest.approx(st["floor_score_sum"], rel=1e-12)
    # blocks gives the same bytes on either runner (a small input gets one
    # block on both; other block counts: tests/runtime/test_testhooks_compute.py)
    local = rows["dense-quick", "blocks", "local", ""]
    inline = rows["dense-quick", "blocks", "inline", ""]
    assert local["blocks"] >= 1 and inline["blocks"] >= 1
    assert local["lines_sha256"] == inline["lines_sha256"]
    # top-k 100: the floor's lists at k = 100, and more of them than at 10
    k100, refs = rows["dense-quick", "blocks", "inline", "k100"], result["corpora"][
        "dense-quick"]["k_refs"]["100"]
    assert k100["neighbours_sha256"] == refs["floor_neighbours_sha256"]
    assert k100["output_pairs"] == refs["floor_output_pairs"] > inline["output_pairs"]
    # a threshold: the same bytes with and without pruning
    pruned = rows["text-q400", "blocks", "inline", "t0.5"]
    full = rows["text-q400", "blocks", "inline", "t0.5 no-prune"]
    assert pruned["output_sha256"] == full["output_sha256"] and pruned["output_pairs"] > 0
    # from the corpus converted to compact: the same bytes as from JSON
    compact = rows["dense-quick", "blocks", "inline", "compact"]
    assert compact["output_sha256"] == inline["output_sha256"]
    assert "--input-format compact" in compact["command"]
    assert ".compact " in compact["command"] and compact["input_bytes"] < inline["input_bytes"]


@pytest.mark.slow
def test_temporary_disk_is_sampled_per_run(quick_run):
    _, result, _ = quick_run.get()
    for r in result["results"]:
        # the runner's tmp dir holds at least a step's sorted input: every
        # step's on the inline runner (kept), the largest step's on the local
        # runner, which removes each file once read
        least = max(r["shuffle_bytes_by_step"]) if r["runner"] == "local" else r["shuffle_bytes"]
        assert r["temp_disk_peak_bytes"] >= least > 0
        assert r["temp_disk_samples"] >= 2
        assert r["temp_disk_vs_input"] == pytest.approx(r["temp_disk_peak_bytes"]
                                                        / r["input_bytes"])


def _count_tables(r):
    """True for a blocks run whose --max-df cut took the count-table form
    (three steps; the join takes five)."""
    return (r["strategy"] == "blocks" and _spec(r["corpus"]).max_df is not None
            and r["steps"] == _steps(r))


@pytest.mark.slow
def test_job_counters_match_the_corpus_computed_with_scipy(quick_run):
    _, result, _ = quick_run.get()
    for r in result["results"]:
        st = result["corpora"][r["corpus"]]
        w = r["work"]
        # a pruned run scores only the pairs it computes
        assert (w["pairs scored"] <= st["pairs"]) if _pruned(r) else (
            w["pairs scored"] == st["pairs"] > 0)
        if r["strategy"] == "blocks":
            assert w["block pairs"] == r["blocks"] * (r["blocks"] + 1) // 2
            if _count_tables(r):
                # a vectors-step task leaves out only the features it alone
                # counted over --max-df; the block pairs drop the rest
                assert st["kept_nnz"] * r["blocks"] <= w["block entries sent"] <= (
                    st["nnz"] * r["blocks"])
                assert w["df count entries sent"] > 0
            else:
                assert w["block entries sent"] == st["kept_nnz"] * r["blocks"]
            assert w["products computed"] >= (w["pairs scored"] if _pruned(r) else st["pairs"])
        else:
            assert w["partial products"] == st["partial_products"] > 0
            assert w["stripe entries emitted"] > 0
    for c in result["consistency"]:
        assert c["pairs_scored_match"] in (True, None) and c["work_match"] is True
        assert c["same_neighbours_as_floor"] is (None if c["run"].split()[-1].startswith(
            ("t0", "no-prune")) else True)
        assert c["same_neighbours_as_blocks"] in (True, None)


@pytest.mark.slow
def test_corpora_stats_and_the_floor(quick_run):
    _, result, _ = quick_run.get()
    assert list(result["corpora"]) == [c.name for c in jobs.QUICK_CORPORA]
    for name, st in result["corpora"].items():
        spec = _spec(name)
        assert st["vectors"] == spec.vectors and st["family"] == spec.family
        assert st["floor_wall_s"] == min(st["floor_wall_s_all"]) > 0
        assert st["floor_passes"] == len(st["floor_wall_s_all"]) == 3
        assert st["sum_df2"] >= 2 * st["partial_products"]
        assert st["stripes_estimate_bytes"] == pytest.approx(
            st["sum_df2"] / 2 * floor.BYTES_PER_PARTIAL_PRODUCT)
        n = st["vectors"]
        assert st["pairs"] <= n * (n - 1) // 2
        # sparse_dot_topn and sp_matmul_rs (2 threads) find the floor's neighbours
        for p in ("topn", "rs"):
            assert st[p + "_wall_s"] > 0 and st[p + "_threads"] == floor.TOPN_THREADS
            assert st[p + "_same_scores_as_floor"] is True
            assert st[p + "_score_sum"] == pytest.approx(st["floor_score_sum"], rel=1e-12)
            assert st[p + "_e2e_wall_s"] > 0 and st[p + "_e2e_cpu_s"] > 0
        if spec.max_df is None:
            assert st["features_dropped"] == 0 and st["kept_nnz"] == st["nnz"]
            assert st["partial_products"] >= st["pairs"]
        else:
            assert st["kept_nnz"] < st["nnz"] and st["features_dropped"] > 0


@pytest.mark.slow
def test_peers_scripts_find_the_jobs_neighbours_on_every_corpus(quick_run):
    missing = [p for p in peers.PEERS if not peers.installed(p)]
    if missing:
        pytest.skip("not installed: %s (pip install -e '.[bench]' installs them)"
                    % ", ".join(missing))
    _, result, stdout = quick_run.get()
    rows = {(r["corpus"], r["who"]): r for r in result["peers"]}
    refs = jobs.peer_reference_runs(jobs.QUICK_RUNS, jobs.PREFERRED_RUNNER["quick"])
    assert set(refs) == {c.name for c in jobs.QUICK_CORPORA}
    for c in jobs.QUICK_CORPORA:
        job = rows[c.name, "job (blocks, %s)" % refs[c.name][2]]
        run = _rows(result)[refs[c.name]]
        assert (job["wall_s"], job["cpu_s"]) == (run["wall_s"], run["cpu_s"])
        assert job["same_neighbours_as_floor"] is True
        for peer in peers.PEERS:
            r = rows[c.name, peer]
            assert r["kind"] == "peer" and r["passes"] == 2 == len(r["wall_s_all"])
            assert "bench.peer_scripts %s" % peer in r["command"]
            assert ("--max-df" in r["command"]) == (c.max_df is not None)
            assert r["same_neighbours_as_job"] is True and r["scores_ok"] is True
            assert r["lines_tied_at_cut"] == r["lines_differing"] == 0
            assert r["same_neighbours_as_floor"] is True
            assert r["job_lines"] == r["peer_lines"] == run["output_lines"]
            assert r["wall_vs_job"] == pytest.approx(r["wall_s"] / job["wall_s"])
            assert 0 < r["product_wall_s"] <= r["wall_s"]
    assert "End to end: the job (blocks, top-10) against each peer's script" in stdout


@pytest.mark.slow
def test_task_memory_is_sampled_per_task(quick_run):
    _, result, _ = quick_run.get()
    for r in result["results"]:
        # VmHWM (sampled) and wait4's maxrss count the same pages a little
        # differently
        assert 0 < r["task_peak_rss_bytes"] <= 1.05 * r["max_rss_bytes"]
        assert r["tree_pss_peak_bytes"] > 0 and r["memory_samples"] > 0
        if r["runner"] == "inline":
            assert r["task_peaks"] == {} and r["task_peak_rss_bytes"] == r["max_rss_bytes"]
        else:
            # tasks of the run's steps, seen by the sampler (one that lives less
            # than a sampling interval can be missed: not all of them)
            kinds = set(r["task_peaks"])
            assert kinds and kinds <= {"step %d %s" % (i + 1, t) for i in range(r["steps"])
                                       for t in ("mapper", "combiner", "reducer")}
            assert r["task_processes_seen"] >= len(kinds)
            assert r["task_peak_rss_bytes"] == max(r["task_peaks"].values())
        assert r["largest_process"]["peak_rss_bytes"] >= r["task_peak_rss_bytes"] or (
            r["runner"] == "inline")


@pytest.mark.slow
def test_quick_run_reports_each_target(quick_run):
    _, result, stdout = quick_run.get()
    w = jobs.WORKLOADS["quick"]
    ids = [c["id"] for c in result["checks"]]
    assert ids == ["floor %s" % w["dense"], "floor %s" % w["W1"], "shuffle %s" % w["dense"],
                   "memory", "stripes %s inline" % w["W1"], "wall %s local" % w["small"],
                   "CPU %s local" % w["tiny"], "text %s inline" % w["text"],
                   "top-k %s k=100" % w["dense"], "prune %s t0.5" % w["prune"],
                   "prune %s top-k %d" % (w["prune"], jobs.TOP_K), "peers %s" % w["dense"],
                   "peers %s" % w["text"], "e2e %s vs topn" % w["dense"],
                   "e2e %s vs rs" % w["dense"], "e2e %s vs rs, real text" % w["dense"],
                   "e2e %s vs topn" % w["text"],
                   "e2e %s compact vs rs" % w["dense"], "temp disk"]
    for c in result["checks"]:
        assert c["measured"] and isinstance(c["pass"], bool)
        assert re.search(r"^%s\s+%s\s" % (re.escape(c["id"]), common.pass_fail(c["pass"])),
                         stdout, re.M)
    assert re.search(r"^total [\d.]+ s", stdout, re.M)


# -- the helpers, on literal input ---------------------------------------------------

def test_parse_counters_reads_mrjobs_logged_counters():
    lines = [(0.0, "Running step 1 of 2..."), (0.1, "Counters: 2"), (0.1, "\tmrsparse work"),
             (0.1, "\t\tpartial products=12"), (0.1, "\t\tpairs scored=3"),
             (1.0, "Running step 2 of 2..."), (1.5, "Counters: 1"),
             (1.5, "\tother group"), (1.5, "\t\tx=y=4")]
    assert measure.parse_counters(lines) == [
        {"mrsparse work": {"partial products": 12, "pairs scored": 3}},
        {"other group": {"x=y": 4}}]
    assert measure.step_times(lines, 3.0) == [1.0, 2.0]


def test_shuffle_bytes_sums_sorted_reducer_input_by_step(tmp_path):
    for step, size in (("000", 5), ("002", 7), ("001", 11)):
        d = tmp_path / "job.x" / "step" / step / "reducer"
        d.mkdir(parents=True)
        (d / "sorted-input").write_bytes(b"x" * size)
        (d / "other").write_bytes(b"y" * 100)
    assert measure.shuffle_bytes(tmp_path) == [5, 11, 7]


def test_task_label_names_mrjob_task_processes_only():
    py = "/venv/bin/python"
    assert measure.task_label([py, "dot_products.py", "--step-num=0", "--mapper",
                            "--top-k", "10"]) == "step 1 mapper"
    assert measure.task_label([py, "dot_products.py", "--step-num=2", "--reducer"]) == (
        "step 3 reducer")
    assert measure.task_label(["/bin/sh", "-ex", "setup-wrapper.sh", py, "dot_products.py",
                            "--step-num=0", "--mapper"]) is None
    assert measure.task_label([py, "-m", "mrjobs.dot_products", "in.jsonl", "-r", "local"]) is None
    assert measure.task_label(["sort", "-t", "\t", "-k", "1,1", "-s"]) is None
    assert measure.task_label(None) is None
    assert measure.process_name(["sort", "-s"]) == "sort"
    assert measure.process_name([py, "-m", "mrjobs.dot_products", "x"]) == (
        "python -m mrjobs.dot_products")
    assert measure.process_name([py, "j.py", "--step-num=0", "--mapper"]) == "step 1 mapper"
    peaks, n = measure.task_peaks([
        ([py, "j.py", "--step-num=1", "--reducer"], 30), ([py, "j.py", "--step-num=0",
                                                          "--mapper"], 10),
        ([py, "j.py", "--step-num=1", "--reducer"], 50), (["sort"], 999)])
    assert peaks == {"step 1 mapper": 10, "step 2 reducer": 50} and n == 3
    assert list(peaks) == ["step 1 mapper", "step 2 reducer"]


def test_blocks_of_inverts_the_block_pair_count():
    assert [jobs.blocks_of(b * (b + 1) // 2) for b in (1, 2, 3, 10, 50)] == [1, 2, 3, 10, 50]
    assert jobs.blocks_of(None) is None and jobs.blocks_of(0) is None


def test_floor_top_k_breaks_ties_by_smaller_column_and_skips_the_diagonal():
    import numpy as np
    import scipy.sparse as sp

    # rows 0..3; row 0 ties with rows 1 and 2 (score 1), row 3 shares nothing
    X = sp.csr_matrix(np.array([[1.0, 0, 0], [1.0, 0, 0], [1.0, 0, 0], [0, 0, 2.0]]))
    r, c, s, products = floor.floor_top_k(X, X.T.tocsr(), 1, "dot")
    assert r.tolist() == [0, 1, 2] and c.tolist() == [1, 0, 0]
    got = {(int(a), int(b)): float(x) for a, b, x in zip(r, c, s)}
    assert got == {(0, 1): 1.0, (1, 0): 1.0, (2, 0): 1.0}
    assert products == 9 + 1  # the 3x3 block of rows 0-2, and row 3 with itself
    keys = np.array([bytes([i]) * 16 for i in range(4)], "S16")
    d = floor.neighbours_digest(keys, *floor.floor_top_k(X, X.T.tocsr(), 2, "dot")[:3])
    assert (d["output_lines"], d["output_pairs"], d["score_sum"]) == (3, 6, 6.0)


@pytest.mark.parametrize("n_rows", [6, 40])
def test_floor_top_k_matches_a_plain_sort(n_rows):
    import numpy as np
    import scipy.sparse as sp

    # few features: most pairs share one; many rare ones: few pairs, rows
    # with fewer than k neighbours
    rng = np.random.default_rng(5)
    feats = 3 if n_rows == 6 else 400
    X = sp.random(n_rows, feats, density=0.5 if n_rows == 6 else 0.01, random_state=rng,
                  format="csr")
    X.data = np.round(X.data * 4) + 1.0  # small integers: exact ties
    r, c, s, _ = floor.floor_top_k(X, X.T.tocsr(), 2, "dot")
    D = (X @ X.T).toarray()
    want = []
    for i in range(n_rows):
        cand = sorted((-D[i, j], j) for j in range(n_rows) if j != i and D[i, j] != 0)
        want += [(i, j, -x) for x, j in cand[:2]]
    assert list(zip(r.tolist(), c.tolist(), s.tolist())) == want


def test_sparse_dot_topn_finds_the_floors_lists():
    import numpy as np
    import scipy.sparse as sp

    X = sp.random(60, 500, density=0.02, random_state=np.random.default_rng(9), format="csr")
    X.data += 0.5  # distinct positive weights: no ties
    r, c, s, _ = floor.floor_top_k(X, X.T.tocsr(), 3, "dot")
    tr, tc, ts = floor.topn_top_k(X, X.T.tocsr(), 3, "dot")
    assert tr.tolist() == r.tolist() and tc.tolist() == c.tolist()
    assert np.allclose(ts, s, rtol=1e-12)


# -- the text corpus -------------------------------------------------------------------

def _sources(root):
    """Five documents: two short, one a duplicate of another; one gzip."""
    import gzip

    texts = {"a.txt": "alpha beta gamma delta epsilon zeta alpha alpha",
             "b.txt": "beta gamma delta epsilon eta theta",
             "c.txt": "too short here",
             "d.txt": "beta gamma delta epsilon eta theta",  # the same as b
             "e.gz": gzip.compress(b"iota kappa lambda alpha beta mu nu")}
    (root / "doc").mkdir(parents=True)
    for name, text in texts.items():
        (root / "doc" / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    return (str(root / "doc"),)


def test_text_corpus_is_deterministic_tfidf_in_the_jobs_input_format(tmp_path):
    import uuid

    import numpy as np
    from mrjobs.parsing import parse_vector

    roots = _sources(tmp_path / "src")
    jsonl, npz = textcorpus.build(3, tmp_path / "c1", roots, stdlib=False)
    again, _ = textcorpus.build(3, tmp_path / "c2", roots, stdlib=False)
    assert jsonl.read_bytes() == again.read_bytes() and npz.exists()
    # in the order of the paths' UUIDs; c too short, the later of b and d a duplicate
    names = [p.name for _, p in textcorpus.source_files(roots, stdlib=False)]
    dup = max("b.txt", "d.txt", key=names.index)
    ids = [str(uuid.uuid5(textcorpus.NAMESPACE, "%s/src/doc/%s#0" % (tmp_path, n)))
           for n in names if n not in ("c.txt", dup)]
    lines = [json.loads(x) for x in jsonl.read_text().splitlines()]
    assert [x["id"] for x in lines] == ids
    a = next(x["features"] for x in lines if x["id"] == str(uuid.uuid5(
        textcorpus.NAMESPACE, "%s/src/doc/a.txt#0" % tmp_path)))
    term = {str(uuid.uuid5(textcorpus.NAMESPACE, t)): t for t in ("alpha", "beta", "zeta")}
    weights = {term[f]: w for f, w in a.items() if f in term}
    # of 3 documents, alpha: tf 3, df 2; beta: tf 1, df 3; zeta: tf 1, df 1
    assert weights == pytest.approx({"alpha": (1 + np.log(3)) * (1 + np.log(4 / 3)),
                                     "beta": 1.0, "zeta": 1 + np.log(2)})
    for line in jsonl.read_bytes().splitlines():
        assert parse_vector(line, "json")[0] is not None
    with np.load(npz) as z:
        assert z["indptr"].tolist() == [0] + np.cumsum(
            [len(x["features"]) for x in lines]).tolist()
    with pytest.raises(ValueError, match="only 3 documents"):
        textcorpus.build(4, tmp_path / "c3", roots, stdlib=False)
