"""Issue 44, item 8 (part): inputs read as Hadoop reads them.

A Hadoop output directory holds ``_SUCCESS``, ``_logs/`` and a
``.part-00000.crc`` beside each part file; the inline and local runners read
them all as data (the ``.crc`` file was a bad line, and stopped a ``--strict``
run).  Hadoop's FileInputFormat skips every name that begins with ``_`` or
``.`` (its hiddenFileFilter), at every depth, and the same for a path named on
its own ("Input path does not exist"); a subdirectory that is not hidden fails
the job ("Not a file") unless ``mapreduce.input.fileinputformat.input.dir.recursive``
is true.  Here: every runner, and every listing the job makes (sizes, the
first line, the planner's files, ``--queries``, compact directories), on
directories made by hand and -- with the ``engines`` mark -- written by
Hadoop itself.  Results (output bytes, exit status, messages), not timings.
"""
import os
import shutil
import subprocess
import sys
import uuid

import pytest

from mrjobs.plan.sample import input_files as plan_files
from mrjobs.runtime.paths import is_hidden, listed_files, local_lines
from mrjobs.strategies.sizing import data_first_line, input_data_bytes
from mrjobs.testing import write_lines
from tests.jobs_helpers import corpus

#: the engine fixtures (streaming_jar, engine_env) for the one test marked engines
pytest_plugins = ["tests.engines.fixtures"]

ARGS = ("--measure", "cosine", "--top-k", "3", "-q")
#: a vector read from nowhere else: the output changes if a hidden file is read
STRAY = '{"id": "%s", "features": {"%s": 1.0}}' % (uuid.UUID(int=7), uuid.UUID(int=8))


def run(args, env=None):
    """``python -m mrjobs.dot_products ARGS``: (exit status, stdout bytes, stderr)."""
    p = subprocess.run([sys.executable, "-m", "mrjobs.dot_products", *ARGS, *args],
                       capture_output=True, env=env)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def hide_files(d):
    """What a Hadoop output directory (and a user's editor) leaves beside the
    part files: each one would change the output or be a bad line if read."""
    # (not a checksum file's header, "crc\0": Hadoop would check the part
    # file against it, and fail)
    (d / ".part-00000.crc").write_bytes(b"\x00\x01\x02garbage\n")
    (d / "_SUCCESS").write_bytes(b"")
    (d / "_logs" / "history").mkdir(parents=True)
    write_lines(d / "_logs" / "history" / "job_1.jhist", [STRAY, "not a vector"])
    (d / ".hidden").mkdir()
    write_lines(d / ".hidden" / "part-00000", [STRAY])
    write_lines(d / "_temporary.jsonl", [STRAY])


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    base = tmp_path_factory.mktemp("hidden")
    clean, dirty = base / "clean", base / "dirty"
    clean.mkdir()
    write_lines(clean / "part-00000", corpus(n=40, seed=5, edge_cases=False))
    shutil.copytree(clean, dirty)
    hide_files(dirty)
    return clean, dirty


def test_the_hidden_rule():
    assert [is_hidden(n) for n in ("_SUCCESS", "_logs", ".part-00000.crc", ".hidden")] == [
        True] * 4
    assert not any(is_hidden(n) for n in ("part-00000", "a_b", "a.b", "STDIN"))


def test_every_listing_skips_the_hidden_files(dirs):
    # sizes, line counts, the first line and the planner's sample all see
    # the clean directory's one file
    clean, dirty = map(str, dirs)
    assert [os.path.basename(f) for f in listed_files(dirty)] == ["part-00000"]
    assert input_data_bytes([dirty]) == input_data_bytes([clean]) == os.path.getsize(
        clean + "/part-00000")
    assert local_lines([dirty], 10**6) == local_lines([clean], 10**6) == 40
    assert data_first_line([dirty]) == data_first_line([clean])
    assert [os.path.basename(f) for f in plan_files(dirty)] == ["part-00000"]
    # a glob's hidden matches too (Hadoop filters them after the glob)
    assert [os.path.basename(f) for f in listed_files(dirty + "/*")] == ["part-00000"]


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.slow
def test_a_directory_with_hidden_files_reads_as_the_clean_one(dirs, runner):
    clean, dirty = map(str, dirs)
    status, want, err = run(["-r", runner, clean])
    assert status == 0, err
    assert want.count(b"\n") == 40
    for args in ([dirty], [dirty, "--strict"], ["file://" + dirty, "--strict"]):
        status, got, err = run(["-r", runner, *args])
        assert (status, err) == (0, ""), args
        assert got == want, args


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.slow
def test_queries_in_a_directory_with_hidden_files(dirs, tmp_path, runner):
    clean, dirty = map(str, dirs)
    lines = corpus(n=40, seed=5, edge_cases=False)[:3]
    write_lines(tmp_path / "q.jsonl", lines)
    qdir = tmp_path / "q"
    qdir.mkdir()
    write_lines(qdir / "part-00000", lines)
    hide_files(qdir)
    status, want, err = run(["-r", runner, clean, "--queries", str(tmp_path / "q.jsonl")])
    assert status == 0, err
    assert want.count(b"\n") == 3
    status, got, err = run(["-r", runner, dirty, "--queries", str(qdir), "--strict"])
    assert (status, got, err) == (0, want, "")


