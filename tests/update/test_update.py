"""The update run (mrjobs.update): today's output is byte for byte what a full run
on today's corpus writes, for top-k and threshold, every measure, drawn change
sets; bad inputs get one line and leave everything as it was."""
import hashlib
import io
import json
import logging
import os
import random
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.parsing import InputError, parse_vector
from mrjobs.runtime.manifest import MANIFEST
from mrjobs.update.__main__ import main as update_main
from tests import jobs_helpers

MEASURES = ("dot", "cosine", "pearson", "tanimoto", "euclidean", "jaccard", "overlap",
            "cooccurrence", "cityblock")
THRESHOLDS = {"cooccurrence": "2", "euclidean": "0.3", "dot": "1.5", "cityblock": "0.2"}


def full_run(corpus, args, out=None, runner="inline"):
    """``python -m mrjobs.dot_products CORPUS ARGS [-o OUT]`` in-process; its
    stdout (the lines, where there is no ``out``)."""
    argv = [str(corpus), "-r", runner, "-q", "--no-conf"] + list(args) + (
        ["--output-dir", str(out)] if out else [])
    job = MRSparseDotProducts(argv)
    stdout, stderr = io.BytesIO(), io.BytesIO()
    job.sandbox(stdin=io.BytesIO(), stdout=stdout, stderr=stderr)
    saved = [(g, list(g.handlers), g.level) for g in map(logging.getLogger,
                                                           ("mrjob", "mrjobs", "__main__"))]
    try:
        job.execute()
    except SystemExit as e:
        raise AssertionError("job failed (%s): %s" % (e.code, stderr.getvalue()[-3000:]))
    finally:
        for g, handlers, level in saved:
            g.handlers[:] = handlers
            g.setLevel(level)
    return stdout.getvalue()


def output_bytes(directory):
    names = sorted(n for n in os.listdir(directory) if n.startswith("part-"))
    return b"".join(open(os.path.join(directory, n), "rb").read() for n in names)


def tree_digest(directory):
    h = hashlib.sha256()
    for folder, dirs, files in sorted(os.walk(directory)):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            h.update(path.encode() + b"\0" + open(path, "rb").read())
    return h.hexdigest()


class Day:
    """A corpus and a change set, written as files: yesterday's corpus,
    --add, --remove, and today's corpus as a user would write it."""

    def __init__(self, tmp, lines, add, remove):
        self.tmp = tmp
        self.yesterday = tmp / "yesterday.jsonl"
        self.yesterday.write_text("".join(l + "\n" for l in lines))
        self.add = tmp / "add.jsonl"
        self.add.write_text("".join(l + "\n" for l in add))
        self.remove = tmp / "remove.txt"
        self.remove.write_text("".join(i + "\n" for i in remove))
        gone = set(remove)
        today = [l for l in lines if not _has_id(l, gone)] + list(add)
        self.today = tmp / "today.jsonl"
        self.today.write_text("".join(l + "\n" for l in today))

    def update_args(self, previous, out):
        return ["--previous", str(previous), "--add", str(self.add), "--remove",
                str(self.remove), "-o", str(out), "-q"]


def _has_id(line, ids):
    return _safe_id(line) in ids


def split_day(lines, n_add, n_remove, n_edit, seed):
    """Yesterday's lines, added lines, removed ids (the edited ones among both)."""
    rng = random.Random(seed)
    once = [l for l in lines if _safe_id(l) and sum(_safe_id(m) == _safe_id(l)
                                                    for m in lines) == 1]
    add = once[-n_add:] if n_add else []
    yesterday = [l for l in lines if l not in add]
    remove = rng.sample(vector_ids(yesterday), n_remove + n_edit)
    for i in remove[n_remove:]:  # edited: removed and added again, changed
        old = json.loads(next(l for l in yesterday if _has_id(l, {i})))
        old["features"] = {k: v * 3 for k, v in list(old["features"].items())[:-1]} or {
            str(uuid.UUID(int=7)): 1.0}
        add.append(json.dumps(old))
    return yesterday, add, remove


def _safe_id(line):
    """The id of a line the job reads as a vector (canonical), else None."""
    try:
        parsed = parse_vector(line.encode("utf-8"))
    except (InputError, UnicodeEncodeError):
        return None
    return None if parsed is None else str(uuid.UUID(bytes=bytes(parsed[0])))


def vector_ids(lines):
    return sorted({i for i in map(_safe_id, lines) if i})


