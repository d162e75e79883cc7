"""MRSparseDotProducts against a scipy oracle, option by option."""
import uuid
import weakref

import numpy as np
import pytest

from mrcodecs import ID_DTYPE, VectorProtocol
from mrcodecs.jobwire import Stripe
from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.testing import run_job, write_lines
from tests import jobs_helpers
from tests.jobs_helpers import as_dict, assert_scores_close, bare_python, corpus, oracle, top_k

pytestmark = pytest.mark.twin

LINES = corpus()

STRATEGIES = ["blocks", "stripes"]


#: tests that do not depend on the strategy (options, launching): run once
ANY_STRATEGY = {"test_help_mentions_every_option",
                "test_a_file_that_is_both_input_and_query_is_refused",
                "test_strict_names_file_and_line",
                "test_runners_that_upload_refuse_an_input_named_like_a_query"}


#: tests whose blocks runs also run on every supported Python (`make test-versions`)
ON_EVERY_PYTHON = {"test_local_runner_matches_inline"}


def pytest_generate_tests(metafunc):
    """Every other test of this module runs under both strategies."""
    name = metafunc.function.__name__
    params = [pytest.param(s, marks=[pytest.mark.versions] if s == "blocks" and name in
                           ON_EVERY_PYTHON else []) for s in STRATEGIES]
    metafunc.parametrize("strategy", params[:1] if name in ANY_STRATEGY else params,
                         indirect=True)


@pytest.fixture(autouse=True)
def strategy(request, monkeypatch):
    monkeypatch.setitem(_STRATEGY, "name", request.param)
    return request.param


_STRATEGY = {"name": "blocks"}


def run(args=(), lines=LINES, **kw):
    return jobs_helpers.run(args, lines, _STRATEGY["name"], **kw)


@pytest.mark.parametrize("measure", ["dot", "cosine", "jaccard", "overlap", "tanimoto"])
@pytest.mark.slow
@pytest.mark.smoke
def test_matches_scipy(measure):
    result = run(["--measure", measure])
    assert_scores_close(as_dict(result), oracle(LINES, measure))
    assert result.counters["mrsparse input"]["empty vector (kept; no neighbours)"] == 2


@pytest.mark.slow
def test_output_is_best_first_and_exact_repr():
    result = run()
    for line in result.lines[:20]:
        key, row = MRSparseDotProducts([]).output_protocol().read(line)
        scores = list(row.values())
        assert scores == sorted(scores, reverse=True)
    # scores are written with repr: the oracle's integers-times-weights agree exactly
    # on a corpus with exactly representable weights
    lines = ['{"id": "%s", "features": {"%s": 0.5, "%s": 0.25}}'
             % (uuid.UUID(int=i), uuid.UUID(int=100), uuid.UUID(int=100 + i)) for i in range(1, 4)]
    out = as_dict(run(lines=lines))
    assert out[uuid.UUID(int=1)] == {uuid.UUID(int=2): 0.25, uuid.UUID(int=3): 0.25}


@pytest.mark.slow
def test_include_self():
    assert_scores_close(as_dict(run(["--include-self", "--measure", "cosine"])),
                        oracle(LINES, "cosine", include_self=True))


@pytest.mark.slow
@pytest.mark.smoke
def test_threshold():
    result = run(["--measure", "cosine", "--threshold", "0.3"])
    assert_scores_close(as_dict(result), oracle(LINES, "cosine", threshold=0.3))
    assert result.counters["mrsparse work"]["pairs below threshold"] > 0


def test_top_k_against_oracle():
    got = as_dict(run(["--measure", "tanimoto", "--top-k", "3"]))
    want = top_k(oracle(LINES, "tanimoto"), 3)
    assert set(got) == set(want)
    for d, row in want.items():
        assert len(got[d]) == len(row)
        np.testing.assert_allclose(sorted(got[d].values()), sorted(row.values()), rtol=1e-9)


def test_top_k_ties_broken_by_id():
    # vector 0 shares one feature with ten others, all with the same weight:
    # ten exactly tied scores; the three smallest UUIDs must win, in order
    f = uuid.UUID(int=999)
    ids = [uuid.UUID(bytes=bytes([0x0A + i]) * 16) for i in range(11)]
    lines = ['{"id": "%s", "features": {"%s": 2}}' % (u, f) for u in ids]
    got = run(["--top-k", "3"], lines=lines)
    row = as_dict(got)[ids[5]]
    assert list(row) == [ids[0], ids[1], ids[2]]
    assert list(row.values()) == [4.0, 4.0, 4.0]


@pytest.mark.slow
def test_max_df_drops_and_counts(strategy):
    result = run(["--max-df", "20"])
    assert_scores_close(as_dict(result), oracle(LINES, "dot", max_df=20))
    cut = result.counters["mrsparse df-cut"]
    assert cut["features dropped"] > 0
    stripes = run(["--strategy", "stripes"])
    full = stripes.counters["mrsparse work"]["partial products"]
    if strategy == "stripes":
        assert cut["partial products dropped"] + result.counters["mrsparse work"][
            "partial products"] == full
    else:
        # the same cut, counted the same way, whatever the strategy
        assert cut == run(["--max-df", "20", "--strategy", "stripes"]).counters[
            "mrsparse df-cut"]


