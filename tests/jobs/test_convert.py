"""python -m mrjobs.convert: lossless both ways, the jobs' vectors, bad input
counted as the jobs count it."""
import os
import re
import subprocess
import sys
import uuid
import zipfile

import numpy as np
import pytest

from mrcodecs import VectorProtocol
from mrjobs.convert import MRConvert
from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.inverted_index import MRInvertedIndex
from mrjobs.pairs.idarrays import sort_sum
from mrjobs.parsing import BAD_LINE, BAD_SUM, BAD_WEIGHT, InputError, parse_vector
from mrjobs.runtime.shipping import package_zip
from mrjobs.testing import run_job, write_lines
from tests.jobs_helpers import corpus

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINES = corpus(n=150)
A, B, C = (uuid.UUID(int=i) for i in (1, 2, 3))
F1, F2, F3 = (uuid.UUID(int=0x100 + i) for i in (1, 2, 3))


def convert(lines, to, args=(), runner="inline"):
    return run_job(MRConvert, lines, ["--to", to] + list(args), runner=runner)


def vectors(lines, fmt="auto"):
    """{doc UUID: (ids, float64 weights)} as the jobs read each line (sorted,
    summed, zeros dropped); a vector on several lines is kept as a list."""
    out = {}
    for line in lines:
        line = line.encode() if isinstance(line, str) else line
        try:
            parsed = parse_vector(line, fmt)
        except InputError:
            continue
        if parsed is None:
            continue
        ids, w = sort_sum(parsed[1], parsed[2])[:2]
        keep = w != 0.0
        out.setdefault(uuid.UUID(bytes=parsed[0]), []).append(
            (ids[keep].tolist(), w[keep].tolist()))
    return out


@pytest.mark.parametrize("source", ["json", "tsv"])
def test_round_trip_through_compact_gives_the_same_vectors(source):
    lines = corpus(n=150, fmt=source)
    compact = convert(lines, "compact")
    assert all(VectorProtocol().read(line) for line in compact.lines)
    back = convert(compact.lines, source, ["--input-format", "compact"])
    assert vectors(back.lines, source) == vectors(lines, source) != {}
    # the weights come back exactly (float64), not merely close
    doc, ids, w = parse_vector(back.lines[0], source)
    assert w.dtype == np.float64
    assert back.counters["mrsparse input"]["vectors read"] == len(vectors(lines))


def test_json_and_tsv_convert_into_each_other():
    tsv = convert(LINES, "tsv")
    assert all(b"\t" in line or len(line) == 36 for line in tsv.lines)
    json_again = convert(tsv.lines, "json", ["--input-format", "tsv"])
    assert vectors(json_again.lines) == vectors(LINES)
    assert all(line.startswith(b'{"id": "') for line in json_again.lines)


def test_weights_are_written_exactly():
    weights = [0.1, 1 / 3, 1e-300, 5e-324, -1.7976931348623157e308, 123456789.12345679, 2.0]
    feats = [uuid.UUID(int=0x200 + i) for i in range(len(weights))]
    line = '{"id": "%s", "features": {%s}}' % (A, ", ".join(
        '"%s": %r' % fw for fw in zip(feats, weights)))
    for to in ("json", "tsv", "compact"):
        out = convert([line], to)
        doc, ids, w = parse_vector(out.lines[0], to)
        assert w.tolist() == weights and ids.tobytes() == b"".join(f.bytes for f in feats)


def test_float32_writes_float32_records():
    out = convert(LINES, "compact", ["--float32"])
    assert all(line.split(b"\t", 1)[1][:1] == b"\x02" for line in out.lines)
    expected = {d: [(i, np.array(w, np.float32).astype(float).tolist()) for i, w in parts]
                for d, parts in vectors(LINES).items()}
    assert vectors(out.lines, "compact") == expected


@pytest.mark.parametrize("strategy", ["blocks", "stripes"])
@pytest.mark.slow
def test_the_jobs_give_the_same_lines_from_the_converted_corpus(strategy):
    compact = convert(LINES, "compact").lines
    args = ["--measure", "cosine", "--top-k", "5", "--strategy", strategy]
    a = run_job(MRSparseDotProducts, LINES, args)
    b = run_job(MRSparseDotProducts, compact, args + ["--input-format", "compact"])
    assert a.lines == b.lines and len(a.lines) > 100
    assert (run_job(MRInvertedIndex, compact, ["--input-format", "compact"]).lines
            == run_job(MRInvertedIndex, LINES).lines)


