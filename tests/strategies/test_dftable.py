"""The prefix strategy's df table (mrjobs.strategies.dftable): the first
run's counts are each feature's lines; the job's own run after it -- its
mappers sending every vector to its prefix features, or a vectors step first
where an id is on more than one line -- gives the bytes of the three steps
that find the df without a table, and of the blocks strategy; a feature the
table lacks stops the run in one line."""
import json
import os
import uuid
from collections import Counter

import numpy as np
import pytest

from mrjob.util import to_lines

from mrjobs.counters import PREFIX_PAIRS_DROPPED, PREFIX_PAIRS_MET_AGAIN, WORK
from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.strategies.dftable import DF_DTYPE, DfCount, DfRunProtocol, DfTable, write_table
from tests import jobs_helpers
from tests.jobs_helpers import corpus

ARGS = ["--measure", "cosine", "--threshold", "0.3"]


def _unique(lines):
    """The lines whose id no other line has."""
    ids = Counter(json.loads(l)["id"] for l in lines if l.strip())
    return [l for l in lines if l.strip() and ids[json.loads(l)["id"]] == 1]


UNIQUE = _unique(corpus(n=240, seed=11))


def _twice(lines):
    """``lines`` and two more: ids of two of them with the features of others
    (merged with their first lines by a vectors step)."""
    objs = [json.loads(l) for l in lines[:40]]
    whole = [o for o in objs if isinstance(o, dict) and o.get("features")]
    return lines + [json.dumps({"id": whole[i]["id"], "features": whole[i + 7]["features"]})
                    for i in (1, 2)]


LINES = _twice(UNIQUE)


def _df_run(lines, tmp_path, tasks=3):
    """The df run's step by hand: ``tasks`` map tasks, then the combiner and
    reducer of each key; the table written from the reducers' records."""
    job = MRSparseDotProducts(["--strategy", "prefix", "--prefix-df"] + ARGS)
    count, protocol = DfCount(job), DfRunProtocol()
    shuffled = {}
    for t in range(tasks):
        count.mapper_init()
        mine = [r for i in range(t, len(lines), tasks)
                for r in count.mapper(None, lines[i].encode())]
        for key, stripe in mine + list(count.mapper_final()):
            shuffled.setdefault(key, []).append(stripe)
    out = [protocol.write(k, v) for key, stripes in sorted(shuffled.items())
           for k, v in count.reducer(key, [s for _, s in count.combiner(key, stripes)])]
    path = tmp_path / "df-table"
    return path, write_table(out, str(path))


def test_the_table_holds_each_features_lines(tmp_path):
    lines = [l for l in LINES if l.strip()]
    path, (n, repeated, negative) = _df_run(lines, tmp_path)
    want, ids = Counter(), Counter()
    for line in lines:
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("features"), dict):
            continue
        try:
            keys = {uuid.UUID(k).bytes for k, v in obj["features"].items() if v}
            ids[uuid.UUID(obj["id"]).bytes] += 1
        except (ValueError, TypeError, AttributeError):
            continue
        want.update(keys)
    table = np.fromfile(path, DF_DTYPE)
    got = {bytes(r["id"]).ljust(16, b"\0"): int(r["df"]) for r in table}
    assert n == len(got) == len(want) and got == dict(want)
    assert list(table["id"]) == sorted(table["id"])
    assert repeated == sum(1 for c in ids.values() if c > 1) > 0
    # a table from lines with no id twice says so; the lines with a negative
    # weight are counted (none here)
    assert _df_run(UNIQUE, tmp_path)[1][1] == 0 and negative == 0
    assert _df_run(_negated(lines), tmp_path)[1][2] == 3


