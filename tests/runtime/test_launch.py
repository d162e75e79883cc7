"""What a user sees when launching the jobs: one-line errors instead of
tracebacks, refused output directories, progress, and numeric edge cases that
are counted instead of killing a task."""
import io
import os
import subprocess
import sys
import uuid

import pytest

from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.runtime.progress import ProgressMonitor
from mrjobs.testing import run_job, write_lines
from tests.jobs_helpers import corpus

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINES = corpus(n=60, seed=5)


def launch(*args, module="mrjobs.dot_products", cwd=None):
    env = dict(os.environ, PYTHONPATH=REPO)
    return subprocess.run([sys.executable, "-m", module] + list(args), cwd=cwd or REPO,
                          env=env, capture_output=True, text=True, timeout=600)


def assert_no_traceback(proc):
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 1


def test_missing_input_is_one_line(tmp_path):
    proc = launch(str(tmp_path / "corpus.jsonl"), "-r", "local")
    assert_no_traceback(proc)
    assert "mrsparse: error: input path %s does not exist" % (tmp_path / "corpus.jsonl") \
        in proc.stderr


@pytest.mark.parametrize("what", ["readme", "binary", "directory"])
@pytest.mark.slow
def test_garbage_input_fails_clearly(what, tmp_path):
    if what == "readme":
        path = os.path.join(REPO, "README.md")
    elif what == "binary":
        path = tmp_path / "blob.bin"
        path.write_bytes(bytes(range(256)) * 40)
    else:
        path = tmp_path / "empty-dir"
        path.mkdir()
        (path / "notes.txt").write_text("nothing to see\n")
    proc = launch(str(path))
    assert_no_traceback(proc)
    assert "not one vector could be read from the input" in proc.stderr


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.slow
def test_strict_failure_is_one_line(runner, tmp_path):
    path = tmp_path / "corpus.jsonl"
    write_lines(path, LINES[:5] + [b"garbage\there \xff"])
    proc = launch(str(path), "--strict", "-r", runner)
    assert_no_traceback(proc)
    # the line as text, quoted, with escapes for the TAB and the byte that is not UTF-8
    assert "malformed line" in proc.stderr and "(line: 'garbage\\there \\xff')" in proc.stderr
    assert "b'" not in proc.stderr, proc.stderr
    assert len(proc.stderr.splitlines()) < 40, proc.stderr


@pytest.mark.slow
def test_non_empty_output_dir_is_refused_unless_asked(tmp_path):
    path = tmp_path / "corpus.jsonl"
    write_lines(path, LINES)
    out = tmp_path / "out"
    out.mkdir()
    (out / "part-00007").write_text("stale\n")
    proc = launch(str(path), "--output-dir", str(out), "-r", "local")
    assert_no_traceback(proc)
    assert "is not empty" in proc.stderr and "--overwrite-output" in proc.stderr
    assert os.listdir(out) == ["part-00007"]
    proc = launch(str(path), "--output-dir", str(out), "-r", "local", "--overwrite-output")
    assert proc.returncode == 0, proc.stderr
    parts = sorted(os.listdir(out))
    assert "part-00007" not in parts and parts and all(p.startswith("part-") or p in (
        "_SUCCESS", "_MANIFEST.json")
                                                       for p in parts)


@pytest.mark.slow
def test_progress_summary_of_a_local_run(tmp_path):
    path = tmp_path / "corpus.jsonl"
    write_lines(path, LINES)
    job = MRSparseDotProducts(["-r", "local", "--cleanup", "NONE", "--no-conf",
                               "--local-tmp-dir", str(tmp_path / "tmp"), str(path)])
    with job.make_runner() as runner:
        runner.run()
        summary = ProgressMonitor(runner, None).summary()
    # the last step's reducers all said they were done, with the lines they read
    assert summary.startswith("step 2 of 2: reducers ")
    done, total = summary.split("reducers ", 1)[1].split(" done", 1)[0].split("/")
    assert done == total and int(total) >= 1
    assert "lines" in summary