def updated(tmp, day, args, runner="inline"):
    """Yesterday's full run, the update, and today's full run: (update's bytes,
    full run's bytes)."""
    prev, out = tmp / "prev", tmp / "out"
    full_run(day.yesterday, args, prev, runner)
    before = tree_digest(prev)
    rc = update_main(day.update_args(prev, out) + ["-r", runner])
    assert rc == 0
    assert tree_digest(prev) == before
    return output_bytes(out), full_run(day.today, args, runner=runner)


LINES = jobs_helpers.corpus(n=240, fpv=6, vocab=400, seed=11)


@pytest.mark.parametrize("measure", MEASURES)
@pytest.mark.parametrize("mode", ["top-k", "threshold"])
def test_the_update_writes_the_full_runs_bytes(tmp_path, measure, mode):
    day = Day(tmp_path, *split_day(LINES, 12, 5, 3, seed=len(measure)))
    args = ["--measure", measure] + (["--top-k", "4"] if mode == "top-k" else
                                     ["--threshold", THRESHOLDS.get(measure, "0.4")])
    got, want = updated(tmp_path, day, args)
    assert want and got == want


@pytest.mark.parametrize("mode", [["--top-k", "3"], ["--threshold", "0.4"]])
def test_include_self_updates_too(tmp_path, mode):
    day = Day(tmp_path, *split_day(LINES, 12, 6, 2, seed=21))
    got, want = updated(tmp_path, day, ["--measure", "cosine", "--include-self"] + mode)
    assert want and got == want


def test_an_update_of_an_update_is_a_full_run_too(tmp_path):
    lines, add, remove = split_day(LINES, 20, 6, 2, seed=5)
    first = Day(tmp_path, lines, add[:10], remove[:4])
    args = ["--measure", "cosine", "--top-k", "3"]
    full_run(first.yesterday, args, tmp_path / "d1")
    assert update_main(first.update_args(tmp_path / "d1", tmp_path / "d2")) == 0
    today = first.today.read_text().splitlines()
    (tmp_path / "x").mkdir()
    second = Day(tmp_path / "x", today, add[10:],
                 [i for i in remove[4:] if i in vector_ids(today)])
    assert update_main(second.update_args(tmp_path / "d2", tmp_path / "d3")) == 0
    manifest = json.loads((tmp_path / "d3" / MANIFEST).read_text())
    assert [i["path"] for i in manifest["inputs"]] == ["_corpus/part-00000",
                                                      "_corpus/part-00001"]
    corpus = b"".join((tmp_path / "d3" / "_corpus" / n).read_bytes()
                      for n in ("part-00000", "part-00001"))
    assert sorted(corpus.splitlines()) == sorted(second.today.read_bytes().splitlines())
    assert output_bytes(tmp_path / "d3") == full_run(second.today, args)


@settings(max_examples=12, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data(), top=st.sampled_from([None, 1, 3, 8]),
       measure=st.sampled_from(["cosine", "dot", "jaccard"]), with_self=st.booleans())
def test_drawn_change_sets_give_the_full_runs_bytes(tmp_path_factory, data, top, measure,
                                                    with_self):
    """Adds, removals, edits, duplicate lines of a vector, a vector removed and
    added back, an added vector without features, ties (few features)."""
    tmp = tmp_path_factory.mktemp("drawn")
    seed = data.draw(st.integers(0, 2**16))
    lines = jobs_helpers.corpus(n=60, fpv=3, vocab=25, seed=seed)
    ids = vector_ids(lines)
    remove = data.draw(st.lists(st.sampled_from(ids), unique=True, max_size=8))
    back = data.draw(st.lists(st.sampled_from(remove), unique=True)) if remove else []
    add = [l for l in lines if _safe_id(l) in set(back)]  # removed and added back as it was
    for n in range(data.draw(st.integers(0, 5))):
        feats = data.draw(st.dictionaries(st.sampled_from(
            [str(uuid.UUID(int=f)) for f in range(1, 9)]), st.sampled_from([1.0, 2.0, 0.5]),
            max_size=3))
        line = json.dumps({"id": str(uuid.UUID(int=10**6 + n)), "features": feats})
        add += [line] * data.draw(st.integers(1, 2))  # a vector on two lines: merged
    day = Day(tmp, lines, add, remove)
    args = ["--measure", measure] + (["--top-k", str(top)] if top else
                                     ["--threshold", "0.3" if measure != "dot" else "1"])
    got, want = updated(tmp, day, args + (["--include-self"] if with_self else []))
    assert got == want


