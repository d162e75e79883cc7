"""The blocks strategy: same bytes whatever the block count, chunking and
runner; exact zeros, equal vectors, both directions of top-k; its kernels."""
import sys
import uuid

import numpy as np
import pytest

from mrjobs.strategies.scheme import block_of
from mrjobs.strategies.sizing import SMALL_ENTRIES, estimate_blocks
from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.pairs.chunks import chunk_ends
from tests import jobs_helpers
from tests.jobs_helpers import as_dict, assert_scores_close, corpus, oracle, top_k

pytestmark = pytest.mark.twin

LINES = corpus(n=240, seed=11)


def run(args, lines=LINES, **kw):
    return jobs_helpers.run(args, lines, **kw)


@pytest.mark.parametrize("args", [
    ["--measure", "cosine"],
    ["--measure", "tanimoto", "--top-k", "3"],
    ["--measure", "jaccard", "--include-self", "--threshold", "0.1"],
])
@pytest.mark.slow
@pytest.mark.smoke
def test_same_bytes_for_every_block_count_and_chunk_size(args):
    want = run(args + ["--blocks", "1"])
    assert want.lines
    for extra in (["--blocks", "2"], ["--blocks", "5"], ["--blocks", "3", "--buffer-entries", "7"],
                  ["--blocks", "1", "--buffer-entries", "1"]):
        got = run(args + extra)
        assert got.lines == want.lines, extra
        assert (got.counters["mrsparse work"]["pairs scored"]
                == want.counters["mrsparse work"]["pairs scored"])


@pytest.mark.parametrize("args", [
    ["--measure", "cosine", "--top-k", "4"],
    ["--measure", "dot", "--top-k", "1000", "--include-self"],
    ["--measure", "tanimoto", "--top-k", "2", "--threshold", "0.05"],
    ["--measure", "cosine", "--top-k", "3", "--max-df", "20"],
])
@pytest.mark.slow
def test_one_block_writes_its_rows_without_a_rows_step(args):
    # one block and --top-k: the one diagonal pair's rows are whole, and its
    # reducer writes the output lines itself -- those of two blocks and a rows step
    one = MRSparseDotProducts(args + ["--blocks", "1"]).steps()
    assert len(one) == len(MRSparseDotProducts(args + ["--blocks", "2"]).steps()) - 1
    at = args.index("--top-k")
    no_k = args[:at] + args[at + 2:]
    assert len(MRSparseDotProducts(no_k + ["--blocks", "1"]).steps()) == len(one) + 1
    want = run(args + ["--blocks", "2"])
    assert want.lines
    for runner in ("inline", "local"):
        got = run(args + ["--blocks", "1"], runner=runner)
        assert got.lines == want.lines, runner
        assert got.counters["mrsparse work"]["output lines"] == len(want.lines)


@pytest.mark.slow
def test_block_count_changes_the_work_not_the_result():
    one = run(["--blocks", "1"]).counters["mrsparse work"]
    four = run(["--blocks", "4"]).counters["mrsparse work"]
    assert one["block pairs"] == 1 and four["block pairs"] == 10
    # each vector entry goes to every block pair its block is in
    assert four["block entries sent"] == 4 * one["block entries sent"]


def test_top_k_in_both_directions_against_oracle():
    got = as_dict(run(["--measure", "cosine", "--top-k", "4", "--blocks", "3"]))
    want = top_k(oracle(LINES, "cosine"), 4)
    assert set(got) == set(want)
    for d, row in want.items():
        # same neighbours in the same order (ties by UUID), scores within rounding
        assert list(got[d]) == list(row) or np.allclose(list(got[d].values()),
                                                        list(row.values()), rtol=1e-12)
        np.testing.assert_allclose(list(got[d].values()), list(row.values()), rtol=1e-9)


