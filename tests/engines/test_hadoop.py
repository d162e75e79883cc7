"""The jobs on real Apache Hadoop Streaming (local mode: LocalJobRunner,
file:/// paths), through mrjob's hadoop runner, against the inline runner.

One corpus (tests/engines/support.py) has ids with every byte value, TAB,
LF, CR and the escape byte included, also as the last byte, bad input
lines, and a feature over ``--max-df``.  Each test is one Hadoop run
(30-90 s), compared with the inline runner on the same input.
"""
import os
import re
import shutil
import subprocess
import uuid

import pytest

from mrjobs.convert import MRConvert
from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.inverted_index import MRInvertedIndex
from mrjobs.testing import run_job
from tests.engines.support import (
    BAD_LINES, CACHE, CLIENT_LIB, COMMON, EXAMPLE_CONF, LAUNCHER, MAX_DF, TRICKY_DOCS,
    TRICKY_FEATURES, hadoop_args, mrsparse_counters, run_cli, run_status)
from tests.jobs_helpers import as_dict, assert_scores_close

#: the fixtures (streaming_jar, task_python, corpus_files, ...)
pytest_plugins = ["tests.engines.fixtures"]
pytestmark = [pytest.mark.engines, pytest.mark.usefixtures("engine_env")]


@pytest.mark.smoke
def test_inverted_index_compact_output_with_example_conf(streaming_jar, hadoop_tmp,
                                                           corpus_files):
    # examples/conf/hadoop.mrjob.conf as a user would use it (Snappy map-output
    # compression), with two reducers so the output comes in two part files
    corpus, _ = corpus_files
    args = ["--output-format", "compact"]
    run = run_cli(MRInvertedIndex, ["-c", os.path.join(EXAMPLE_CONF, "hadoop.mrjob.conf"),
                                    "-D", "mapreduce.job.reduces=2"]
                  + hadoop_args(streaming_jar, hadoop_tmp / "index") + args + [corpus])
    inline = run_job(MRInvertedIndex, None, args, input_paths=[corpus])
    # binary records with escaped TAB/LF/CR in keys and values: byte for byte
    assert run.lines == inline.lines
    features = {f.bytes for f, _ in run.output}
    assert set(TRICKY_FEATURES) | {COMMON} <= features
    assert mrsparse_counters(run.counters) == mrsparse_counters(inline.counters)
    # the conf's map-output codec is in use: the shuffle's bytes are compressed
    # (the launcher no longer prints Hadoop's INFO lines, "[.snappy]" among them)
    (mr,) = [names for g, names in run.counters.items() if g.strip() == "Map-Reduce Framework"]
    assert mr["Map output materialized bytes"] < mr["Map output bytes"], mr
    assert "Running step 1 of 1" in run.log


@pytest.mark.parametrize("strategy", ["blocks", "stripes"])
@pytest.mark.smoke
def test_dot_products_cosine_top_k_max_df(streaming_jar, hadoop_tmp, corpus_files, strategy):
    corpus, _ = corpus_files
    args = ["--measure", "cosine", "--top-k", "3", "--max-df", str(MAX_DF),
            "--strategy", strategy]
    argv = ["--no-conf"] + hadoop_args(
        streaming_jar, hadoop_tmp / ("cosine-" + strategy)) + args + [corpus]
    run = run_cli(MRSparseDotProducts, argv)
    inline = run_job(MRSparseDotProducts, None, args, input_paths=[corpus])
    got, want = as_dict(run), as_dict(inline)
    assert {uuid.UUID(bytes=d) for d in TRICKY_DOCS} <= set(want)
    assert all(len(row) <= 3 for row in got.values())
    assert_scores_close(got, want, rtol=1e-12)
    for k, row in want.items():               # same order: best first, ties by UUID
        assert list(got[k]) == list(row), k

    # the counters: in runner.counters(), equal to inline's ...
    assert len(run.step_counters) == len(MRSparseDotProducts(argv).steps())
    assert mrsparse_counters(run.counters) == mrsparse_counters(inline.counters)
    bad = run.counters["mrsparse input"]
    assert {name: bad.get(name) for name in BAD_LINES} == {
        name: len(lines) for name, lines in BAD_LINES.items()}
    assert run.counters["mrsparse df-cut"]["features dropped"] == 1
    # ... and in what the user sees: mrjob's counter listing and our summary
    assert "mrsparse input" in run.log and "mrsparse df-cut" in run.log
    assert "\t\tmalformed line=2\n" in run.log
    assert "\t\tfeatures dropped=1\n" in run.log
    assert "mrsparse: skipped 4 bad input line(s)" in run.log
    assert "mrsparse: --max-df dropped 1 feature(s)" in run.log
    check_quiet(run.log, len(run.step_counters))


