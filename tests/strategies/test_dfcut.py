"""--max-df under the blocks strategy: its two forms (count tables the vectors
step sends to the block pairs, three steps; or the df and regroup steps, five),
the rule that picks one per job, the same bytes and counters from both, the
stripes strategy's neighbours and df-cut counters, and the count tables on the
wire."""
import uuid

import numpy as np
import pytest

from mrcodecs import ID_DTYPE
from mrcodecs.jobwire import JobProtocol, Stripe
from mrjobs.strategies.sizing import df_cut_form
from mrjobs.strategies.combining import FeatureCounts
from mrjobs.counters import Counters
from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.strategies.postings import PostingAssembler
from mrjobs.jobprotocols import JSONStripeProtocol
from tests import jobs_helpers
from tests.jobs_helpers import (as_dict, assert_scores_close, corpus, oracle, read_corpus,
                                top_k)

LINES = corpus(n=240, seed=11)

#: features of the vectors that the cut empties
F = [uuid.UUID(int=0xF0 + i) for i in range(2)]


def with_emptied_vectors(lines, n=12):
    """``lines`` plus ``n`` vectors on the features F (df ``n`` + 1 each) and
    the vector EMPTIED, which holds nothing else: a cut below ``n`` leaves it
    with no feature at all."""
    extra = ['{"id": "%s", "features": {"%s": %d, "%s": 1}}'
             % (uuid.UUID(int=0xA000 + i), F[0], i + 1, F[1]) for i in range(n)]
    extra.append('{"id": "%s", "features": {"%s": 2, "%s": 3}}' % (EMPTIED, F[0], F[1]))
    return list(lines) + extra


EMPTIED = uuid.UUID(int=0xE0E0)


def run(args, lines=LINES, **kw):
    return jobs_helpers.run(args, lines, **kw)


def neighbours(result):
    """Each vector's neighbours, best first (the scores aside)."""
    return {k: list(v) for k, v in result.output}


def test_blocks_max_df_steps_follow_the_form():
    """Three steps in the counts form, five in the join form, two without
    --max-df (the mappers feed the block pairs); a job built without the
    launcher (no --df-cut-form) takes the join form."""
    assert len(MRSparseDotProducts(["--blocks", "3"]).steps()) == 2
    assert len(MRSparseDotProducts(["--max-df", "5", "--blocks", "3"]).steps()) == 5
    for form, n in (("counts", 3), ("join", 5)):
        job = MRSparseDotProducts(["--max-df", "5", "--blocks", "3", "--df-cut-form", form])
        assert len(job.steps()) == n, form


@pytest.mark.parametrize("runner, blocks, queries, form", [
    ("inline", 1, False, "counts"), ("inline", 4, False, "counts"),
    ("local", 4, False, "counts"), (None, 2, False, "counts"),
    ("inline", 5, False, "join"), ("local", 5, False, "join"), ("local", 50, False, "join"),
    ("inline", 3, True, "counts"), ("local", 4, True, "join"),
    ("hadoop", 1, False, "join"), ("hadoop", 4, False, "join"), ("emr", 2, False, "join"),
    ("dataproc", 2, False, "join"), ("spark", 2, False, "join"),
])
def test_the_rule_picks_counts_only_on_one_machine_with_few_block_pairs(
        runner, blocks, queries, form):
    assert df_cut_form(runner, blocks, queries) == form


@pytest.mark.parametrize("runner, blocks, form, steps", [
    ("inline", "4", "counts", 3), ("local", "4", "counts", 3),
    ("inline", "5", "join", 5), ("hadoop", "2", "join", 5),
])
def test_the_launcher_passes_the_rules_form_to_the_tasks(runner, blocks, form, steps):
    job = MRSparseDotProducts(["-r", runner, "--max-df", "5", "--blocks", blocks, "--no-conf"])
    extra = job._non_option_kwargs()["extra_args"]
    assert extra[extra.index("--df-cut-form") + 1] == form
    assert len(job.steps()) == steps
    # the tasks read it from their command line
    task = MRSparseDotProducts(list(extra) + ["--reducer", "--step-num", "1"])
    assert len(task.steps()) == steps
    # forced on the command line, it is passed as given
    forced = "join" if form == "counts" else "counts"
    job = MRSparseDotProducts(["-r", runner, "--max-df", "5", "--blocks", blocks, "--no-conf",
                               "--df-cut-form", forced])
    extra = job._non_option_kwargs()["extra_args"]
    assert extra.count("--df-cut-form") == 1 and extra[extra.index("--df-cut-form") + 1] == forced
    assert "--df-cut-form" not in MRSparseDotProducts(
        ["-r", runner, "--blocks", blocks, "--no-conf"])._non_option_kwargs()["extra_args"]