def test_pairs_whose_dot_product_cancels_to_zero_keep_their_score():
    f1, f2, f3 = (uuid.UUID(int=100 + i) for i in range(3))
    a, b, c = (uuid.UUID(int=i) for i in (1, 2, 3))
    lines = ['{"id": "%s", "features": {"%s": 1, "%s": 1}}' % (a, f1, f2),
             '{"id": "%s", "features": {"%s": 1, "%s": -1}}' % (b, f1, f2),
             '{"id": "%s", "features": {"%s": 2}}' % (c, f3)]
    for strategy in ("blocks", "stripes"):
        got = as_dict(run(["--strategy", strategy], lines=lines))
        assert got == {a: {b: 0.0}, b: {a: 0.0}}, strategy


def test_equal_vectors_get_bit_identical_scores():
    # two copies of a vector under other ids score the same with everyone,
    # whichever block each falls into, and x.y == y.x exactly
    base = LINES[:60]
    rest = base[7].split('"features"', 1)[1]
    twins = [uuid.UUID(int=5), uuid.UUID(bytes=b"\xfe" * 16)]
    lines = base + ['{"id": "%s", "features"%s' % (t, rest) for t in twins]
    for blocks in ("1", "4"):
        out = as_dict(run(["--measure", "cosine", "--blocks", blocks], lines=lines))
        r0, r1 = out[twins[0]], out[twins[1]]
        assert r0[twins[1]] == r1[twins[0]] == 1.0 or abs(r0[twins[1]] - 1.0) < 1e-15
        for n in r0:
            if n not in twins:
                assert r0[n] == r1[n]
                assert out[n][twins[0]] == r0[n]


def test_queries_with_blocks(tmp_path):
    qlines = ['{"id": "%s", "features"%s' % (uuid.UUID(int=i + 1), line.split('"features"', 1)[1])
              for i, line in enumerate(LINES[:25])]
    q = tmp_path / "queries.jsonl"
    q.write_text("\n".join(qlines) + "\n")
    want = oracle(LINES, "cosine", queries=qlines)
    for blocks in ("1", "3"):
        got = as_dict(run(["--queries", str(q), "--measure", "cosine", "--blocks", blocks]))
        assert_scores_close(got, want)


@pytest.mark.parametrize("measure,seed", [("cosine", 5), ("dot", 23631)])
@pytest.mark.parametrize("args", [["--top-k", "1"], ["--top-k", "3"], ["--threshold", "0.2"]])
def test_queries_of_the_corpus_own_vectors_get_the_self_joins_rows(tmp_path, args, measure,
                                                                   seed):
    """A query that is also in the corpus (its own copy left out of its row)
    gets the bytes of its row in the self-join, for every block count: the
    kernel is asked for k + 1 a row and the copy taken out."""
    lines = corpus(n=60, fpv=3, vocab=25, seed=seed)  # few features: many ties
    q = tmp_path / "queries.jsonl"
    q.write_text("\n".join(lines) + "\n")
    full = dict(run(["--measure", measure] + args, lines).output)
    for blocks in ("1", "2", "3"):
        got = run(["--queries", str(q), "--measure", measure, "--blocks", blocks] + args,
                  lines).output
        assert got and all(full[key] == row for key, row in got), blocks


@pytest.mark.parametrize("args", [["--top-k", "3"], ["--threshold", "0.2"]])
def test_both_ways_gives_each_familys_rows_against_the_other(tmp_path, args):
    """--both-ways (the update run's): the queries' rows against the corpus and
    the corpus vectors' rows against the queries, the bytes of two --queries
    runs, for any --blocks and --query-blocks; refused where a query is also
    in the corpus."""
    lines = corpus(n=90, fpv=3, vocab=30, seed=8)
    q = tmp_path / "queries.jsonl"
    q.write_text("\n".join(lines[:20]) + "\n")
    rest = tmp_path / "rest.jsonl"
    rest.write_text("\n".join(lines[20:]) + "\n")
    base = ["--measure", "cosine"] + args
    one = run(base + ["--queries", str(q)], None, input_paths=[str(rest)]).output
    other = run(base + ["--queries", str(rest)], None, input_paths=[str(q)]).output
    for blocks, query_blocks in (("1", []), ("3", []), ("3", ["--query-blocks", "1"]),
                                 ("2", ["--query-blocks", "3"])):
        both = run(base + ["--queries", str(q), "--both-ways", "--blocks", blocks]
                   + query_blocks, None, input_paths=[str(rest)]).output
        assert sorted(both) == sorted(one + other) and one and other
    with pytest.raises(Exception, match="the families must not share an id"):
        run(base + ["--queries", str(q), "--both-ways"], lines)


