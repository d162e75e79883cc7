"""The blocks strategy without --max-df has no vectors step: its mappers send
each vector as read to its block pairs, which merge a repeated id's lines,
prepare the weights and count the ids there (the direct form).  Against the
form with a vectors step (which any --max-df keeps, here one that cuts
nothing): the same output bytes and the same input counters on awkward
input -- an id's lines far apart (in other map tasks and buffer flushes),
empty vectors, weights that cancel or overflow when summed, vectors a
measure cannot score -- whatever the blocks, buffers, runner and splits."""
import json
import uuid

import pytest

from mrjobs.counters import (DUPLICATE_VECTOR_LINES, INPUT, NOT_SCORABLE, QUERY_VECTOR_IDS,
                             VECTOR_IDS)
from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.parsing import BAD_SUM
from mrjobs.runtime import localsettings
from tests import jobs_helpers
from tests.jobs_helpers import corpus

pytestmark = pytest.mark.twin

#: a --max-df that cuts nothing: the vectors step's form, for comparison
NO_CUT = ["--max-df", "1000000000"]


def _uid(n):
    return str(uuid.UUID(int=n))


def awkward_lines():
    """The generator's corpus with its edge cases (an id on three lines, empty
    vectors), and at its end more lines of ids seen near its start: one that
    adds to a vector, one that cancels a feature, one that cancels them all,
    one whose sum overflows float64, and an empty line of a seen id; a
    constant vector (pearson cannot score it) and one all of whose weights
    are the vector's mean but one."""
    lines = corpus(n=150, seed=5)
    first = [json.loads(line) for line in lines[:6]]
    f0 = first[0]["features"]
    k0 = sorted(f0)[0]
    more = [
        {"id": first[0]["id"], "features": {k0: 2.5, _uid(7): 1.0}},
        {"id": first[1]["id"], "features": {sorted(first[1]["features"])[0]:
                                            -first[1]["features"][sorted(first[1]["features"])[0]]}},
        {"id": first[2]["id"], "features": {k: -w for k, w in first[2]["features"].items()}},
        {"id": first[3]["id"], "features": {k0: 1.7e308}},
        {"id": first[3]["id"], "features": {k0: 1.7e308}},
        {"id": first[4]["id"], "features": {}},
        # an id whose bytes end in NUL (numpy's S16 scalars drop them)
        {"id": _uid(0x0D << 120), "features": {k0: 1.7e308}},
        {"id": _uid(0x0D << 120), "features": {k0: 1.7e308}},
        {"id": _uid(99), "features": {k0: 2.0, _uid(8): 2.0, _uid(9): 2.0}},
        {"id": _uid(98), "features": {k0: 1.0, _uid(8): 1.0, _uid(9): 4.0}},
    ]
    return lines + [json.dumps(m) for m in more]


LINES = awkward_lines()


def lines_of(lines):
    return [json.loads(line)["id"] for line in lines]


def _input_counters(result):
    return {k: v for k, v in result.counters.get(INPUT, {}).items()}


def _same_as_the_vectors_step(args, runner="inline", lines=LINES):
    direct = jobs_helpers.run(args, lines, runner=runner)
    steps = jobs_helpers.run(args + NO_CUT, lines, runner=runner)
    assert direct.lines, args
    assert direct.lines == steps.lines, args
    assert _input_counters(direct) == _input_counters(steps), args
    return direct


@pytest.mark.parametrize("measure", ["dot", "cosine", "pearson", "correlation", "tanimoto",
                                     "jaccard", "euclidean", "loglikelihood"])
@pytest.mark.parametrize("blocks", ["1", "3"])
@pytest.mark.slow
def test_the_same_bytes_and_counters_as_with_a_vectors_step(measure, blocks):
    args = ["--measure", measure, "--top-k", "4", "--blocks", blocks]
    if measure in ("correlation", "loglikelihood"):
        args += ["--num-features", "5000"]
    got = _same_as_the_vectors_step(args)
    counts = _input_counters(got)
    # the awkward lines were met, each counted once: the lines added to the
    # first four ids (two to the fourth; the empty line adds nothing), the
    # fourth id's three lines whose sum overflows; two lines whose sum
    # overflows of an id ending in NUL (one line of it in the corpus)
    assert _uid(0x0D << 120) in "".join(lines_of(LINES[:-10]))
    assert counts[DUPLICATE_VECTOR_LINES] == 7 and counts[BAD_SUM] == 6
    assert counts[VECTOR_IDS] == len({json.loads(l)["id"] for l in LINES})
    if measure == "pearson":
        assert counts[NOT_SCORABLE] == 1  # the constant vector


@pytest.mark.slow
def test_small_buffers_many_map_tasks_and_the_local_runner(monkeypatch):
    """An id's lines in different map tasks and block fragments."""
    monkeypatch.setattr(localsettings, "SPLIT_BYTES", 20_000)
    args = ["--measure", "cosine", "--top-k", "5", "--blocks", "2", "--buffer-entries", "50",
            "--num-cores", "2", "--float32"]
    local = _same_as_the_vectors_step(args, runner="local")
    inline = jobs_helpers.run(["--measure", "cosine", "--top-k", "5", "--blocks", "1",
                               "--float32"], LINES)
    assert local.lines == inline.lines


def test_queries_are_counted_once_in_their_family(tmp_path):
    queries = tmp_path / "queries.jsonl"
    queries.write_text("\n".join(LINES[:40] + LINES[-8:]) + "\n")
    for blocks in ("1", "3"):
        args = ["--measure", "cosine", "--top-k", "3", "--blocks", blocks,
                "--queries", str(queries)]
        got = _same_as_the_vectors_step(args)
        counts = _input_counters(got)
        assert counts[QUERY_VECTOR_IDS] == len(
            {json.loads(l)["id"] for l in LINES[:40] + LINES[-8:]})


def test_the_job_has_two_steps_without_max_df_only():
    assert len(MRSparseDotProducts(["--blocks", "3"]).steps()) == 2
    assert len(MRSparseDotProducts(["--blocks", "3"] + NO_CUT).steps()) == 5
    assert len(MRSparseDotProducts(["--strategy", "stripes"]).steps()) == 4
    assert len(MRSparseDotProducts(["--input-format", "postings"]).steps()) == 3