def _negated(lines, rows=(3, 5, 8)):
    """``lines`` with one weight of each line of ``rows`` (lines of features)
    negated."""
    out, seen = list(lines), 0
    for i, line in enumerate(lines):
        obj = json.loads(line) if line.startswith("{") else None
        if isinstance(obj, dict) and isinstance(obj.get("features"), dict) and obj["features"]:
            if seen in rows:
                k = sorted(obj["features"])[0]
                obj["features"][k] = -abs(obj["features"][k]) or -1.0
                out[i] = json.dumps(obj)
            seen += 1
    return out


_NEGATED = _negated(UNIQUE)


@pytest.mark.parametrize("lines", [LINES, UNIQUE, _NEGATED],
                         ids=["an id on two lines", "ids unique", "negative weights"])
@pytest.mark.parametrize("measure", ["cosine", "jaccard"])
def test_the_runs_give_the_bytes_of_the_three_steps_and_of_blocks(lines, measure):
    args = ["--measure", measure, "--threshold", "0.3"]
    blocks = jobs_helpers.run(args, lines, strategy="blocks")
    prefix = jobs_helpers.run(args, lines, strategy="prefix")  # the df run, then the job's
    assert prefix.lines and prefix.lines == blocks.lines
    # no weight negative (or binary weights): the copies carry no earlier
    # features, and pairs met again at later features are merged by the rows
    # step; with a negative weight, the earlier features drop them
    work = prefix.counters[WORK]
    again = lines is not _NEGATED or measure == "jaccard"
    assert (work.get(PREFIX_PAIRS_MET_AGAIN, 0) > 0) == again
    assert (work.get(PREFIX_PAIRS_DROPPED, 0) > 0) == (not again)
    # the job run without its launcher (mrjob's make_runner): no df table,
    # the three steps that find the df
    job = MRSparseDotProducts(["-r", "inline", "--no-conf", "--strategy", "prefix"] + args
                              + [_written(lines)])
    with job.make_runner() as runner:
        runner.run()
        alone = sorted(l.rstrip(b"\n") for l in to_lines(runner.cat_output()))
    assert alone == prefix.lines
    # the same report: each vector id counted once, the lines read, the skipped
    for group in ("mrsparse input", "mrsparse skipped"):
        assert prefix.counters.get(group) == blocks.counters.get(group)


def _written(lines, _cache={}):
    import tempfile
    key = hash(tuple(lines))
    if key not in _cache:
        fd, path = tempfile.mkstemp(suffix=".jsonl")
        with os.fdopen(fd, "w") as f:
            f.write("\n".join(lines) + "\n")
        _cache[key] = path
    return _cache[key]


def test_a_feature_the_table_lacks_stops_the_run(tmp_path):
    path, _ = _df_run(UNIQUE, tmp_path)
    table = np.fromfile(path, DF_DTYPE)
    table[1:].tofile(path)  # the first feature left out
    lacking = uuid.UUID(bytes=bytes(table["id"][0]).ljust(16, b"\0"))
    with pytest.raises(Exception, match="feature %s of vector .* is not in the prefix "
                       "strategy's df table.*the input changed" % lacking):
        jobs_helpers.run(ARGS + ["--df-table", str(path), "--unique-ids"], UNIQUE,
                         strategy="prefix")
    # the table read back: counts, and places in its ids' order
    df, places = DfTable(str(path)).lookup(b"\1" * 16, table["id"][1:3])
    assert df.tolist() == table["df"][1:3].astype(float).tolist()
    assert places.dtype == np.uint32 and places.tolist() == [0, 1]


def test_the_df_options_are_the_launchers():
    for args, words in ((["--prefix-df"], "--prefix-df: needs --strategy prefix"),
                        (["--strategy", "prefix", "--unique-ids"], "--unique-ids: needs "
                         "--df-table"),
                        (["--strategy", "prefix", "--max-df", "5", "--df-table", "x"],
                         "--df-table: needs --strategy prefix, without --max-df"),
                        (["--strategy", "prefix", "--input-format", "postings", "--prefix-df"],
                         "--prefix-df: needs .* on vectors")):
        with pytest.raises(ValueError, match=words):
            MRSparseDotProducts(ARGS + args)