def test_floors_keep_a_corpus_vectors_pairs_from_its_floor(tmp_path):
    """--floors (with --both-ways, --top-k): a corpus vector keeps only its
    pairs at or above its floor; the queries' rows are as without."""
    import uuid as _uuid
    from mrjobs.strategies.blocks import FLOOR_DTYPE
    lines = corpus(n=90, fpv=3, vocab=30, seed=8)
    q, rest = tmp_path / "q.jsonl", tmp_path / "rest.jsonl"
    q.write_text("\n".join(lines[:20]) + "\n")
    rest.write_text("\n".join(lines[20:]) + "\n")
    base = ["--measure", "cosine", "--top-k", "3", "--queries", str(q), "--both-ways"]
    both = dict(run(base, None, input_paths=[str(rest)]).output)
    queries = {k for k, _ in run(["--measure", "cosine", "--top-k", "3", "--queries", str(q)],
                                 None, input_paths=[str(rest)]).output}
    # each corpus vector's floor: its second best score among the queries
    table = np.array([(k.bytes, sorted(row.values())[-2] if len(row) > 1 else np.inf)
                      for k, row in both.items() if k not in queries], FLOOR_DTYPE)
    table.sort(order="id")
    path = tmp_path / "floors"
    table.tofile(str(path))
    got = dict(run(base + ["--floors", str(path)], None, input_paths=[str(rest)]).output)
    assert {k: both[k] for k in queries} == {k: got[k] for k in queries}
    dropped = 0
    for rec in table:
        key = _uuid.UUID(bytes=rec["id"].ljust(16, b"\0"))
        want = {n: s for n, s in both[key].items() if s >= rec["floor"]}
        assert got.get(key, {}) == want
        dropped += len(both[key]) - len(want)
    assert dropped > 0


def test_duplicate_vector_lines_are_merged_before_any_statistic():
    f = [uuid.UUID(int=100 + i) for i in range(3)]
    a, b = uuid.UUID(int=1), uuid.UUID(int=2)
    lines = ['{"id": "%s", "features": {"%s": 1}}' % (a, f[0]),
             '{"id": "%s", "features": {"%s": 1}}' % (a, f[1]),
             '{"id": "%s", "features": {"%s": 1, "%s": 1}}' % (b, f[0], f[1])]
    for strategy in ("blocks", "stripes"):
        for measure in ("cosine", "jaccard"):
            result = run(["--strategy", strategy, "--measure", measure], lines=lines)
            got = as_dict(result)
            assert got == {a: {b: pytest.approx(1.0, rel=1e-15)},
                           b: {a: pytest.approx(1.0, rel=1e-15)}}, (strategy, measure)
            assert result.counters["mrsparse input"]["duplicate vector id (lines merged)"] == 1


def test_chunk_ends_bound_the_products():
    bound = np.array([3, 3, 3, 10, 1, 1, 1])
    ends = chunk_ends(bound, 6)
    assert ends == [2, 3, 4, 7]
    starts = [0] + ends[:-1]
    for s, e in zip(starts, ends):
        assert bound[s:e].sum() <= 6 or e - s == 1
    assert chunk_ends(bound, 100, max_rows=3) == [3, 6, 7]