def check_quiet(log, steps):
    """What a local-mode run shows: mrjob's lines, each step's job id,
    progress and counters, warnings and errors; not Hadoop's other INFO lines,
    not the ``sh -x`` trace of each task's wrapper script, not local mode's
    tracking URL (nothing is served there)."""
    lines = log.splitlines()
    assert "Running step %d of %d" % (steps, steps) in log
    assert log.count(" map 100% reduce 100%") == steps
    assert [line for line in lines if line.startswith("+ ")] == []
    for noise in ("The url to track the job", "metrics system already initialized",
                  "No configs", "Total input files to process", "number of splits:",
                  "native-hadoop", "running in uber mode"):
        assert noise not in log, noise
    # nor a complaint of log4j2 about its configuration (its status logger's lines)
    assert not re.search(r"Z main (ERROR|WARN) ", log), log
    # counters (tab-indented) and progress lines aside: about 7 lines a step
    # (step, job id, uber mode, completed, output dir, ...) and a few for the run
    rest = [line for line in lines if not line.startswith(("\t", "Counters: ", "   map "))]
    assert len(rest) <= 8 * steps + 12, "\n".join(rest)


def test_local_mode_on_the_client_jars_alone(streaming_jar, hadoop_tmp, corpus_files,
                                            task_python, monkeypatch):
    # what `make hadoop` fetches is all local mode needs: the launcher's
    # classpath is the conf dir, the streaming jar and the jars of
    # tests/engines/hadoop-client/pom.xml, nothing of pyspark's; a job run with
    # no python with pyspark on PATH and tasks on a python without it (numpy
    # and scipy only) gives the inline runner's output
    cp = subprocess.run([LAUNCHER, "classpath"], check=True, stdout=subprocess.PIPE,
                        text=True).stdout.strip().split(":")
    assert cp[1:] == [os.path.join(CACHE, "hadoop-streaming-3.4.2.jar"),
                      os.path.join(CLIENT_LIB, "*")], cp
    jars = sorted(n.rsplit("-", 1)[0] for n in os.listdir(CLIENT_LIB))
    assert jars == ["commons-cli", "hadoop-client-api", "hadoop-client-runtime",
                    "jcl-over-slf4j", "log4j-1.2-api", "log4j-api", "log4j-core",
                    "log4j-slf4j2-impl", "lz4-java", "slf4j-api", "snappy-java"]
    path = os.path.dirname(os.path.realpath(shutil.which("java"))) + ":/usr/bin:/bin"
    python3 = shutil.which("python3", path=path)
    if python3:
        assert subprocess.run([python3, "-c", "import importlib.util as u, sys; "
                               "sys.exit(u.find_spec('pyspark') is not None)"]).returncode == 0
    monkeypatch.setenv("PATH", path)
    monkeypatch.delenv("MRSPARSE_PYTHON", raising=False)
    corpus, _ = corpus_files
    run = run_cli(MRConvert, ["--no-conf"] + hadoop_args(
        streaming_jar, hadoop_tmp / "client-jars", python_bin=task_python)
        + ["--to", "compact", corpus])
    assert run.lines == run_job(MRConvert, None, ["--to", "compact"], input_paths=[corpus]).lines
    assert len(run.lines) > 250
    check_quiet(run.log, 1)


