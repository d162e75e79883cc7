"""bench.update: its targets from its rows, and its change sets (the runs
themselves: ``make bench``)."""
import json

from bench import update


def _row(name, ratio, same=True):
    return {"name": name, "update_cpu_s": ratio * 10.0, "full_cpu_s": 10.0,
            "cpu_ratio": ratio, "same_bytes": same}


def _ok(small=0.04, large=0.2, same=True):
    rows = [_row("1% new, 0.2% removed, top-10", small, same),
            _row("1% new, 0.2% removed, t=0.5", small),
            _row("10% changed, top-10", large)]
    return [c["pass"] for c in update.checks(rows)]


def test_the_targets_pass_and_fail_on_their_own_numbers():
    assert _ok() == [True, True, True]
    assert _ok(small=0.06) == [False, False, True]
    assert _ok(large=0.3) == [True, True, False]
    assert _ok(same=False) == [False, True, True]


def test_the_change_sets_are_what_the_rows_say(tmp_path):
    corpus, sets = update.change_sets(tmp_path, 1000)
    ids = [json.loads(l)["id"] for l in corpus.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 1000
    add, remove = sets["1% new, 0.2% removed"]
    added = [json.loads(l)["id"] for l in add.read_text().splitlines()]
    assert len(added) == 10 and not set(added) & set(ids)
    assert len(remove.read_text().split()) == 2 and set(remove.read_text().split()) <= set(ids)
    add, remove = sets["10% changed"]
    changed = [json.loads(l)["id"] for l in add.read_text().splitlines()]
    assert sorted(changed) == sorted(remove.read_text().split()) and len(changed) == 100