@pytest.mark.slow
def test_wire_json_gives_identical_output():
    a = run(["--measure", "cosine", "--top-k", "5"])
    b = run(["--measure", "cosine", "--top-k", "5", "--wire", "json"])
    assert a.lines == b.lines


@pytest.mark.slow
def test_float32_wire():
    got = as_dict(run(["--float32", "--measure", "cosine"]))
    assert_scores_close(got, oracle(LINES, "cosine"), rtol=2e-6, atol=1e-6)


@pytest.mark.slow
def test_compact_output_reads_as_vector_protocol():
    result = run(["--output-format", "compact"])
    p = VectorProtocol()
    got = {}
    for line in result.lines:
        k, v = p.read(line)
        got[k] = v.to_dict()
    assert_scores_close(got, oracle(LINES))


@pytest.mark.slow
def test_tsv_input_same_as_json():
    tsv = corpus(fmt="tsv")
    assert run(lines=tsv).lines == run().lines


def _query_lines(n=30):
    """Real vectors of the corpus under new ids: queries that share features."""
    return ['{"id": "%s", "features"%s' % (uuid.UUID(int=i + 1), line.split('"features"', 1)[1])
            for i, line in enumerate(LINES[:n])]


@pytest.mark.parametrize("form", ["file", "directory", "glob"])
@pytest.mark.slow
def test_queries_mode(tmp_path, form):
    qlines = _query_lines()
    qdir = tmp_path / "queries"
    qdir.mkdir()
    write_lines(qdir / "part-00000", qlines[:20])
    write_lines(qdir / "part-00001", qlines[20:])
    # the corpus has the same file name as a query file, in another directory
    cdir = tmp_path / "corpus"
    cdir.mkdir()
    write_lines(cdir / "part-00000", LINES)
    if form == "file":
        write_lines(qdir / "part-00000", qlines)
        qpath = str(qdir / "part-00000")
        (qdir / "part-00001").unlink()
    else:
        qpath = str(qdir) if form == "directory" else str(qdir / "part-*")
    result = run_job(MRSparseDotProducts, None, ["--queries", qpath, "--measure", "cosine",
                                                 "--strategy", _STRATEGY["name"]],
                     input_paths=[str(cdir / "part-00000")])
    got = as_dict(result)
    want = oracle(LINES, "cosine", queries=qlines)
    assert_scores_close(got, want)
    # every query with a shared feature has its row, and only queries have rows
    assert set(got) == {uuid.UUID(int=i + 1) for i in range(30)} & set(want)
    assert len(got) >= 25


def test_a_file_that_is_both_input_and_query_is_refused(tmp_path):
    path = tmp_path / "corpus.jsonl"
    write_lines(path, LINES)
    with pytest.raises(Exception, match="a file is either a query or an input"):
        run_job(MRSparseDotProducts, None, ["--queries", str(path)], input_paths=[str(path)])


def test_bad_input_counted_and_skipped():
    bad = [
        "not json, no tab",
        '{"id": "nope", "features": {}}',
        '{"id": "%s", "features": {"%s": NaN}}' % (uuid.UUID(int=1), uuid.UUID(int=2)),
        '{"id": "%s", "features": {"%s": "1"}}' % (uuid.UUID(int=1), uuid.UUID(int=2)),
        "%s\t%s:inf" % (uuid.UUID(int=3), uuid.UUID(int=2)),
        '{"id": "%s", "features": {"%s": 1, "%s": 2}}' % (uuid.UUID(int=5), uuid.UUID(int=2),
                                                        uuid.UUID(int=2)),
        "%s\t%s:3" % (uuid.UUID(int=6), uuid.UUID(int=2)),
        "%s\t%s:0" % (uuid.UUID(int=7), uuid.UUID(int=2)),
    ]
    result = run(lines=bad)
    c = result.counters["mrsparse input"]
    assert c["malformed line"] == 1
    assert c["id not a UUID"] == 1
    assert c["weight not a finite number"] == 2  # NaN, inf
    assert c["weight not a number"] == 1  # "1"
    assert c["duplicate feature (weights summed)"] == 1
    assert c["zero weight (entry dropped)"] == 1
    assert c["empty vector (kept; no neighbours)"] == 1
    assert as_dict(result) == {uuid.UUID(int=5): {uuid.UUID(int=6): 9.0},
                               uuid.UUID(int=6): {uuid.UUID(int=5): 9.0}}


def test_strict_names_file_and_line(tmp_path):
    path = tmp_path / "corpus.jsonl"
    write_lines(path, LINES[:3] + ["garbage here"])
    with pytest.raises(ValueError, match=r"corpus\.jsonl, line \d+: malformed line.*garbage here"):
        run_job(MRSparseDotProducts, None, ["--strict"], input_paths=[str(path)])


