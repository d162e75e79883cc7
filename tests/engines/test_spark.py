"""The jobs on Spark (pyspark in local mode) through mrjob's Spark runner,
against the inline runner, on the corpus of tests/engines/support.py.

mrjob's Spark harness keeps records as byte strings between steps and groups
them by key (no sort): the escaping and the reducers must not rely on
Hadoop's framing or ordering.
"""
import os
import re
import tempfile
import uuid

import pytest

from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.inverted_index import MRInvertedIndex
from mrjobs.testing import run_job
from tests.engines.support import (
    COMMON, MAX_DF, TRICKY_DOCS, TRICKY_FEATURES, mrsparse_counters, run_cli, run_status,
    spark_args)
from tests.jobs_helpers import assert_scores_close

#: the fixtures (streaming_jar, task_python, corpus_files, ...)
pytest_plugins = ["tests.engines.fixtures"]
pytestmark = [pytest.mark.engines, pytest.mark.usefixtures("engine_env")]


@pytest.mark.smoke
def test_inverted_index(corpus_files):
    corpus, _ = corpus_files
    run = run_cli(MRInvertedIndex, ["--no-conf"] + spark_args() + [corpus])
    inline = run_job(MRInvertedIndex, None, (), input_paths=[corpus])
    assert run.lines == inline.lines          # JSON lines; compact records in between
    assert set(TRICKY_FEATURES) | {COMMON} <= {f.bytes for f, _ in run.output}
    assert mrsparse_counters(run.counters) == mrsparse_counters(inline.counters)


def test_compact_output_is_refused_on_spark():
    # found here: pyspark's saveAsTextFile turns each output line into a Java
    # String (UTF-8, invalid bytes -> U+FFFD), so binary output would come back
    # corrupted; the job says so at launch instead
    # (MRJob raises ValueError for argument errors given to its constructor)
    with pytest.raises(ValueError, match="Spark's text output cannot carry"):
        MRInvertedIndex(["-r", "spark", "--output-format", "compact", "in.txt"])
    MRInvertedIndex(["-r", "spark", "in.txt"])           # JSON output: fine


@pytest.mark.parametrize("fmt", ["compact", "postings"])
def test_compact_input_is_refused_on_spark(fmt):
    # found here: mrjob's Spark harness reads input as text, so each compact
    # record was counted as a malformed line after the whole run
    with pytest.raises(ValueError, match="--input-format %s reads binary records, which "
                                         "Spark's text input cannot carry" % fmt):
        MRSparseDotProducts(["-r", "spark", "--input-format", fmt, "in.txt"])
    MRSparseDotProducts(["-r", "spark", "--input-format", "json", "in.txt"])


@pytest.mark.parametrize("strategy", ["blocks", "stripes"])
@pytest.mark.smoke
def test_dot_products_cosine_top_k_max_df(corpus_files, strategy):
    corpus, _ = corpus_files
    args = ["--measure", "cosine", "--top-k", "3", "--max-df", str(MAX_DF),
            "--strategy", strategy]
    run = run_cli(MRSparseDotProducts, ["--no-conf"] + spark_args() + args + [corpus])
    inline = run_job(MRSparseDotProducts, None, args, input_paths=[corpus])
    got, want = dict(run.output), dict(inline.output)
    assert {uuid.UUID(bytes=d) for d in TRICKY_DOCS} <= set(want)
    assert_scores_close(got, want, rtol=1e-12)
    for k, row in want.items():
        assert list(got[k]) == list(row), k
    assert mrsparse_counters(run.counters) == mrsparse_counters(inline.counters)
    assert "mrsparse: skipped 4 bad input line(s)" in run.log
    check_quiet(run.log, len(MRSparseDotProducts(args).steps()))


def test_a_run_leaves_no_temp_dir(corpus_files, tmp_path, monkeypatch):
    # mrjob's Spark runner keeps step output in <temp dir>/<job key>-spark with a
    # local master and never removes it; mrsparse's runner does
    corpus, _ = corpus_files
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    run = run_cli(MRInvertedIndex, ["--no-conf"] + spark_args() + [corpus])
    assert run.output
    # (the zip of the packages the tasks import is built once per process and
    # removed when it exits: mrjobs.runtime.shipping)
    assert [p for p in os.listdir(temp) if not p.startswith("mrsparse-py-files-")] == []


