"""``--ids any``: JSON lines whose ids are any strings or integers (features
any keys) give the lines of the same vectors keyed by their UUIDv5 keys, with
the ids given back -- every strategy, top-k and threshold, queries; ids are
never confused (7 and "7", a string that reads as a UUID); bad ids are
counted, and options that cannot carry them are refused."""
import json
import random
import subprocess
import sys
import uuid

import pytest

from mrjobs.counters import INPUT
from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.inverted_index import MRInvertedIndex
from mrjobs.jobprotocols import NamedNeighboursProtocol
from mrjobs.parsing import BAD_NAME, NAMESPACE, name_key
from mrjobs.testing import run_job
from tests.jobs_helpers import run


def named_corpus(n=60, seed=3, prefix="doc"):
    """Lines with string and integer ids (and ids that read as numbers or
    UUIDs) and word features."""
    rnd = random.Random(seed)
    ids = ["%s %d" % (prefix, i) if i % 3 else i for i in range(n)]
    ids[1], ids[2] = "7", 7 if n > 7 else ids[2]
    ids[4] = str(uuid.UUID(int=4))  # a string like a UUID: a name too
    lines = []
    for doc in ids:
        feats = {"w%d" % rnd.randrange(40): rnd.randint(1, 4) for _ in range(rnd.randint(1, 6))}
        lines.append(json.dumps({"id": doc, "features": feats}, ensure_ascii=False))
    lines.append(json.dumps({"id": "été ☃", "features": {"w1": 1, "w2": 2}}, ensure_ascii=False))
    return lines


def as_uuids(lines):
    """The same vectors keyed by UUIDs (each id and key mapped as --ids any maps it)."""
    out = []
    for line in lines:
        v = json.loads(line)
        out.append(json.dumps({"id": _text(name_key(v["id"])),
                               "features": {_text(name_key(k)): w
                                            for k, w in v["features"].items()}}))
    return out


def _text(raw):
    return str(uuid.UUID(bytes=raw))


def mapped_back(uuid_lines, lines):
    """A UUID run's output lines with the ids (and feature keys) in place of
    their UUIDs, as --ids any writes them."""
    names = {}
    for line in lines:
        v = json.loads(line)
        for name in [v["id"]] + list(v["features"]):
            names[_text(name_key(name))] = name
    out = []
    for line in uuid_lines:
        k, _, v = line.decode().partition("\t")
        pairs = json.loads(v)  # (a JSON object keeps its order)
        out.append(NamedNeighboursProtocol().write(
            names[json.loads(k)], "[%s]" % ", ".join(
                "[%s, %s]" % (json.dumps(names[n], ensure_ascii=False), json.dumps(s))
                for n, s in pairs.items())))
    return sorted(out)


@pytest.mark.parametrize("args", [
    ["--measure", "cosine", "--top-k", "3"],
    ["--measure", "jaccard", "--threshold", "0.2", "--strategy", "prefix"],
    ["--measure", "dot", "--strategy", "stripes", "--include-self"],
    ["--measure", "cosine", "--top-k", "2", "--max-df", "10", "--blocks", "3"],
])
def test_the_ids_come_back_on_the_lines_of_their_uuids(args):
    lines = named_corpus()
    named = run(args + ["--ids", "any"], lines)
    keyed = run(args, as_uuids(lines))
    assert named.lines == mapped_back(keyed.lines, lines) and len(named.lines) > 20
    assert named.counters[INPUT] == keyed.counters[INPUT]


@pytest.mark.parametrize("args", [[], ["--max-df", "5"]])
def test_the_index_gives_features_and_documents_their_ids(args):
    lines = named_corpus() + ['{"id": "w3", "features": {"w3": 1, "w4": 2}}']
    named = run(args + ["--ids", "any"], lines, job=MRInvertedIndex)
    keyed = run(args, as_uuids(lines), job=MRInvertedIndex)
    assert named.lines == mapped_back(keyed.lines, lines) and len(named.lines) > 10
    assert any(k == "w3" and ["w3", 1.0] in v for k, v in named.output)


def test_queries_keep_their_own_ids(tmp_path):
    lines, queries = named_corpus(), named_corpus(n=12, seed=9, prefix="query")
    path, upath = tmp_path / "q.jsonl", tmp_path / "uq.jsonl"
    path.write_text("\n".join(queries) + "\n", encoding="utf-8")
    upath.write_text("\n".join(as_uuids(queries)) + "\n")
    args = ["--measure", "cosine", "--top-k", "4"]
    named = run(args + ["--ids", "any", "--queries", str(path)], lines)
    keyed = run(args + ["--queries", str(upath)], as_uuids(lines))
    assert named.lines == mapped_back(keyed.lines, lines + queries) and named.lines
    assert {k for k, _ in named.output} <= {json.loads(q)["id"] for q in queries}