@pytest.mark.slow
def test_quiet_run_prints_nothing_but_output_and_lost_input(tmp_path):
    path = tmp_path / "corpus.jsonl"
    write_lines(path, LINES)  # has empty vectors: an input note, not shown with -q
    proc = launch(str(path), "-q", "--measure", "cosine", "--top-k", "2")
    assert proc.returncode == 0
    assert proc.stderr == ""
    assert len(proc.stdout.splitlines()) > 10
    write_lines(path, LINES + ["garbage"])
    proc = launch(str(path), "-q")
    assert proc.stderr.startswith("mrsparse: skipped 1 bad input line(s): ")


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.slow
def test_default_verbosity_leaves_out_mrjobs_temp_notes(tmp_path, runner):
    # mrjob's temp directory notes and its "job output is in <its staging dir>"
    # say nothing a user acts on: shown with -v only
    path = tmp_path / "corpus.jsonl"
    write_lines(path, LINES)
    notes = ("Creating temp directory", "Removing temp directory", "job output is in")
    proc = launch(str(path), "-r", runner, "--top-k", "2")
    assert proc.returncode == 0 and "Running step 1 of " in proc.stderr, proc.stderr
    assert not [n for n in notes if n in proc.stderr], proc.stderr
    assert len(proc.stdout.splitlines()) > 10
    verbose = launch(str(path), "-r", runner, "--top-k", "2", "-v")
    assert verbose.returncode == 0
    assert all(n in verbose.stderr for n in notes), verbose.stderr[-3000:]
    assert verbose.stdout == proc.stdout


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.parametrize("strategy", ["blocks", "stripes"])
@pytest.mark.slow
def test_extreme_weights(runner, strategy):
    a, b, c = (uuid.UUID(int=i) for i in (1, 2, 3))
    f1, f2 = uuid.UUID(int=100), uuid.UUID(int=101)
    tiny = ['{"id": "%s", "features": {"%s": 1e-200, "%s": 2e-200}}' % (d, f1, f2)
            for d in (a, b)]
    huge = ['{"id": "%s", "features": {"%s": 1e200, "%s": 2e200}}' % (d, f1, f2)
            for d in (a, b)]
    args = ["--strategy", strategy]
    # cosine: the norms neither underflow nor overflow
    for lines in (tiny, huge):
        got = dict(run_job(MRSparseDotProducts, lines, args + ["--measure", "cosine"],
                           runner=runner).output)
        assert got == {a: {b: 1.0}, b: {a: 1.0}}
    # dot: 1e200 * 1e200 is not a finite number: counted, not written, no crash
    result = run_job(MRSparseDotProducts, huge + ['{"id": "%s", "features": {"%s": 1}}'
                                                   % (c, f1)], args, runner=runner)
    out = dict(result.output)
    assert out == {a: {c: 1e200}, b: {c: 1e200}, c: {a: 1e200, b: 1e200}}
    assert result.counters["mrsparse work"]["pairs dropped: score not a finite number"] == 1


def test_inverted_index_reports_unreadable_input(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text("nothing\n")
    proc = launch(str(path), module="mrjobs.inverted_index")
    assert_no_traceback(proc)
    assert "not one vector could be read" in proc.stderr


def test_spark_with_a_local_master_defaults_to_the_launching_python():
    job = MRSparseDotProducts(["-r", "spark", "--no-conf"])
    assert job._runner_kwargs()["python_bin"] == [sys.executable]
    job = MRSparseDotProducts(["-r", "spark", "--no-conf", "--spark-master", "yarn"])
    assert not job._runner_kwargs().get("python_bin")
    job = MRSparseDotProducts(["-r", "spark", "--no-conf", "--python-bin", "/opt/py/bin/python"])
    assert job._runner_kwargs()["python_bin"] in ("/opt/py/bin/python", ["/opt/py/bin/python"])


def test_missing_queries_path_is_one_line(tmp_path):
    path = tmp_path / "corpus.jsonl"
    write_lines(path, LINES)
    proc = launch(str(path), "--queries", str(tmp_path / "nope.jsonl"))
    assert_no_traceback(proc)
    assert "--queries path %s does not exist" % (tmp_path / "nope.jsonl") in proc.stderr


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.slow
def test_output_on_stdout_is_the_output_dirs_bytes(tmp_path, runner):
    # the part files in order, whatever stdout is: a pipe and a file (copied by
    # the kernel), a file opened to append (which the kernel's copy refuses:
    # through Python), in memory (mrjob's cat)
    path = tmp_path / "corpus.jsonl"
    write_lines(path, LINES)
    args = [str(path), "-r", runner, "--measure", "cosine", "--top-k", "3",
            "--jobconf", "mapreduce.job.reduces=3"]
    assert launch(*args, "--output-dir", str(tmp_path / "out")).returncode == 0
    parts = sorted((tmp_path / "out").glob("part-*"))
    expected = b"".join(p.read_bytes() for p in parts)
    assert expected.count(b"\n") > 10
    piped = subprocess.run([sys.executable, "-m", "mrjobs.dot_products"] + args,
                           cwd=REPO, env=dict(os.environ, PYTHONPATH=REPO),
                           capture_output=True)
    assert piped.returncode == 0 and piped.stdout == expected
    written, appended = tmp_path / "written.txt", tmp_path / "appended.txt"
    appended.write_bytes(b"before\n")
    for target, mode in ((written, "wb"), (appended, "ab")):
        with open(target, mode) as out:
            proc = subprocess.run([sys.executable, "-m", "mrjobs.dot_products"] + args,
                                  cwd=REPO, env=dict(os.environ, PYTHONPATH=REPO),
                                  stdout=out, stderr=subprocess.PIPE)
        assert proc.returncode == 0, proc.stderr
    assert written.read_bytes() == expected
    assert appended.read_bytes() == b"before\n" + expected
    job = MRSparseDotProducts(args + ["--no-conf"])
    job.sandbox(stdout=io.BytesIO())
    job.run_job()
    assert job.stdout.getvalue() == expected