def test_dot_products_queries_on_task_python(streaming_jar, hadoop_tmp, corpus_files,
                                            task_python):
    # the task interpreter has numpy and scipy, nothing else: mrjob and mrsparse
    # must arrive with the job (mrjob.zip, mrsparse.zip)
    corpus, queries = corpus_files
    args = ["--measure", "dot", "--queries", queries]
    run = run_cli(MRSparseDotProducts, ["--no-conf"] + hadoop_args(
        streaming_jar, hadoop_tmp / "queries", python_bin=task_python) + args + [corpus])
    inline = run_job(MRSparseDotProducts, None, args, input_paths=[corpus])
    got, want = as_dict(run), as_dict(inline)
    assert len(want) >= 20 and all(k.bytes[0] == 0x0D for k in want)   # keyed by queries
    assert_scores_close(got, want, rtol=1e-12)
    assert len(run.step_counters) == len(MRSparseDotProducts(args).steps())
    assert mrsparse_counters(run.counters) == mrsparse_counters(inline.counters)


@pytest.mark.smoke
def test_the_prefix_strategy_gives_the_bytes_of_blocks(streaming_jar, hadoop_tmp,
                                                       corpus_files):
    # the df run, then the job's two steps (every id of the corpus on one
    # line: the mappers send the vectors to their prefix features) through
    # real Hadoop Streaming: the same lines as blocks inline
    corpus, _ = corpus_files
    args = ["--measure", "cosine", "--threshold", "0.2", "--top-k", "5"]
    run = run_cli(MRSparseDotProducts, ["--no-conf"] + hadoop_args(
        streaming_jar, hadoop_tmp / "prefix") + args + ["--strategy", "prefix", corpus])
    inline = run_job(MRSparseDotProducts, None, args, input_paths=[corpus])
    assert run.lines == sorted(inline.lines) and len(run.lines) > 20
    assert run.counters["mrsparse work"]["prefix entries sent"] > 0
    assert len(run.step_counters) == 2


def test_dot_products_pruned_under_threshold(streaming_jar, hadoop_tmp):
    # pruning is on by default under --threshold: Hadoop's output equals the
    # inline runner's with every product computed (--no-prune)
    from tests.pairs.test_prune import _sparse_corpus
    corpus = hadoop_tmp / "sparse.jsonl"
    corpus.write_text("\n".join(_sparse_corpus()) + "\n")
    args = ["--measure", "cosine", "--threshold", "0.3", "--blocks", "3"]
    run = run_cli(MRSparseDotProducts, ["--no-conf"] + hadoop_args(
        streaming_jar, hadoop_tmp / "pruned") + args + [str(corpus)])
    full = run_job(MRSparseDotProducts, None, args + ["--no-prune"], input_paths=[str(corpus)])
    assert run.lines == sorted(full.lines) and len(run.lines) > 10
    work = run.counters["mrsparse work"]
    assert work["pruned: (row x column group) cells"] > 0
    assert work["products computed"] < full.counters["mrsparse work"]["products computed"]