@pytest.mark.slow
def test_a_compact_directory_with_hidden_files(dirs, tmp_path):
    clean, _ = map(str, dirs)
    out = tmp_path / "c.compact"
    p = subprocess.run([sys.executable, "-m", "mrjobs.convert", "--to", "compact", clean,
                        "-o", str(out), "-q"], capture_output=True)
    assert p.returncode == 0, p.stderr
    status, want, err = run([str(out), "--input-format", "compact", "--strict"])
    assert status == 0, err
    hide_files(out)
    for runner in ("inline", "local"):
        status, got, err = run(["-r", runner, str(out), "--input-format", "compact",
                                "--strict"])
        assert (status, got, err) == (0, want, ""), runner


@pytest.mark.parametrize("name", [".part-00000.crc", "_logs", ".hidden", "_temporary.jsonl"])
@pytest.mark.slow
def test_a_hidden_path_named_on_its_own_is_refused(dirs, name):
    # Hadoop: "Input path does not exist" for it; here, before the work, why
    _, dirty = dirs
    status, out, err = run([str(dirty / name)])
    assert (status, out) == (1, b"")
    assert "mrsparse: error: input path %s is hidden: its name begins with %r" % (
        dirty / name, name[0]) in err
    status, out, err = run([str(dirty / "part-00000"), "--queries", str(dirty / name)])
    assert (status, out) == (1, b"") and "--queries path %s is hidden" % (dirty / name) in err


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.slow
def test_a_subdirectory_is_refused_unless_recursive(dirs, tmp_path, runner):
    # Hadoop's default: "Not a file: <subdir>"; with ...input.dir.recursive it
    # reads the tree (hidden names skipped at every depth), as a glob does
    clean, _ = dirs
    nested = tmp_path / "nested"
    (nested / "day1").mkdir(parents=True)
    shutil.copy(clean / "part-00000", nested / "day1" / "part-00000")
    hide_files(nested / "day1")
    hide_files(nested)
    status, want, err = run(["-r", runner, str(clean)])
    assert status == 0, err
    status, out, err = run(["-r", runner, str(nested)])
    assert (status, out) == (1, b"")
    assert ("input path %s holds the directory %s: Hadoop reads the files of an input "
            "directory, not its subdirectories" % (nested, nested / "day1")) in err
    for args in (["-D", "mapreduce.input.fileinputformat.input.dir.recursive=true",
                  str(nested)], [str(nested / "*")]):
        status, got, err = run(["-r", runner, "--strict", *args])
        assert (status, got, err) == (0, want, ""), args


# -- a directory Hadoop wrote -------------------------------------------------

@pytest.mark.engines
@pytest.mark.usefixtures("engine_env")
def test_a_directory_written_by_hadoop(dirs, streaming_jar, tmp_path_factory):
    """A real Hadoop output directory (local mode, ``file://``: ``_SUCCESS``
    and a ``.crc`` per part file), read by the inline and local runners --
    ``--strict`` -- and the directory made by hand read by Hadoop itself:
    the same lines as from the clean directory."""
    from tests.engines.support import hadoop_args

    clean, dirty = dirs
    tmp = tmp_path_factory.mktemp("hadoop")
    out = tmp / "compact"
    p = subprocess.run([sys.executable, "-m", "mrjobs.convert", "--to", "compact", str(clean),
                        *hadoop_args(streaming_jar, tmp / "hadoop-tmp"), "-q",
                        "--output-dir", "file://%s" % out], capture_output=True)
    assert p.returncode == 0, p.stderr.decode()[-5000:]
    names = sorted(os.listdir(out))
    assert "_SUCCESS" in names and any(n.startswith(".part-") and n.endswith(".crc")
                                       for n in names), names
    status, want, err = run([str(clean)])
    assert status == 0, err
    for runner in ("inline", "local"):
        status, got, err = run(["-r", runner, str(out), "--input-format", "compact",
                                "--strict"])
        assert (status, got, err) == (0, want, ""), runner
    # (a file:// URI: Hadoop reads the directory where it is, no upload)
    status, got, err = run([*hadoop_args(streaming_jar, tmp / "hadoop-tmp2"),
                            "file://%s" % dirty, "--strict"])
    assert (status, got) == (0, want), err[-5000:]