def test_seven_and_the_string_seven_are_two_vectors():
    lines = ['{"id": 7, "features": {"a": 1}}', '{"id": "7", "features": {"a": 1}}']
    got = dict(run(["--measure", "cosine", "--ids", "any"], lines).output)
    assert got == {7: [["7", 1.0]], "7": [[7, 1.0]]}
    assert name_key(7) == uuid.uuid5(NAMESPACE, "int:7").bytes != name_key("7")


def test_an_id_that_is_no_string_or_integer_is_counted_or_stops_strict():
    lines = ['{"id": 1.5, "features": {"a": 1}}', '{"id": "x", "features": {"a": 1}}',
             '{"id": "y", "features": {"a": 2}}']
    r = run(["--ids", "any"], lines)
    assert r.counters[INPUT][BAD_NAME] == 1 and dict(r.output) == {"x": [["y", 2.0]],
                                                                    "y": [["x", 2.0]]}
    with pytest.raises(Exception, match="vector id must be a string or an integer"):
        run(["--ids", "any", "--strict"], lines)


@pytest.mark.parametrize("extra, said", [
    (["--input-format", "tsv"], "reads JSON lines"),
    (["--output-format", "compact"], "writes JSON lines"),
])
def test_what_cannot_carry_ids_of_any_kind_is_refused(extra, said):
    with pytest.raises(ValueError, match="argument --ids: 'any' " + said):
        MRSparseDotProducts(["--ids", "any"] + extra)


@pytest.mark.slow
@pytest.mark.parametrize("runner", ["inline", "local"])
def test_the_command_line_writes_the_ids(tmp_path, runner):
    lines = named_corpus(n=30)
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = ["--measure", "cosine", "--threshold", "0.3"]
    cmd = [sys.executable, "-m", "mrjobs.dot_products", "-r", runner, "-q", str(path)]
    out = subprocess.run(cmd + args + ["--ids", "any"], capture_output=True, check=True)
    keyed = run_job(MRSparseDotProducts, as_uuids(lines), args)
    assert sorted(out.stdout.splitlines()) == mapped_back(keyed.lines, lines)
    # into --output-dir, committed as any output
    cmd += ["--output-dir", str(tmp_path / "out")]
    subprocess.run(cmd + args + ["--ids", "any"], capture_output=True, check=True)
    parts = sorted((tmp_path / "out").glob("part-*"))
    assert sorted(l for p in parts for l in p.read_bytes().splitlines()) == sorted(
        out.stdout.splitlines())


def test_awkward_ids_come_back_whole_one_line_each():
    names = ["tab\there", 'new\nline "quoted" \\ back', -5, 12345678901234567890123, "",
             "\u2028line separator", "été ☃"]
    lines = [json.dumps({"id": n, "features": {"x": 1, "f%d" % (i % 2): 1}})
             for i, n in enumerate(names)]
    r = run(["--measure", "cosine", "--ids", "any"], lines)
    assert sorted(map(repr, (k for k, _ in r.output))) == sorted(map(repr, names))
    for line in r.lines:  # one line each, also to str.splitlines
        assert len(line.decode("utf-8").splitlines()) == 1 and b"\t[[" in line


def test_the_planner_samples_ids_of_any_kind_as_the_job_reads_them(tmp_path):
    from mrjobs.plan.cli import parser, plan
    from mrjobs.plan.render import format_plan
    lines = named_corpus()
    named, keyed = tmp_path / "named.jsonl", tmp_path / "keyed.jsonl"
    named.write_text("\n".join(lines) + "\n", encoding="utf-8")
    keyed.write_text("\n".join(as_uuids(lines)) + "\n")
    plans = []
    for path, extra in ((named, ["--ids", "any"]), (keyed, [])):
        o = parser().parse_args([str(path), "--measure", "cosine", "--top-k", "3"] + extra)
        plans.append((plan(o), o))
    (a, oa), (b, _) = plans
    assert a["kept_entries"] == b["kept_entries"] > 0
    assert a["pairs"]["pairs"] == b["pairs"]["pairs"] > 0
    assert "--ids any: the second run" in format_plan(a, oa)