def _queries_file(tmp_path):
    qlines = with_emptied_vectors(
        ['{"id": "%s", "features"%s' % (uuid.UUID(int=i + 1), line.split('"features"', 1)[1])
         for i, line in enumerate(LINES[:30])], n=4)
    q = tmp_path / "queries.jsonl"
    q.write_text("\n".join(qlines) + "\n")
    return str(q)


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.parametrize("queries", [False, True])
@pytest.mark.parametrize("args", [
    ["--measure", "cosine", "--max-df", "8", "--top-k", "5", "--blocks", "3"],
    ["--measure", "jaccard", "--max-df", "5", "--threshold", "0.05", "--float32",
     "--blocks", "2", "--buffer-entries", "40"],
])
@pytest.mark.slow
def test_both_forms_give_the_same_bytes_and_counters(tmp_path, runner, queries, args):
    lines = with_emptied_vectors(LINES, n=4 if queries else 12)
    if queries:
        args = args + ["--queries", _queries_file(tmp_path)]
    got = {form: run(args + ["--df-cut-form", form], lines, runner=runner)
           for form in ("counts", "join")}
    assert got["counts"].lines and got["counts"].lines == got["join"].lines
    assert got["counts"].counters["mrsparse df-cut"]["features dropped"] >= 2
    for group in ("mrsparse df-cut", "mrsparse input"):
        assert got["counts"].counters[group] == got["join"].counters[group], group
    # each ran its own form: only the counts form sends count tables
    work = {form: r.counters["mrsparse work"] for form, r in got.items()}
    assert work["counts"]["df count entries sent"] > 0
    assert "df count entries sent" not in work["join"]


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.parametrize("args", [
    ["--measure", "cosine", "--max-df", "8", "--top-k", "5"],
    ["--measure", "jaccard", "--max-df", "5", "--threshold", "0.05", "--float32"],
    ["--measure", "loglikelihood", "--max-df", "10", "--num-features", "3000"],
])
@pytest.mark.slow
def test_neighbours_and_counters_equal_the_stripes_strategy(runner, args):
    lines = with_emptied_vectors(LINES)
    stripes = run(args + ["--strategy", "stripes"], lines, runner=runner)
    measure = args[args.index("--measure") + 1]
    for blocks in ("1", "3"):
        got = run(args + ["--blocks", blocks], lines, runner=runner)
        assert got.lines and neighbours(got) == neighbours(stripes), blocks
        assert_scores_close(as_dict(got), as_dict(stripes))
        assert got.counters["mrsparse df-cut"] == stripes.counters["mrsparse df-cut"]
        assert got.counters["mrsparse input"] == stripes.counters["mrsparse input"]
        assert got.counters["mrsparse df-cut"]["features dropped"] >= 2
        assert EMPTIED not in as_dict(got)
        if measure == "cosine":
            assert_scores_close(as_dict(got), top_k(oracle(lines, "cosine", max_df=8), 5))


@pytest.mark.slow
def test_queries_under_the_cut(tmp_path):
    lines = with_emptied_vectors(LINES, n=4)
    q = _queries_file(tmp_path)
    with open(q) as f:
        qlines = f.read().splitlines()
    args = ["--queries", q, "--measure", "cosine", "--max-df", "6"]
    stripes = run(args + ["--strategy", "stripes"], lines)
    # F holds 5 + 5 vectors over both families: cut, though neither family alone is over
    assert stripes.counters["mrsparse df-cut"]["features dropped"] >= 2
    for blocks, runner in (("1", "inline"), ("3", "inline"), ("2", "local")):
        got = run(args + ["--blocks", blocks], lines, runner=runner)
        assert neighbours(got) == neighbours(stripes), (blocks, runner)
        assert_scores_close(as_dict(got), as_dict(stripes))
        assert got.counters["mrsparse df-cut"] == stripes.counters["mrsparse df-cut"]
        assert EMPTIED not in as_dict(got)
    assert_scores_close(as_dict(got), oracle(lines, "cosine", max_df=6, queries=qlines))


def _strip(lines, features):
    """The JSON lines without the entries of ``features`` (and without the
    vectors left empty)."""
    import json
    out = []
    for line in lines:
        obj = json.loads(line)
        kept = {f: w for f, w in obj["features"].items() if uuid.UUID(f) not in features}
        if kept:
            out.append(json.dumps({"id": obj["id"], "features": kept}))
    return out