def test_duplicate_lines_become_one_vector_as_the_jobs_merge_them():
    lines = ['{"id": "%s", "features": {"%s": 1.5, "%s": 2}}' % (A, F1, F2),
             '{"id": "%s", "features": {"%s": 0.25, "%s": 1e-17}}' % (A, F1, F3),
             '{"id": "%s", "features": {"%s": -1e-17, "%s": 4}}' % (A, F3, F2),
             '%s\t%s:3 %s:3' % (B, F1, F1),
             '{"id": "%s", "features": {"%s": 1}}' % (C, F2),
             '{"id": "%s", "features": {"%s": -1}}' % (C, F2)]
    out = convert(lines, "json")
    assert vectors(out.lines) == {A: [([F1.bytes, F2.bytes], [1.75, 6.0])],
                                  B: [([F1.bytes], [6.0])], C: [([], [])]}
    c = out.counters["mrsparse input"]
    assert c["duplicate vector id (lines merged)"] == 3
    assert c["duplicate feature (weights summed)"] == 1 and c["zero weight (entry dropped)"] == 2
    for strategy in ("blocks", "stripes"):
        args = ["--strategy", strategy]
        assert (run_job(MRSparseDotProducts, out.lines, args).lines
                == run_job(MRSparseDotProducts, lines, args).lines)
    # the index alone differs: from the original lines it writes feature F3,
    # whose postings cancel across A's lines, with an empty posting list; the
    # converted corpus has no F3 (merged away, as the dot-products job merges)
    index = run_job(MRInvertedIndex, lines).lines
    assert run_job(MRInvertedIndex, out.lines).lines == [
        line for line in index if line != b'"%s"\t{}' % str(F3).encode()] != index


def test_a_sum_beyond_the_range_skips_the_vector_as_the_job_does(tmp_path):
    lines = ['{"id": "%s", "features": {"%s": 1e308}}' % (A, F1),
             '{"id": "%s", "features": {"%s": 1e308}}' % (A, F1),
             '{"id": "%s", "features": {"%s": 1}}' % (B, F1)]
    out = convert(lines, "json")
    assert vectors(out.lines) == {B: [([F1.bytes], [1.0])]}
    assert out.counters["mrsparse input"][BAD_SUM] == 2
    path = tmp_path / "in.jsonl"
    write_lines(path, lines)
    with pytest.raises(InputError, match="summed over its 2 lines"):
        run_job(MRConvert, None, ["--to", "json", "--strict"], input_paths=[str(path)])


def test_bad_lines_are_counted_as_the_jobs_count_them(tmp_path):
    bad_lines = ['{"id": "%s", "features": [1, 2]}' % C, "not a vector at all",
                 '{"id": "%s", "features": {"%s": NaN}}' % (C, F1), "%s\t%s:inf" % (C, F1),
                 "vector-7\t%s:1" % F1]
    lines = LINES[:20] + bad_lines
    out = convert(lines, "compact")
    job = run_job(MRInvertedIndex, lines)
    c, j = out.counters["mrsparse input"], job.counters["mrsparse input"]
    assert (c[BAD_LINE], c[BAD_WEIGHT]) == (j[BAD_LINE], j[BAD_WEIGHT]) == (2, 2)
    assert c["id not a UUID"] == j["id not a UUID"] == 1
    path = tmp_path / "in.jsonl"
    write_lines(path, lines)
    with pytest.raises(InputError, match=r"in\.jsonl, line 21: malformed line"):
        run_job(MRConvert, None, ["--to", "tsv", "--strict"], input_paths=[str(path)])


@pytest.mark.slow
@pytest.mark.smoke
def test_the_local_runner_converts_as_inline():
    compact = convert(LINES, "compact", runner="local")
    assert compact.lines == convert(LINES, "compact").lines
    back = convert(compact.lines, "json", ["--input-format", "compact"], runner="local")
    assert vectors(back.lines) == vectors(LINES)


@pytest.mark.slow
def test_the_compact_file_is_smaller_than_the_json_file(tmp_path):
    src = tmp_path / "corpus.jsonl"
    write_lines(src, corpus(n=300, fpv=30))
    out = tmp_path / "corpus.compact"
    # as a user runs it: the local runner's tasks run mrjobs/convert.py as a script
    proc = subprocess.run([sys.executable, "-m", "mrjobs.convert", "-r", "local", "--to",
                           "compact", str(src), "-o", str(out), "-q"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    parts = [p for p in os.listdir(out) if p.startswith("part-")]
    size = sum(os.path.getsize(out / p) for p in parts)
    assert 0 < size < os.path.getsize(src)
    lines = [l for p in sorted(parts) for l in (out / p).read_bytes().splitlines()]
    assert vectors(lines, "compact") == vectors(src.read_bytes().splitlines())


def test_options_of_the_jobs_that_mean_nothing_here_are_refused(capsys):
    with pytest.raises(SystemExit):
        MRConvert(["--help"])
    out = capsys.readouterr().out
    assert "--to" in out and "--input-format" in out and "--strict" in out
    for hidden in ("--max-df", "--output-format", "--buffer-entries"):
        assert not re.search(r"^\s+%s" % hidden, out, re.M)
    # (a job built outside __main__ raises argparse's errors as ValueError)
    for args, match in ((["--to", "json", "--max-df", "3"], "--max-df: the converter has no"),
                        (["--to", "json", "--output-format", "compact"], "the format is --to"),
                        ([], "required: --to")):
        with pytest.raises(ValueError, match=match):
            MRConvert(args)


def test_the_package_zip_ships_the_converter():
    with zipfile.ZipFile(package_zip()) as z:
        assert "mrjobs/convert.py" in z.namelist()