@pytest.mark.smoke
def test_convert_to_compact_then_run_from_it_and_convert_back(streaming_jar, hadoop_tmp,
                                                             corpus_files):
    # the converter on Hadoop: binary records whose keys hold TAB, LF, CR and
    # the escape byte come out of Hadoop's text output and go back into its
    # text input; the products job reads them as it reads the JSON lines, and
    # converting back gives the inline converter's JSON, byte for byte
    corpus, _ = corpus_files
    compact = run_cli(MRConvert, ["--no-conf"] + hadoop_args(
        streaming_jar, hadoop_tmp / "to-compact") + ["--to", "compact", corpus])
    assert compact.lines == run_job(MRConvert, None, ["--to", "compact"],
                                    input_paths=[corpus]).lines
    assert {uuid.UUID(bytes=d) for d in TRICKY_DOCS} <= {doc for doc, _ in compact.output}
    assert compact.counters["mrsparse input"]["malformed line"] == len(BAD_LINES["malformed line"])
    copy = hadoop_tmp / "corpus.compact"
    copy.write_bytes(b"".join(line + b"\n" for line in compact.lines))

    args = ["--measure", "cosine", "--top-k", "3", "--max-df", str(MAX_DF)]
    run = run_cli(MRSparseDotProducts, ["--no-conf"] + hadoop_args(
        streaming_jar, hadoop_tmp / "from-compact") + args + ["--input-format", "compact",
                                                              str(copy)])
    got, want = as_dict(run), as_dict(run_job(MRSparseDotProducts, None, args,
                                              input_paths=[corpus]))
    assert {uuid.UUID(bytes=d) for d in TRICKY_DOCS} <= set(got)
    assert_scores_close(got, want, rtol=1e-12)
    for k, row in want.items():
        assert list(got[k]) == list(row), k
    assert "mrsparse input" not in run.counters or not any(
        run.counters["mrsparse input"].get(name) for name in BAD_LINES)

    back = run_cli(MRConvert, ["--no-conf"] + hadoop_args(
        streaming_jar, hadoop_tmp / "to-json") + ["--to", "json", str(copy)])
    assert back.lines == run_job(MRConvert, None, ["--to", "json"], input_paths=[corpus]).lines


def test_products_from_the_index_posting_lists(streaming_jar, hadoop_tmp, corpus_files):
    # the two jobs chained on Hadoop: the index's compact posting lists (ids
    # with TAB, LF, CR and the escape byte) through Hadoop's text output and
    # back in as the products job's input: the neighbours from the vectors
    # (the stripes strategy from posting lists: tests/jobs/test_postings_input.py)
    corpus, _ = corpus_files
    strategy = "blocks"
    index = run_cli(MRInvertedIndex, ["--no-conf"] + hadoop_args(
        streaming_jar, hadoop_tmp / ("index-" + strategy)) + ["--output-format", "compact",
                                                               corpus])
    copy = hadoop_tmp / ("corpus-%s.postings" % strategy)
    copy.write_bytes(b"".join(line + b"\n" for line in index.lines))
    args = ["--measure", "cosine", "--top-k", "3", "--strategy", strategy]
    run = run_cli(MRSparseDotProducts, ["--no-conf"] + hadoop_args(
        streaming_jar, hadoop_tmp / ("from-postings-" + strategy)) + args + [
        "--input-format", "postings", str(copy)])
    inline = run_job(MRSparseDotProducts, None, args, input_paths=[corpus])
    got, want = as_dict(run), as_dict(inline)
    assert {uuid.UUID(bytes=d) for d in TRICKY_DOCS} <= set(got)
    assert run.lines == inline.lines  # blocks: the same bytes on every runner and split
    assert_scores_close(got, want, rtol=1e-12)
    for k, row in want.items():
        assert list(got[k]) == list(row), k
    counters = run.counters["mrsparse input"]
    assert counters["posting lists read"] == len(index.lines)
    assert counters["vectors read"] == len({d for _, vec in index.output for d in vec.to_dict()})