def test_block_assignment_is_stable_and_spread():
    ids = [uuid.UUID(int=i).bytes for i in range(4000)]  # sequential ids
    counts = np.bincount([block_of(d, 8) for d in ids], minlength=8)
    assert counts.min() > 400 and counts.max() < 600
    assert [block_of(d, 8) for d in ids[:50]] == [block_of(d, 8) for d in ids[:50]]


def test_estimate_blocks():
    assert estimate_blocks(0) == 1
    assert estimate_blocks(0, reducers=3) == 1  # small: one block, one pair reducer
    assert estimate_blocks(SMALL_ENTRIES, reducers=3) == 1
    assert estimate_blocks(SMALL_ENTRIES + 1, reducers=3) == 4  # 10 pairs: 3 or more each
    assert estimate_blocks(4_000_001) == 3


def test_dense_and_sparse_selection_agree_with_ties():
    from mrjobs.pairs.chunks import _dense_best, group_best
    rng = np.random.default_rng(4)
    for density in (0.05, 0.6, 1.0):
        n_g, n_o = 40, 50
        mask = rng.random((n_g, n_o)) < density
        g, o = np.nonzero(mask)
        s = rng.integers(0, 4, g.shape[0]).astype(float)  # many ties
        dense = np.full((n_g, n_o), -np.inf)
        dense[g, o] = s
        for k in (1, 3, 60):
            got = group_best(g + 10, o + 5, s, k)
            # reference: per group, sort by (-score, other) and keep k
            want = []
            for grp in range(n_g):
                sel = sorted(((-s[i], o[i]) for i in np.flatnonzero(g == grp)))[:k]
                want += [(grp + 10, oo + 5, -ms) for ms, oo in sel]
            assert list(zip(*(a.tolist() for a in got))) == want, (density, k)
            assert [a.tolist() for a in _dense_best(-dense, k, 1, 10, 5)] == [
                a.tolist() for a in got]
            by_col = group_best(o + 5, g + 10, s, k)
            assert [a.tolist() for a in _dense_best(-dense, k, 0, 10, 5)] == [
                a.tolist() for a in by_col]


@pytest.mark.parametrize("name", ["blocks", "stripes"])
def test_strategies_follow_the_contract_and_never_see_the_job(name):
    import ast
    import pathlib

    from mrjobs.strategies.registry import STRATEGIES
    from mrjobs.strategies.contract import Strategy
    job = MRSparseDotProducts(["--strategy", name, "--max-df", "5"]
                              + (["--blocks", "2"] if name == "blocks" else []))
    strategy = job.strategy
    assert isinstance(strategy, Strategy) and strategy.name == name
    assert type(strategy) is STRATEGIES[name]
    # the strategy's module names no job, and its steps come back wrapped
    tree = ast.parse(pathlib.Path(sys.modules[type(strategy).__module__].__file__).read_text())
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    attrs = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    assert "job" not in names and "job" not in attrs
    assert len(job.steps()) == 2 + len(strategy.steps())


@pytest.mark.parametrize("collide", [False, True])
def test_feature_columns_number_features_in_uuid_order(collide):
    from mrjobs.strategies.blocks import feature_columns

    rng = np.random.default_rng(3)
    ids = rng.integers(0, 256, (300, 16), dtype=np.uint8)
    ids[:5, 15] = 0  # (ids ending in NUL bytes are ids too)
    if collide:  # two features that share their first 8 bytes
        ids[7, :8] = ids[8, :8]
        ids[7, 8], ids[8, 8] = 200, 100
    feats = ids.view("S16").ravel()
    a, b = feats[rng.integers(0, 300, 700)], feats[rng.integers(0, 300, 500)]
    n, ca, cb = feature_columns(a, b)
    uniq = np.unique(np.concatenate((a, b)))
    assert n == uniq.shape[0]
    assert ca.tolist() == np.searchsorted(uniq, a).tolist()
    assert cb.tolist() == np.searchsorted(uniq, b).tolist()
    n1, only = feature_columns(a)
    assert (n1, only.tolist()) == (np.unique(a).shape[0],
                                   np.searchsorted(np.unique(a), a).tolist())