def check_quiet(log, steps):
    """What a run on Spark shows (tests/engines/log4j2-spark.properties):
    mrjob's lines, one line a finished stage as progress, the counters,
    warnings and errors; not Spark's ~200 INFO lines a run, nor the JVM's
    notice on the incubator module Spark's launcher adds."""
    lines = log.splitlines()
    finished = [line for line in lines if " finished in " in line and "Stage " in line]
    assert len(finished) >= steps, log          # a stage or more a step
    for noise in ("Running Spark version", "BlockManager", "Starting task", "Registering",
                  "incubator modules", "native-hadoop", "No configs"):
        assert noise not in log, noise
    rest = [line for line in lines if not line.startswith("\t") and line not in finished]
    assert len(rest) <= 2 * steps + 15, "\n".join(rest)


def test_dot_products_queries(corpus_files):
    # --queries needs each mapper's input file, which mrjob's Spark runner only
    # provides with emulate_map_input_file: the job turns it on by itself
    corpus, queries = corpus_files
    args = ["--measure", "dot", "--queries", queries]
    run = run_cli(MRSparseDotProducts, ["--no-conf"] + spark_args() + args + [corpus])
    inline = run_job(MRSparseDotProducts, None, args, input_paths=[corpus])
    got, want = dict(run.output), dict(inline.output)
    assert len(want) >= 20 and all(k.bytes[0] == 0x0D for k in want)   # keyed by queries
    assert_scores_close(got, want, rtol=1e-12)
    assert mrsparse_counters(run.counters) == mrsparse_counters(inline.counters)


@pytest.mark.smoke
def test_the_prefix_strategy_gives_the_bytes_of_blocks(corpus_files):
    corpus, _ = corpus_files
    args = ["--measure", "cosine", "--threshold", "0.2", "--top-k", "5"]
    run = run_cli(MRSparseDotProducts, ["--no-conf"] + spark_args() + args
                  + ["--strategy", "prefix", corpus])
    inline = run_job(MRSparseDotProducts, None, args, input_paths=[corpus])
    assert sorted(run.lines) == sorted(inline.lines) and len(run.lines) > 20
    assert run.counters["mrsparse work"]["prefix entries sent"] > 0


def test_dot_products_pruned_under_threshold(tmp_path):
    # pruning is on by default under --threshold: Spark's output equals the
    # inline runner's with every product computed (--no-prune)
    from tests.pairs.test_prune import _sparse_corpus
    corpus = tmp_path / "sparse.jsonl"
    corpus.write_text("\n".join(_sparse_corpus()) + "\n")
    args = ["--measure", "cosine", "--threshold", "0.3", "--blocks", "3"]
    run = run_cli(MRSparseDotProducts, ["--no-conf"] + spark_args() + args + [str(corpus)])
    full = run_job(MRSparseDotProducts, None, args + ["--no-prune"], input_paths=[str(corpus)])
    assert sorted(run.lines) == sorted(full.lines) and len(run.lines) > 10
    work = run.counters["mrsparse work"]
    assert work["pruned: (row x column group) cells"] > 0
    assert work["products computed"] < full.counters["mrsparse work"]["products computed"]


@pytest.mark.smoke
def test_output_dir_gets_the_lines_of_stdout(corpus_files, tmp_path):
    # found: with --output-dir, mrjob made no local Spark temp dir, and its
    # harness failed in the first step making its counters' directory there
    corpus, _ = corpus_files
    args = ["--no-conf"] + spark_args() + ["--measure", "cosine", "--top-k", "3", corpus]
    out = tmp_path / "out"
    status, log = run_status(MRSparseDotProducts, args + ["--output-dir", str(out)])
    assert status == 0, log
    written = sorted(l for p in out.glob("part-*") for l in p.read_bytes().splitlines() if l)
    assert (out / "_SUCCESS").exists() and written == run_cli(MRSparseDotProducts, args).lines


def test_a_failed_step_under_quiet_says_so_in_one_line(corpus_files):
    corpus, _ = corpus_files
    args = ["--no-conf", "-q"] + spark_args() + ["--python-bin", "/nonexistent/python", corpus]
    status, log = run_status(MRSparseDotProducts, args)
    assert status == 1
    assert re.fullmatch(r"mrsparse: error: steps? [0-9-]+ of \d+ failed; run without -q "
                        r"for the runner's log of it", log.strip()), log
