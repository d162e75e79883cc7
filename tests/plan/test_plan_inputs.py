"""Issue 44, item 9 (part): the planner plans ``--input-format postings``
(the job's temp-disk check goes through it) and takes a negative number or
``-inf`` as an option's value, as the job's checks then judge it.  Results
against the job's own run and messages."""
import os
import subprocess
import sys

import pytest

from mrjobs.generate import write_corpus
from mrjobs import plan as P
from mrjobs.plan import cli as plan_cli
from mrjobs.plan.realruns import measure_run


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("plan-inputs")
    vectors = d / "c.jsonl"
    write_corpus(str(vectors), vectors=1500, seed=13, progress=False)
    postings = d / "c.postings"
    with open(postings, "wb") as f:
        subprocess.run([sys.executable, "-m", "mrjobs.inverted_index", str(vectors),
                        "--output-format", "compact", "-q"], stdout=f, check=True)
    return str(vectors), str(postings)


def _options(*argv):
    return plan_cli.parse_options([*argv, "--calibration", os.devnull, "-r", "local",
                                   "--num-cores", "2"])


@pytest.mark.slow
def test_postings_planned_as_the_vectors_they_hold(corpus):
    """Read whole, the posting lists give the vectors' own sample: the same
    entries and products; and the plan's bytes and blocks are the job's run's."""
    vectors, postings = corpus
    args = ("--measure", "cosine", "--top-k", "5")
    e_vec = P.plan(_options(vectors, *args))
    o = _options(postings, "--input-format", "postings", *args)
    e = P.plan(o)
    assert e["fams"][0].s.n == e_vec["fams"][0].s.n == 1500
    assert e["kept_entries"] == e_vec["kept_entries"]
    assert e["products"] == e_vec["products"]
    run = measure_run(P.job_args(o), num_cores=2)
    rows = {what: (est, real) for what, est, real in P.comparison(e, run)}
    assert rows["blocks"][0] == rows["blocks"][1]
    for name in ("shuffle bytes", "products computed", "temporary disk"):
        est, real = rows[name]
        assert real > 0 and abs(est / real - 1) <= 0.25, (name, est, real)


@pytest.mark.slow
def test_postings_sampled_by_documents(corpus):
    """With fewer sample lines than documents, a hash-chosen share of the
    documents, whole: the vector count and entries within 15%."""
    vectors, postings = corpus
    e = P.plan(_options(postings, "--input-format", "postings", "--sample-lines", "200"))
    s = e["fams"][0].s
    assert not s.complete and s.n < 1500
    assert e["fams"][0].N == pytest.approx(1500, rel=0.15)
    full = P.plan(_options(vectors))
    assert e["kept_entries"] == pytest.approx(full["kept_entries"], rel=0.15)


def _plan_cmd(*argv):
    return subprocess.run([sys.executable, "-m", "mrjobs.plan", *argv], capture_output=True,
                          text=True)


@pytest.mark.parametrize("form", [("--threshold", "-inf"), ("--threshold=-inf",)])
@pytest.mark.slow
def test_minus_inf_is_a_value_judged_as_the_job_judges_it(corpus, form):
    """``--threshold -inf`` is the option's value (not "expected one
    argument"), refused as the job refuses ``--threshold=-inf``."""
    job = subprocess.run([sys.executable, "-m", "mrjobs.dot_products", corpus[0],
                          "--threshold=-inf"], capture_output=True, text=True)
    plan = _plan_cmd(corpus[0], *form)
    assert plan.returncode == job.returncode == 2
    said = plan.stderr.strip().splitlines()[-1]
    assert said.endswith("argument --threshold: must be a finite number, not -inf"), said
    assert job.stderr.strip().splitlines()[-1].split(": error: ")[1] == said.split(
        ": error: ")[1]


@pytest.mark.slow
def test_negative_thresholds_are_planned(corpus):
    for value in ("-0.5", "-1e-3", "-1"):
        plan = _plan_cmd(corpus[0], "--measure", "pearson", "--threshold", value)
        assert plan.returncode == 0, (value, plan.stderr[-300:])
        assert "pairs sharing a feature" in plan.stdout
