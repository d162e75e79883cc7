"""The update's reserve (``--reserve R``): each row's best K + R kept beside the
output, so that a row that loses up to R of them is not computed again;
today's output stays a full run's bytes, update after update."""
import json
import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mrjobs.runtime.manifest import MANIFEST
from mrjobs.update import RESERVE_FILE
from mrjobs.update.__main__ import main as update_main
from tests import jobs_helpers
from tests.update.test_update import (LINES, Day, _safe_id, full_run, output_bytes, refused,
                                      split_day, tree_digest, vector_ids)

ARGS = ["--measure", "cosine", "--top-k", "3"]


def stats(directory):
    return json.loads((directory / MANIFEST).read_text())["update"]


def reserve_rows(directory):
    """``{id: (row text, whole)}`` of an output's reserve file."""
    rows = {}
    for line in (directory / RESERVE_FILE).read_text().splitlines():
        key, row, flag = line.split("\t")
        rows[json.loads(key)] = (row, flag == "1")
    return rows


def days(tmp_path, lines, add, remove, n):
    """``n`` change sets in a row, from ``lines``: a Day each (in folders 0..n-1),
    the later ones' corpus the earlier ones' today."""
    out, today = [], lines
    for i in range(n):
        folder = tmp_path / str(i)
        folder.mkdir()
        ids = set(vector_ids(today))
        day = Day(folder, today, [a for a in add[i::n] if _safe_id(a) not in ids],
                  [r for r in remove[i::n] if r in ids])
        out.append(day)
        today = day.today.read_text().splitlines()
    return out


def test_a_reserve_is_made_once_then_spares_the_rows_that_lose_a_neighbour(tmp_path):
    lines, add, remove = split_day(LINES, 10, 12, 2, seed=7)
    one, two = days(tmp_path, lines, add, remove, 2)
    full_run(one.yesterday, ARGS, tmp_path / "d0")
    # the first update with --reserve: one run of the job, at top K + R
    assert update_main(one.update_args(tmp_path / "d0", tmp_path / "d1")
                       + ["--reserve", "4"]) == 0
    assert output_bytes(tmp_path / "d1") == full_run(one.today, ARGS)
    kept = reserve_rows(tmp_path / "d1")
    assert kept == {key: (row, row.count('": ') < 7) for key, row in (
        (json.loads(k), r) for k, r in (line.split("\t") for line in full_run(
            one.today, ["--measure", "cosine", "--top-k", "7"]).decode().splitlines()))}
    # the next, from the reserve (R kept): fewer rows computed again than
    # the same update from rows of K alone, the same bytes
    before = tree_digest(tmp_path / "d1")
    assert update_main(two.update_args(tmp_path / "d1", tmp_path / "d2")) == 0
    assert tree_digest(tmp_path / "d1") == before
    full_run(one.today, ARGS, tmp_path / "plain")
    assert update_main(two.update_args(tmp_path / "plain", tmp_path / "d2-plain")) == 0
    want = full_run(two.today, ARGS)
    assert output_bytes(tmp_path / "d2") == output_bytes(tmp_path / "d2-plain") == want
    assert stats(tmp_path / "d2")["reserve"] == 4
    assert stats(tmp_path / "d2")["rows computed again"] < stats(
        tmp_path / "d2-plain")["rows computed again"]
    for key, (row, whole) in reserve_rows(tmp_path / "d2").items():
        assert row.count('": ') <= 7 and (not whole or row.count('": ') < 7)


@settings(max_examples=10, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data(), top=st.sampled_from([1, 2, 4]), reserve=st.sampled_from([1, 2, 5]),
       measure=st.sampled_from(["cosine", "dot", "jaccard"]), with_self=st.booleans())