def test_output_replaced_only_by_a_run_that_succeeded(streaming_jar, hadoop_tmp, corpus_files,
                                                     tmp_path):
    # a file: URI (mrjob's hadoop runner takes a plain path for HDFS): the
    # local committer, as on the inline and local runners
    corpus, _ = corpus_files
    out = tmp_path / "out"
    out.mkdir()
    (out / "part-00000").write_text("previous complete output\n")
    (out / "_SUCCESS").write_text("")
    blank = tmp_path / "blank.txt"
    blank.write_text("\n\n")
    args = ["--no-conf"] + hadoop_args(streaming_jar, hadoop_tmp / "commit") + [
        "--output-format", "compact", "-o", "file://%s" % out, "--overwrite-output"]
    status, stderr = run_status(MRInvertedIndex, args + [str(blank)])
    assert status == 1, stderr
    assert stderr.splitlines()[-1].startswith("mrsparse: error: not one vector could be read")
    assert sorted(os.listdir(out)) == ["_SUCCESS", "part-00000"]
    assert (out / "part-00000").read_text() == "previous complete output\n"
    status, stderr = run_status(MRInvertedIndex, args + [corpus])
    assert status == 0, stderr[-5000:]
    inline = run_job(MRInvertedIndex, None, ["--output-format", "compact"],
                     input_paths=[corpus])
    lines = b"".join((out / n).read_bytes() for n in sorted(os.listdir(out))
                     if n.startswith("part-"))
    assert lines.endswith(b"\n")
    assert sorted(lines.split(b"\n")[:-1]) == sorted(inline.lines)
    assert (out / "_SUCCESS").read_bytes() == b""
    assert sorted(os.listdir(tmp_path)) == ["blank.txt", "out"]


class _HadoopShell:
    """What :class:`mrjobs.runtime.commit.FsOutputCommitter` asks of mrjob's Hadoop
    filesystem: the `hadoop` command (here the real FsShell, local mode)."""

    def get_hadoop_bin(self):
        return [LAUNCHER]


def _hdir(path, files):
    path.mkdir()
    for name, text in files.items():
        (path / name).write_text(text)


def _contents(path):
    # (Hadoop's local filesystem writes a hidden .NAME.crc beside each file)
    return {n: (path / n).read_text() for n in sorted(os.listdir(path)) if n[0] != "."}


@pytest.mark.usefixtures("streaming_jar")     # the launcher's jars
@pytest.mark.parametrize("start, change", [
    ("absent", None), ("full", None),
    ("absent", "appear"), ("full", "add_file"), ("full", "replaced"), ("full", "removed")])
def test_the_hadoop_fs_committer_follows_the_output_rule(tmp_path, start, change):
    """The committer of --output-dir paths on Hadoop's filesystems, through
    `hadoop fs` (-stat, -ls -R, -mv) as on HDFS, here on file: URIs: it
    replaces only what was there at the start, and a change during the run
    fails it with both outputs kept."""
    from mrjobs.runtime.commit import FsOutputCommitter, OutputConflict
    out = tmp_path / "out"
    if start == "full":
        _hdir(out, {"part-00000": "old\n", "_SUCCESS": ""})
    c = FsOutputCommitter("file://%s" % out, overwrite=True, fs=_HadoopShell())
    c.note()
    _hdir(tmp_path / c.tmp.rsplit("/", 1)[1], {"part-00000": "new\n"})  # the job's output
    if change == "appear":
        _hdir(out, {"theirs": "x\n"})
    elif change == "add_file":
        (out / "theirs").write_text("x\n")
    elif change == "replaced":
        os.rename(out, tmp_path / "gone")
        _hdir(out, {"part-00000": "old\n", "_SUCCESS": ""})
    elif change == "removed":
        for name in os.listdir(out):
            os.remove(out / name)
        out.rmdir()
    occupant = _contents(out) if out.exists() else None
    if change is None:
        c.commit()
        assert _contents(out) == {"_SUCCESS": "", "part-00000": "new\n"}
        assert [n for n in os.listdir(tmp_path) if n[0] != "."] == ["out"]
        assert not [n for n in os.listdir(tmp_path) if "mrsparse" in n]
        return
    with pytest.raises(OutputConflict, match="changed while the job ran") as e:
        c.commit()
    assert (_contents(out) if out.exists() else None) == occupant
    kept = [n for n in os.listdir(tmp_path) if n.startswith("out.mrsparse-")]
    assert len(kept) == 1 and kept[0] in str(e.value)
    assert _contents(tmp_path / kept[0]) == {"_SUCCESS": "", "part-00000": "new\n"}