@pytest.mark.parametrize("args", [[], ["--top-k", "4"], ["--float32", "--include-self"]])
@pytest.mark.slow
def test_the_cut_gives_the_bytes_of_an_input_without_the_cut_features(args):
    """Under the dot measure (no whole-vector statistic), cutting in the
    block pairs must give exactly the bytes of a run on the input from which
    the cut features were removed beforehand -- whether a vectors-step task
    already knew a feature was over the cut (and sent none of its entries)
    or only the block pairs could tell (tiny buffers flush before a task has
    counted far)."""
    lines = [line for line in with_emptied_vectors(LINES) if line.startswith("{")
             and '"features": {}' not in line]
    docs, X, feats = read_corpus(lines)
    df = np.diff(X.tocsc().indptr)
    cut = {f for f, d in zip(feats, df) if d > 7}
    assert len(cut) >= 2
    want = run(args + ["--blocks", "2"], _strip(lines, cut))
    sent = {}
    for extra in (["--blocks", "1"], ["--blocks", "2"], ["--blocks", "4"],
                  ["--blocks", "3", "--buffer-entries", "5"]):
        got = run(args + ["--max-df", "7"] + extra, lines)
        assert got.lines == want.lines, extra
        assert got.counters["mrsparse df-cut"]["features dropped"] == len(cut)
        sent[len(extra)] = got.counters["mrsparse work"]["block entries sent"] / int(extra[1])
    # with tiny buffers, cut entries travel and the pairs drop them
    assert sent[4] > sent[2]


# -- the count tables ------------------------------------------------------------

def ids(*ints):
    return np.array([uuid.UUID(int=i).bytes for i in ints], ID_DTYPE)


def test_feature_counts_fold_and_tables_per_family():
    c = FeatureCounts(limit=3)
    c.add(False, ids(1, 2))
    c.add(False, ids(2, 3))      # folds: 4 pending
    c.add(True, ids(2))
    c.add(False, ids(2))
    tables = list(c.tables())
    assert [(t.ids.tolist(), t.values.tolist(), t.query) for t in tables] == [
        (ids(1, 2, 3).tolist(), [1.0, 3.0, 1.0], False), (ids(2).tolist(), [1.0], True)]
    assert all(t.values.dtype == np.float32 for t in tables)
    # over both families: feature 2 is in 3 corpus vectors and 1 query
    assert c.over(3).tolist() == ids(2).tolist() and c.over(4).shape[0] == 0
    assert list(FeatureCounts(limit=3).tables()) == []


@pytest.mark.parametrize("protocol", [JobProtocol, JSONStripeProtocol])
def test_count_tables_round_trip_exactly(protocol):
    """Counts beyond float32's exact range travel as float64, exactly."""
    c = FeatureCounts(limit=10)
    c.table[0] = (ids(5, 9), np.array([2.0 ** 24 + 1, 7.0]))
    c.add(True, ids(5))
    big, small = c.tables()
    assert big.values.dtype == np.float64 and small.values.dtype == np.float32
    for table in (big, small):
        key, value = protocol().read(protocol().write(b"\x00" * 16, table))
        assert value == table and key == b"\x00" * 16
    assert int(big.values[0]) == 2 ** 24 + 1


def test_count_cut_counts_what_the_posting_assembler_counts():
    def pairs_of(c, q):
        return c * q if q else c * (c - 1) // 2

    dfs = [(7, 0), (3, 4), (60, 2)]
    a, b = Counters(), Counters()
    assembler = PostingAssembler(5, a, pairs_of)
    for c, q in dfs:
        fragments = [Stripe(ids(*range(c)), np.ones(c))]
        if q:
            fragments.append(Stripe(ids(*range(q)), np.ones(q), query=True))
        assert assembler(fragments) is None
    PostingAssembler(5, b, pairs_of).count_cut(np.array([c for c, _ in dfs], np.float64),
                                               np.array([q for _, q in dfs], np.float64))
    assert a == b and b[("mrsparse df-cut", "features dropped")] == 3
    # exact integers, whatever the size
    big = Counters()
    PostingAssembler(5, big, pairs_of).count_cut(np.array([2.0 ** 40]), np.array([0.0]))
    assert big[("mrsparse df-cut", "partial products dropped")] == 2 ** 40 * (2 ** 40 - 1) // 2
