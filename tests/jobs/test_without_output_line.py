"""Vectors without an output line: counted (distinct ids less output lines)
and told at the end of the run, with and without --queries, on the inline
and local runners, under both strategies."""
import json
import uuid

import pytest

from mrjobs.counters import (INPUT, OUTPUT_LINES, QUERY_VECTOR_IDS, VECTOR_IDS, WORK,
                             run_report, without_output_line)
from mrjobs.generate import generate_query_lines
from mrjobs.testing import write_lines
from tests.jobs_helpers import corpus, oracle, read_corpus, run

STRATEGIES = ["blocks", "stripes"]


def _id(i):
    return str(uuid.UUID(int=i))


def _line(i, features):
    return json.dumps({"id": _id(i), "features": {_id(1000 + f): w
                                                  for f, w in features.items()}})


# A small corpus worked by hand (features 1 to 9; dot products):
#   1: {1: 1}          shares feature 1 with 2
#   2: {1: 2, 2: 1}    shares feature 1 with 1
#   3: {3: 1} and, on a second line, {4: 1}: shares nothing
#   4: {} (empty)
HAND_CORPUS = [_line(1, {1: 1}), _line(2, {1: 2, 2: 1}), _line(3, {3: 1}), _line(4, {}),
               _line(3, {4: 1})]
# and its queries:
#   11: {1: 1}             . 1 = 1, . 2 = 2
#   12: {9: 1}             shares nothing
#   13: {} (empty)
#   14: {9: 1} + {3: 1}    two lines: . 3 = 1
#   1:  {1: 1}             the id of corpus vector 1, never its own neighbour: . 2 = 2
HAND_QUERIES = [_line(11, {1: 1}), _line(12, {9: 1}), _line(13, {}), _line(14, {9: 1}),
                _line(14, {3: 1}), _line(1, {1: 1})]


def _counted(result):
    """(queries, without, ids) from the run's counters, checked against its output."""
    counters = [result.counters]
    total = result.counters.get(WORK, {}).get(OUTPUT_LINES, 0)
    assert total == len(result.lines)  # one "output lines" a line
    return without_output_line(counters)


def _run(args, lines, strategy, runner, tmp_path, queries=None):
    if queries is not None:
        qpath = tmp_path / "queries.jsonl"
        write_lines(qpath, queries)
        args = list(args) + ["--queries", str(qpath)]
    return run(args, lines, strategy, runner=runner)


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.slow
def test_by_hand(strategy, runner, tmp_path):
    # the local runner with the vectors in 4 blocks (10 block pairs)
    extra = ["--blocks", "4"] if strategy == "blocks" and runner == "local" else []
    result = _run(extra, HAND_CORPUS, strategy, runner, tmp_path)
    assert _counted(result) == (False, 2, 4)  # 3 and 4 get no line
    assert result.counters[INPUT][VECTOR_IDS] == 4
    assert ("mrsparse: 2 of 4 vector(s) got no output line: " in run_report([result.counters]))

    result = _run(extra + ["--top-k", "1"], HAND_CORPUS, strategy, runner, tmp_path,
                  HAND_QUERIES)
    assert _counted(result) == (True, 2, 5)  # 12 and 13
    assert result.counters[INPUT][QUERY_VECTOR_IDS] == 5
    assert sorted(str(k) for k in dict(result.output)) == [_id(1), _id(11), _id(14)]
    assert ("mrsparse: 2 of 5 query vector(s) got no output line: "
            in run_report([result.counters]))

    # --threshold 1.5 keeps no score of 14 (1) but those of 11 and 1 (2)
    result = _run(extra + ["--threshold", "1.5"], HAND_CORPUS, strategy, runner, tmp_path,
                  HAND_QUERIES)
    assert _counted(result) == (True, 3, 5)
    # and without queries, 1 (. 2 = 2) and 2 keep theirs; with 2.5, none does
    result = _run(extra + ["--threshold", "2.5"], HAND_CORPUS, strategy, runner, tmp_path)
    assert _counted(result) == (False, 4, 4) and result.lines == []
    assert "mrsparse: 4 of 4 vector(s) got no output line" in run_report([result.counters])


def test_nothing_told_when_every_vector_has_a_line():
    result = run([], HAND_CORPUS[:2], "blocks")
    assert _counted(result) == (False, 0, 2)
    assert "no output line" not in run_report([result.counters])
    assert without_output_line([{INPUT: {"vectors read": 2}}]) is None  # another job


LINES = corpus(n=200)
VOCAB = dict(vectors=200, features_per_vector=8, vocabulary=1500, zipf=1.1)
# queries over the corpus's feature ids (most share one) and over another
# corpus's (seed 4: they share none)
QUERIES = (list(generate_query_lines(40, seed=3, **VOCAB))
           + list(generate_query_lines(10, seed=4, **VOCAB)))


def _want(args, queries=None):
    """(queries, without, ids) from the oracle: the distinct ids of the
    family that gets lines, less the oracle's rows."""
    measure = args[args.index("--measure") + 1]
    threshold = float(args[args.index("--threshold") + 1]) if "--threshold" in args else None
    rows = oracle(LINES, measure, threshold=threshold, queries=queries)
    ids = len(set(read_corpus(queries if queries is not None else LINES)[0]))
    return queries is not None, ids - len(rows), ids


CASES = [["--measure", "dot"],
         ["--measure", "cosine", "--threshold", "0.3", "--top-k", "2"]]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("args", CASES, ids=["dot", "cosine-threshold-top-k"])
@pytest.mark.parametrize("queries", [False, True], ids=["corpus", "queries"])
@pytest.mark.slow
def test_against_the_oracle_inline(strategy, args, queries, tmp_path):
    q = QUERIES if queries else None
    want = _want(args, q)
    assert want[1] > 0  # the case has vectors without a line
    assert _counted(_run(args, LINES, strategy, "inline", tmp_path, q)) == want


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.slow
def test_against_the_oracle_local(strategy, tmp_path):
    args = CASES[1] + (["--blocks", "3"] if strategy == "blocks" else [])
    for q in (QUERIES, None):
        assert _counted(_run(args, LINES, strategy, "local", tmp_path, q)) == _want(args, q)


def test_a_run_without_any_line_says_why_when_a_threshold_or_a_cut_did_it():
    from mrjobs.counters import DFCUT, FEATURES_DROPPED, PAIRS_BELOW_THRESHOLD, ROWS_PRUNED

    read = {INPUT: {VECTOR_IDS: 4}}
    below = {WORK: {PAIRS_BELOW_THRESHOLD: 6}}
    report = run_report([read, below]).splitlines()
    assert report[-1] == "mrsparse: no pair reached --threshold (6 pair(s) scored below it)"
    cut = {DFCUT: {FEATURES_DROPPED: 2}, WORK: {PAIRS_BELOW_THRESHOLD: 6, ROWS_PRUNED: 1}}
    assert run_report([read, cut]).splitlines()[-1] == (
        "mrsparse: no pair reached --threshold (6 pair(s) scored below it, more pruned as "
        "unable to reach it); pairs that share only the 2 feature(s) --max-df dropped were "
        "never scored: a larger --max-df (or none) scores them")
    # a line was written, or no threshold: nothing more
    assert "reached" not in run_report([read, {WORK: {PAIRS_BELOW_THRESHOLD: 6,
                                                       OUTPUT_LINES: 1}}])
    assert "reached" not in run_report([read])