def test_drawn_days_from_a_reserve_give_the_full_runs_bytes(tmp_path_factory, data, top,
                                                            reserve, measure, with_self):
    """Three days in a row from a reserve (each row's reserve shrinking with
    its removed neighbours, refilled where computed again), the last one
    with a smaller --reserve: removals, vectors removed and added back, new
    vectors, ties (few features)."""
    tmp = tmp_path_factory.mktemp("reserve")
    lines = jobs_helpers.corpus(n=50, fpv=3, vocab=20, seed=data.draw(st.integers(0, 2**16)))
    ids = vector_ids(lines)
    remove = data.draw(st.lists(st.sampled_from(ids), unique=True, max_size=12))
    back = data.draw(st.lists(st.sampled_from(remove), unique=True)) if remove else []
    add = [l for l in lines if _safe_id(l) in set(back)]
    for n in range(data.draw(st.integers(0, 4))):
        feats = data.draw(st.dictionaries(st.sampled_from(
            [str(uuid.UUID(int=f)) for f in range(1, 9)]), st.sampled_from([1.0, 2.0]),
            min_size=1, max_size=3))
        add.append(json.dumps({"id": str(uuid.UUID(int=10**6 + n)), "features": feats}))
    args = ["--measure", measure, "--top-k", str(top)] + (["--include-self"] if with_self
                                                          else [])
    chain = days(tmp, lines, add, remove, 3)
    full_run(chain[0].yesterday, args, tmp / "d0")
    (tmp / "start").mkdir()
    start = Day(tmp / "start", lines, [], [])  # no change: the reserve made
    assert update_main(start.update_args(tmp / "d0", tmp / "r") + ["--reserve",
                                                                   str(reserve)]) == 0
    previous = tmp / "r"
    for i, day in enumerate(chain):
        out = tmp / ("d%d" % (i + 1))
        more = ["--reserve", str(reserve - 1)] if i == 2 else []
        assert update_main(day.update_args(previous, out) + more) == 0
        assert output_bytes(out) == full_run(day.today, args), i
        previous = out


def test_a_reserve_needs_top_k_and_its_file_is_checked(tmp_path, capsys):
    day = Day(tmp_path, *split_day(LINES, 4, 2, 0, seed=3))
    full_run(day.yesterday, ["--measure", "cosine", "--threshold", "0.4"], tmp_path / "t")
    err = refused(day, capsys, day.update_args(tmp_path / "t", tmp_path / "out")
                  + ["--reserve", "2"], prev=tmp_path / "t")
    assert "--reserve 2 keeps rows beyond --top-k" in err
    full_run(day.yesterday, ARGS, tmp_path / "k")
    err = refused(day, capsys, day.update_args(tmp_path / "k", tmp_path / "out")
                  + ["--reserve", str(2**31 - 2)], prev=tmp_path / "k")
    assert "--reserve 2147483646: with --top-k 3, at most 2147483644" in err
    (tmp_path / "none").mkdir()
    assert update_main(Day(tmp_path / "none", [], [], []).update_args(
        tmp_path / "k", tmp_path / "prev") + ["--reserve", "2"]) == 0
    reserve = tmp_path / "prev" / RESERVE_FILE
    reserve.write_bytes(reserve.read_bytes()[:-30])
    err = refused(day, capsys, day.update_args(tmp_path / "prev", tmp_path / "out"))
    assert "%s is not the file the run wrote" % RESERVE_FILE in err


def test_the_plan_of_a_first_reserve_is_one_whole_run(tmp_path, capsys):
    day = Day(tmp_path, *split_day(LINES, 5, 3, 1, seed=12))
    full_run(day.yesterday, ARGS, tmp_path / "prev")
    capsys.readouterr()
    args = day.update_args(tmp_path / "prev", tmp_path / "out")
    args = args[:args.index("-o")]
    assert update_main(args + ["--plan", "--reserve", "2"]) == 0
    whole = [l.split()[:4] for l in capsys.readouterr().out.splitlines()[1:-1]]
    assert update_main(args + ["--plan"]) == 0
    merged = [l.split()[:4] for l in capsys.readouterr().out.splitlines()[1:-1]]
    assert [w[:2] for w in whole] == [["a", "full"], ["update:", "one"]]
    assert [m[:3] for m in merged[1:]] == [["update", "run", "1,"], ["update", "run", "2"]]
    assert not (tmp_path / "out").exists()