def test_an_update_that_changes_most_rows_is_one_full_run(tmp_path, capsys):
    day = Day(tmp_path, *split_day(LINES, 150, 40, 0, seed=6))
    args = ["--measure", "cosine", "--top-k", "4"]
    prev, out = tmp_path / "prev", tmp_path / "out"
    full_run(day.yesterday, args, prev)
    assert update_main(day.update_args(prev, out)[:-1]) == 0  # (not -q: its log)
    assert "are computed again: one run of the job on today's corpus instead" in (
        capsys.readouterr().err)
    assert output_bytes(out) == full_run(day.today, args)


def test_the_plan_weighs_the_update_against_a_full_run_and_runs_nothing(tmp_path, capsys):
    day = Day(tmp_path, *split_day(LINES, 5, 3, 1, seed=12))
    prev = tmp_path / "prev"
    full_run(day.yesterday, ["--measure", "cosine", "--top-k", "4"], prev)
    capsys.readouterr()
    args = day.update_args(prev, tmp_path / "out")
    assert update_main(args[:args.index("-o")] + ["--plan"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {l[:28].strip(): float(l.split()[-1]) for l in lines[1:-1]}
    assert set(rows) == {"a full run on today's corpus", "update run 1, both ways",
                         "update run 2"}
    assert rows["update run 1, both ways"] + rows["update run 2"] < rows[
        "a full run on today's corpus"]
    assert lines[-1].startswith("the update: ") and not (tmp_path / "out").exists()
    assert not [n for n in os.listdir(tmp_path) if "mrsparse" in n]


def test_loglikelihood_updates_while_the_features_stay_and_is_refused_else(tmp_path, capsys):
    lines, add, remove = split_day(LINES, 0, 3, 0, seed=1)
    base = ["--measure", "loglikelihood", "--top-k", "3"]
    n = len({f.tobytes() for l in lines if _safe_id(l)
             for f in parse_vector(l.encode())[1]})
    ok = Day(tmp_path, lines, [], remove[:0])
    got, want = updated(tmp_path, ok, base + ["--num-features", str(n)])
    assert got == want
    new = json.dumps({"id": str(uuid.UUID(int=99)), "features": {str(uuid.UUID(int=98)): 1}})
    bad = Day(tmp_path, lines, [new], [])
    assert update_main(bad.update_args(tmp_path / "prev", tmp_path / "out2")) == 1
    err = capsys.readouterr().err
    assert "%d yesterday, %d today" % (n, n + 1) in err and not (tmp_path / "out2").exists()


def test_the_local_runner_gives_the_same_bytes(tmp_path):
    day = Day(tmp_path, *split_day(LINES, 8, 4, 2, seed=9))
    got, want = updated(tmp_path, day, ["--measure", "cosine", "--top-k", "5"], runner="local")
    assert got == want


def test_a_runs_manifest_names_its_options_inputs_and_part_files(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(l + "\n" for l in LINES))
    full_run(corpus, ["--measure", "jaccard", "--top-k", "3"], tmp_path / "out",
             runner="local")
    manifest = json.loads((tmp_path / "out" / MANIFEST).read_text())
    assert manifest["job"] == "dot_products" and manifest["format"] == "mrsparse-manifest/1"
    assert manifest["options"]["measure"] == "jaccard" and manifest["options"]["top_k"] == 3
    assert manifest["inputs"] == [{"path": str(corpus), "bytes": corpus.stat().st_size,
                                   "sha256": hashlib.sha256(corpus.read_bytes()).hexdigest()}]
    parts = sorted(p.name for p in (tmp_path / "out").glob("part-*"))
    assert [o["name"] for o in manifest["output"]] == parts and [
        o["sha256"] for o in manifest["output"]] == [
        hashlib.sha256((tmp_path / "out" / n).read_bytes()).hexdigest() for n in parts]
    # --ids any: its output comes from a second run; no manifest
    named = tmp_path / "named.jsonl"
    named.write_text('{"id": "a", "features": {"x": 1}}\n{"id": "b", "features": {"x": 2}}\n')
    full_run(named, ["--ids", "any"], tmp_path / "named")
    assert (tmp_path / "named" / "_SUCCESS").exists()
    assert not (tmp_path / "named" / MANIFEST).exists()


# -- refusals: one line, nothing written, yesterday as it was -------------------


@pytest.fixture
def yesterday(tmp_path):
    day = Day(tmp_path, *split_day(LINES, 6, 3, 1, seed=2))
    full_run(day.yesterday, ["--measure", "cosine", "--top-k", "3"], tmp_path / "prev",
             runner="local")
    return day


def refused(day, capsys, argv, prev=None):
    prev = prev or day.tmp / "prev"
    before = tree_digest(prev) if prev.is_dir() else None
    assert update_main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("mrsparse: error: "), err
    assert not (day.tmp / "out").exists()
    assert not [n for n in os.listdir(day.tmp) if "mrsparse" in n]
    if before:
        assert tree_digest(prev) == before
    return err[0]


def test_a_changed_part_file_is_refused(yesterday, capsys):
    part = sorted((yesterday.tmp / "prev").glob("part-*"))[-1]
    part.write_bytes(part.read_bytes()[:-20])
    err = refused(yesterday, capsys, yesterday.update_args(yesterday.tmp / "prev",
                                                           yesterday.tmp / "out"))
    assert "%s is not the file the run wrote" % part.name in err


def test_a_missing_part_file_is_refused(yesterday, capsys):
    part = sorted((yesterday.tmp / "prev").glob("part-*"))[0]
    part.unlink()
    err = refused(yesterday, capsys, yesterday.update_args(yesterday.tmp / "prev",
                                                           yesterday.tmp / "out"))
    assert "%s is missing" % part.name in err and "partial" in err


def test_a_changed_corpus_is_refused_and_a_moved_one_found(yesterday, capsys):
    moved = yesterday.tmp / "moved.jsonl"
    os.rename(yesterday.yesterday, moved)
    args = yesterday.update_args(yesterday.tmp / "prev", yesterday.tmp / "out")
    assert "is not there: give it with --corpus" in refused(yesterday, capsys, args)
    with open(moved, "a") as f:
        f.write(LINES[0] + "\n")
    err = refused(yesterday, capsys, args + ["--corpus", str(moved)])
    assert "the corpus changed since" in err
    moved.write_bytes(moved.read_bytes()[:-len(LINES[0]) - 1])
    assert update_main(args + ["--corpus", str(moved)]) == 0


def test_change_sets_that_do_not_apply_are_refused(yesterday, capsys):
    args = yesterday.update_args(yesterday.tmp / "prev", yesterday.tmp / "out")
    unknown = str(uuid.UUID(int=12345))
    yesterday.remove.write_text(unknown + "\n")
    assert ("%s is not a vector of yesterday's corpus" % unknown) in refused(
        yesterday, capsys, args)
    yesterday.remove.write_text("not-an-id\n")
    assert "line 1: 'not-an-id' is not a vector id" in refused(yesterday, capsys, args)
    yesterday.remove.write_text("")
    kept = next(l for l in yesterday.yesterday.read_text().splitlines() if _safe_id(l))
    yesterday.add.write_text(kept + "\n")
    assert "which yesterday's corpus holds and --remove does not name" in refused(
        yesterday, capsys, args)
    yesterday.add.write_text('{"id": "x", "features": {}}\n')
    assert "--add %s line 1:" % yesterday.add in refused(yesterday, capsys, args)


def test_other_options_and_places_are_refused(yesterday, capsys, tmp_path):
    prev = tmp_path / "prev"
    args = yesterday.update_args(prev, tmp_path / "out")
    err = refused(yesterday, capsys, args + ["--top-k", "5"])
    assert "--top-k 5: " in err and "made with --top-k 3" in err
    same = yesterday.update_args(prev, tmp_path / "ok") + ["--top-k", "3", "--measure", "cosine"]
    assert update_main(same) == 0
    err = refused(yesterday, capsys, yesterday.update_args(prev, prev / "today"))
    assert "never touches yesterday's output" in err
    err = refused(yesterday, capsys, yesterday.update_args(tmp_path, tmp_path / "o"),
                  prev=tmp_path)
    assert "has no %s" % MANIFEST in err


def test_a_stray_path_or_a_misspelt_option_is_one_line(yesterday, capsys, tmp_path):
    args = yesterday.update_args(tmp_path / "prev", tmp_path / "out")
    err = refused(yesterday, capsys, args + [str(yesterday.add)])
    assert "%s: an update takes no input path" % yesterday.add in err
    err = refused(yesterday, capsys, args + ["--top-kk", "3"])
    assert "unrecognized arguments: --top-kk (did you mean --top-k?)" in err
    with pytest.raises(SystemExit) as e:  # (argparse's, naming the update's own option)
        update_main(args + ["--remvoe", str(yesterday.remove)])
    assert e.value.code == 2
    assert "unrecognized argument --remvoe (did you mean --remove?)" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_run_whose_lines_follow_the_whole_corpus_is_refused(tmp_path, capsys):
    day = Day(tmp_path, *split_day(LINES, 2, 1, 0, seed=4))
    full_run(day.yesterday, ["--measure", "cosine", "--max-df", "50"], tmp_path / "prev")
    err = refused(day, capsys, day.update_args(tmp_path / "prev", tmp_path / "out"))
    assert "made with --max-df" in err and "run the job whole" in err
