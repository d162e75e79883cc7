"""The dry run (mrjobs.plan) against real runs of the job: bytes per step,
products and pairs within 25% of the job's counters and shuffle sizes, the
block count equal to the job's own choice.  Results, not timings."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from mrjobs.generate import write_corpus
from mrjobs import plan as P
from mrjobs.plan import cli as plan_cli, sample as plan_sample
from mrjobs.plan.realruns import measure_run

TOL = 0.25


def corpus(path, n, fpv=20, vocab=4000, seed=5):
    write_corpus(str(path), vectors=n, features_per_vector=fpv, vocabulary=vocab, seed=seed,
                 progress=False)
    return str(path)


def options(*argv):
    return plan_cli.parser().parse_args(list(argv) + ["--calibration", os.devnull])


def plan_and_run(args, runner="inline"):
    """The plan of ``args`` (the local runner's reduce tasks, 2 cores) and a real run."""
    o = options(*args, "-r", runner, "--num-cores", "2")
    e = P.plan(o)
    run = measure_run(P.job_args(o), num_cores=2, runner=runner)
    return e, run, {what: (est, real) for what, est, real in P.comparison(e, run)}


def assert_close(rows, *names):
    for name in names:
        est, real = rows[name]
        assert real > 0, name
        assert abs(est / real - 1) <= TOL, (name, est, real)


def step_names(rows):
    return [k for k in rows if k.startswith("step ")]


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    d = tmp_path_factory.mktemp("plan")
    return {"600": corpus(d / "c600.jsonl", 600), "2000": corpus(d / "c2000.jsonl", 2000)}


# -- against real runs ---------------------------------------------------------------

def test_blocks_whole_input(corpora):
    e, run, rows = plan_and_run([corpora["600"], "--measure", "cosine", "--top-k", "5"])
    # the block pairs (the mappers feed them), which write the rows: one block
    # and --top-k (pairs_write_rows), no rows step
    assert e["blocks"] == 1
    assert [s["step"] for s in e["steps"]] == ["pairs"]
    assert len(run["step_bytes"]) == 1
    assert_close(rows, "shuffle bytes", "products computed", "pairs scored", *step_names(rows))
    assert rows["blocks"][0] == rows["blocks"][1]


def test_blocks_sampled(corpora):
    e, run, rows = plan_and_run([corpora["2000"], "--measure", "cosine", "--top-k", "5",
                                 "--sample-lines", "400", "--pair-sample", "300"])
    assert not e["fams"][0].s.complete and e["fams"][0].s.n <= 400
    assert_close(rows, "shuffle bytes", "products computed", "pairs scored", *step_names(rows))
    assert rows["blocks"][0] == rows["blocks"][1]


def test_blocks_max_df_threshold_float32(corpora):
    e, run, rows = plan_and_run([corpora["2000"], "--measure", "jaccard", "--max-df", "60",
                                 "--threshold", "0.05", "--float32", "--blocks", "3",
                                 "--sample-lines", "800"])
    assert [s["step"] for s in e["steps"]] == ["vectors", "pairs", "rows"]
    assert_close(rows, "shuffle bytes", "products computed", "pairs scored", *step_names(rows))
    assert rows["blocks"] == (3, 3)


@pytest.mark.slow
def test_blocks_max_df_join_form(corpora):
    """More than 10 block pairs: the job and the plan take the join form."""
    e, run, rows = plan_and_run([corpora["2000"], "--measure", "jaccard", "--max-df", "60",
                                 "--threshold", "0.05", "--float32", "--blocks", "5",
                                 "--sample-lines", "800"])
    assert [s["step"] for s in e["steps"]] == ["vectors", "df", "regroup", "pairs", "rows"]
    assert len(run["step_bytes"]) == 5
    assert_close(rows, "shuffle bytes", "products computed", "pairs scored", *step_names(rows))
    assert rows["blocks"] == (5, 5)


@pytest.mark.parametrize("runner, blocks, form", [
    ("local", "4", "counts"), ("inline", "5", "join"), ("hadoop", "2", "join"),
    ("emr", "1", "join"),
])
def test_the_plan_models_the_form_the_job_picks(corpora, runner, blocks, form):
    e = P.plan(options(corpora["600"], "--max-df", "40", "--blocks", blocks, "-r", runner,
                       "--reducers", "4"))
    assert e["df_cut_form"] == form
    names = [s["step"] for s in e["steps"]]
    assert names == (["vectors", "pairs", "rows"] if form == "counts" else
                     ["vectors", "df", "regroup", "pairs", "rows"])
    assert json.loads(json.dumps(P.as_json(e)))["df_cut_form"] == form


@pytest.mark.slow
def test_stripes_products(corpora):
    e, run, rows = plan_and_run([corpora["2000"], "--strategy", "stripes", "--top-k", "5",
                                 "--sample-lines", "500", "--pair-sample", "400"])
    # the unbiased estimate of sum df(df-1)/2 against the job's exact count
    assert_close(rows, "products (partial products)", "pairs scored", "shuffle bytes",
                 *step_names(rows))


def test_queries(corpora, tmp_path):
    with open(corpora["2000"], "rb") as f:
        lines = f.readlines()
    q, c = tmp_path / "q.jsonl", tmp_path / "c.jsonl"
    q.write_bytes(b"".join(lines[:200]))     # queries and corpus share the features
    c.write_bytes(b"".join(lines[200:]))
    e, run, rows = plan_and_run([str(c), "--queries", str(q), "--measure", "cosine",
                                 "--top-k", "3", "--sample-lines", "600"])
    assert_close(rows, "shuffle bytes", "products computed", "pairs scored", *step_names(rows))
    assert rows["blocks"][0] == rows["blocks"][1]


@pytest.mark.slow
def test_local_runner_default_blocks(corpora):
    """The plan's block count is the job's own default (local runner, 2 cores)."""
    e, run, rows = plan_and_run([corpora["600"]], runner="local")
    assert rows["blocks"][0] == rows["blocks"][1] == e["blocks"]
    assert_close(rows, "shuffle bytes", *step_names(rows))


def test_extrapolation_from_a_part(corpora, tmp_path):
    """A plan from the first quarter of a corpus with --vectors N estimates the
    run of the whole."""
    with open(corpora["2000"], "rb") as f:
        head = f.readlines()[:500]
    part = tmp_path / "part.jsonl"
    part.write_bytes(b"".join(head))
    o = options(str(part), "--measure", "cosine", "--top-k", "5", "--vectors", "2000",
                "--blocks", "2")
    e = P.plan(o)
    run = measure_run([corpora["2000"], "--measure", "cosine", "--top-k", "5",
                         "--blocks", "2"], runner="inline")
    rows = {w: (a, b) for w, a, b in P.comparison(e, run)}
    assert_close(rows, "shuffle bytes", "products computed", "pairs scored")


# -- the estimators and the sample ---------------------------------------------------

def test_products_estimator_is_unbiased_where_the_naive_one_is_not(tmp_path):
    """Σ d(d-1)/2 · N(N-1)/(n(n-1)) over samples of a corpus averages to the exact
    Σ df(df-1)/2; the naive Σ (d N/n)²/2 overshoots where features are rare."""
    path = str(tmp_path / "c.jsonl")
    write_corpus(path, vectors=3000, features_per_vector=10, vocabulary=30000, zipf=0.5,
                 seed=3, progress=False)
    full = P.read_sample([path], 10 ** 6)
    _, df = np.unique(full.feats, return_counts=True)
    exact = float((df * (df - 1) / 2).sum())
    ours, naive = [], []
    for lines in (290, 300, 310, 320):
        o = options(path, "--sample-lines", str(lines), "--pair-sample", "50")
        s = P.read_sample([path], lines)
        e = P.estimate(s, None, o)
        ours.append(e["products"])
        _, d = np.unique(s.feats, return_counts=True)
        naive.append(float(((d * 3000 / s.n) ** 2 / 2).sum()))
    assert abs(np.mean(ours) / exact - 1) < 0.15
    assert np.mean(naive) / exact > 3


def test_sample_is_deterministic_spread_and_whole_when_small(tmp_path):
    path = corpus(tmp_path / "c.jsonl", 1000, fpv=5)
    a, b = P.read_sample([path], 100), P.read_sample([path], 100)
    assert a.docs.tobytes() == b.docs.tobytes() and not a.complete
    assert 95 <= a.n <= 100
    lines = open(path, "rb").read().splitlines()
    ids = [json.loads(l)["id"] for l in lines]
    import uuid
    positions = sorted(ids.index(str(uuid.UUID(bytes=a.docs[i:i + 1].tobytes())))
                       for i in range(a.n))
    assert positions[0] < 20 and positions[-1] > 980   # spread over the whole file
    whole = P.read_sample([path], 10 ** 5)
    assert whole.complete and whole.n == 1000 and whole.vectors() == 1000
    assert abs(a.vectors() / 1000 - 1) < 0.1


def test_offsets_follow_file_sizes():
    offs = plan_sample._offsets([1000, 3000, 0], 8)
    assert [len(o) for o in offs] == [2, 6, 0]
    assert offs[0] == [250, 750]


def test_vectors_extrapolation_grows_products_quadratically(corpora):
    e1 = P.plan(options(corpora["600"], "--vectors", "600", "--blocks", "1"))
    e2 = P.plan(options(corpora["600"], "--vectors", "6000", "--blocks", "1"))
    ratio = e2["products"] / e1["products"]
    assert abs(ratio / (6000 * 5999 / (600 * 599)) - 1) < 1e-9
    # the first step carries every entry of every vector
    assert e2["steps"][0]["entries"] == pytest.approx(10 * e1["steps"][0]["entries"])


@pytest.mark.slow
@pytest.mark.smoke
def test_cli_prints_a_plan_and_clear_errors(corpora, tmp_path):
    cmd = [sys.executable, "-m", "mrjobs.plan", corpora["600"], "--reducers", "8",
           "--reducer-memory", "1", "--calibration", os.devnull]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    assert "block pairs" in out and "step 2 rows" in out
    assert "more than --reducer-memory 1 MB" in out
    js = subprocess.run(cmd + ["--json"], capture_output=True, text=True, check=True).stdout
    assert json.loads(js)["plan"]["blocks"] >= 1
    bad = subprocess.run([sys.executable, "-m", "mrjobs.plan", str(tmp_path / "nosuch")],
                         capture_output=True, text=True)
    assert bad.returncode == 1
    assert bad.stderr.strip() == "mrsparse plan: error: input path %s does not exist" % (
        tmp_path / "nosuch")
    hdfs = subprocess.run([sys.executable, "-m", "mrjobs.plan", "hdfs:///x"],
                          capture_output=True, text=True)
    assert hdfs.returncode == 1 and "reads local files" in hdfs.stderr
    # the job's own option checks, as a usage error
    both = subprocess.run([sys.executable, "-m", "mrjobs.plan", corpora["600"], "--queries",
                           corpora["600"], "--include-self"], capture_output=True, text=True)
    assert both.returncode == 2 and "Traceback" not in both.stderr
    assert "--include-self: does not apply with --queries" in both.stderr


@pytest.mark.slow
def test_large_top_k_takes_fewer_blocks_in_the_job_and_the_plan(tmp_path):
    # past --top-k 4x a vector's entries the partial rows outweigh what more
    # block pairs share out: the job's default and the plan take the fewest
    # blocks memory allows, and the plan does not call that idle reducers
    from mrjobs.dot_products import MRSparseDotProducts
    # (tanimoto: a measure one block does not score on threads); with cosine,
    # one block scores on the cores (sizing.one_block_pays: at a small --top-k
    # wherever it fits), in the job and in the plan
    path = corpus(tmp_path / "c6000.jsonl", 6000)  # ~120,000 entries: not small
    blocks = {}
    for measure, k in (("tanimoto", 10), ("tanimoto", 200), ("cosine", 1), ("cosine", 10)):
        args = [path, "--measure", measure, "--top-k", str(k)]
        o = options(*args, "-r", "local", "--num-cores", "2")
        e = P.plan(o)
        job = MRSparseDotProducts(args + ["-r", "local", "--num-cores", "2"])
        blocks[measure, k] = (e["blocks"], job._default_blocks())
        if blocks[measure, k] == (1, 1):
            assert "reducers of the pairs step idle" not in P.format_plan(e, o)
    assert blocks == {("tanimoto", 10): (3, 3), ("tanimoto", 200): (1, 1),
                      ("cosine", 1): (1, 1), ("cosine", 10): (1, 1)}


@pytest.mark.slow
@pytest.mark.parametrize("args", [["--max-df", "2000", "--blocks", "4"],
                                  ["--max-df", "2000", "--strategy", "stripes"],
                                  ["--blocks", "3"]], ids=" ".join)
def test_the_reduce_tasks_planned_by_step_are_the_local_runs(tmp_path, args):
    # each step's count as the local runner takes it (stripes: mrjob's 2 a core)
    path = corpus(tmp_path / "c.jsonl", 8000, fpv=50, vocab=100000)
    o = options(path, "--top-k", "10", *args, "-r", "local", "--num-cores", "2")
    planned = [s["reducers"] for s in P.plan(o)["steps"]]
    subprocess.run([sys.executable, "-m", "mrjobs.dot_products", path, "--top-k", "10", *args,
                    "-r", "local", "--num-cores", "2", "--quiet", "--cleanup", "NONE",
                    "--local-tmp-dir", str(tmp_path / "run")], check=True,
                   stdout=subprocess.DEVNULL, cwd=tmp_path)
    steps = sorted((tmp_path / "run").glob("*/step/*"))
    used = [len(list(s.glob("reducer/0*"))) for s in steps]
    assert planned == used and max(used) > 1