def test_skewed_corpus_with_tiny_buffers(strategy):
    # one hub vector shares a feature with each of 400 others: its partial
    # stripes arrive from 400 posting lists
    hub = uuid.UUID(int=1)
    feats = [uuid.UUID(int=10**6 + i) for i in range(400)]
    lines = ['{"id": "%s", "features": {%s}}' % (hub, ", ".join('"%s": 1.5' % f for f in feats))]
    lines += ['{"id": "%s", "features": {"%s": %d, "%s": 1}}'
              % (uuid.UUID(int=100 + i), feats[i], i + 1, feats[(i + 7) % 400])
              for i in range(400)]
    result = run(["--buffer-entries", "64"], lines=lines)
    assert_scores_close(as_dict(result), oracle(lines))
    if strategy == "stripes":
        assert result.counters["mrsparse work"]["stripe entries emitted"] > 0
    else:
        assert result.counters["mrsparse work"]["block entries sent"] > 0


def test_reducer_never_holds_all_stripes_of_a_popular_vector(strategy):
    if strategy != "stripes":
        pytest.skip("the sum step is the stripes strategy's")
    job = MRSparseDotProducts(["--buffer-entries", "500", "--no-conf", "--strategy", "stripes"])
    job = job.strategy
    job.reducer_sum_init()
    live = [0]
    peak = [0]
    rng = np.random.default_rng(5)
    neighbours = np.sort(np.frombuffer(rng.bytes(16 * 300), ID_DTYPE))

    def stripes():
        for _ in range(2000):
            ids = np.sort(rng.choice(neighbours, 50, replace=False))
            live[0] += 1
            peak[0] = max(peak[0], live[0])
            weakref.finalize(ids, lambda: live.__setitem__(0, live[0] - 1))
            yield Stripe(ids, np.ones(50))

    doc = b"\x00" * 16
    out = list(job.reducer_sum(doc, stripes()))
    row = [s for k, s in out if k == doc][0]
    assert row.values.sum() == 2000 * 50
    # 2000 stripes of 50 entries arrived; at most one buffer (500 entries,
    # i.e. ~11 stripes) plus the merged row (<= 300 entries) were alive
    assert peak[0] <= 20, peak[0]


@pytest.mark.parametrize("args, bare", [
    ([], False),
    (["--measure", "jaccard", "--top-k", "4", "--wire", "json"], True),
])
@pytest.mark.slow
@pytest.mark.smoke
def test_local_runner_matches_inline(args, bare, tmp_path, strategy):
    lines = LINES[:150]
    inline = run(args, lines=lines)
    extra = ["--jobconf", "mapreduce.job.maps=2", "--jobconf", "mapreduce.job.reduces=2"]
    if bare:
        # the tasks can only import mrcodecs and mrjobs from the zip the job ships
        extra += ["--python-bin", bare_python(tmp_path)]
    local = run(args + extra, lines=lines, runner="local")
    assert local.lines == inline.lines
    # combining depends on how records fall into tasks; the work itself does not
    work = {"stripes": ("partial products", "pairs scored"),
            "blocks": ("pairs scored",)}[strategy]
    for name in work:
        assert local.counters["mrsparse work"][name] == inline.counters["mrsparse work"][name]


def test_help_mentions_every_option(capsys):
    with pytest.raises(SystemExit):
        MRSparseDotProducts(["--help"])
    out = capsys.readouterr().out
    for opt in ["--measure", "--threshold", "--top-k", "--include-self", "--max-df", "--queries",
                "--float32", "--wire", "--output-format", "--input-format", "--strict",
                "--strategy", "--blocks"]:
        assert opt in out


@pytest.mark.slow
def test_queries_on_the_local_runner(tmp_path, strategy):
    qlines = _query_lines()
    qdir = tmp_path / "q"
    qdir.mkdir()
    write_lines(qdir / "part-00000", qlines)
    cdir = tmp_path / "c"
    cdir.mkdir()
    write_lines(cdir / "part-00000", LINES)
    args = ["--queries", str(qdir), "--measure", "cosine", "--top-k", "3",
            "--strategy", strategy]
    local = run_job(MRSparseDotProducts, None, args, input_paths=[str(cdir)], runner="local")
    inline = run_job(MRSparseDotProducts, None, args, input_paths=[str(cdir)])
    assert local.lines == inline.lines and len(local.lines) >= 25


def test_runners_that_upload_refuse_an_input_named_like_a_query(tmp_path, strategy):
    from mrjobs.runtime.paths import OverlapError, refuse_query_overlap
    (tmp_path / "q").mkdir()
    (tmp_path / "c").mkdir()
    write_lines(tmp_path / "q" / "part-00000", LINES[:2])
    write_lines(tmp_path / "c" / "part-00000", LINES[2:4])
    refuse_query_overlap([str(tmp_path / "c")], str(tmp_path / "q"))  # whole paths: fine
    with pytest.raises(OverlapError, match="has the name of a query file"):
        refuse_query_overlap([str(tmp_path / "c")], str(tmp_path / "q"), by_name=True)
