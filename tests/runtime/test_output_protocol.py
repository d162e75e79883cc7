"""What a run does to ``--output-dir``, in every ordering of the things that
can happen around it.

The rule (mrjobs.runtime.commit.OutputCommitter): the output is committed only by a
run that succeeded, in one atomic rename, and only onto what the run was
allowed to replace -- what was at ``--output-dir`` when it started (nothing,
an empty directory, or under ``--overwrite-output`` a non-empty one, with the
same entries).  Anything else there at the end makes the run fail with one
line, and both are kept: the occupant where it is, this run's output beside it.

The committer is tested directly (every start state against every change,
with renameat2 and with the portable fallback), then through real launcher
processes on the inline and local runners: a failure before the commit, an
occupant appearing while a task is held, two runs racing, symbolic links,
TMPDIR inside the output, SIGTERM and SIGHUP.  Tasks are held with the
test hooks of mrjobs/runtime/testhooks.py (a file releases them): no test waits a fixed
time.
"""
import os
import signal
import subprocess
import sys

import pytest

from mrjobs.runtime import commit as launch
from mrjobs.runtime.commit import OutputCommitter, OutputConflict, rename_noreplace
from mrjobs.testing import write_lines
from tests.jobs_helpers import corpus
from tests.runtime.test_launch_faults import descendants, env_for, running, wait_for

LINES = corpus(n=60, seed=5)
LINUX = sys.platform.startswith("linux")
#: the first reducer of the first step (mrjob's simulated attempt ids)
FIRST_REDUCER = "start:_reducer_00000_"


@pytest.fixture(params=["renameat2", "fallback"])
def renames(request, monkeypatch):
    """The committer with the kernel's atomic renames, and without them."""
    if request.param == "fallback":
        def unsupported(*args):
            raise launch._NoRenameat2()
        monkeypatch.setattr(launch, "_renameat2", unsupported)
    elif not LINUX:
        pytest.skip("renameat2 is Linux's")
    return request.param


def make_dir(path, files):
    path.mkdir()
    for name, text in files.items():
        (path / name).write_text(text)


def contents(path):
    return {n: (path / n).read_text() for n in sorted(os.listdir(path))}


def run_output(committer, text="new\n"):
    """What the job's last step leaves in the committer's directory."""
    os.makedirs(committer.tmp)
    with open(os.path.join(committer.tmp, "part-00000"), "w") as f:
        f.write(text)


# -- the committer itself -------------------------------------------------------

START = {
    "absent": None,
    "empty": {},
    "full": {"part-00000": "old\n", "_SUCCESS": ""},
}


@pytest.mark.parametrize("start", sorted(START))
def test_commit_onto_what_was_there_at_the_start(tmp_path, renames, start):
    out = tmp_path / "out"
    if START[start] is not None:
        make_dir(out, START[start])
    c = OutputCommitter(str(out), overwrite=True)
    c.note()
    run_output(c)
    c.commit()
    assert contents(out) == {"_SUCCESS": "", "part-00000": "new\n"}
    assert os.listdir(tmp_path) == ["out"]


def appear(out):
    make_dir(out, {"theirs": "x\n"})


def appear_empty(out):
    out.mkdir()


def add_file(out):
    (out / "theirs").write_text("x\n")


def rewrite_file(out):
    os.remove(out / "part-00000")
    (out / "part-00000").write_text("other run\n")


def replaced(out):
    os.rename(out, str(out) + ".gone")
    make_dir(out, {"part-00000": "old\n", "_SUCCESS": ""})  # same names, another directory


def removed(out):
    for name in os.listdir(out):
        os.remove(out / name)
    out.rmdir()


def became_file(out):
    if out.exists():
        removed(out)
    out.write_text("a file\n")


CHANGES = [("absent", appear), ("absent", appear_empty), ("absent", became_file),
           ("empty", add_file), ("empty", removed), ("empty", became_file),
           ("full", add_file), ("full", rewrite_file), ("full", replaced), ("full", removed)]


@pytest.mark.parametrize("start,change", CHANGES,
                         ids=["%s-%s" % (s, c.__name__) for s, c in CHANGES])
def test_a_change_during_the_run_fails_the_commit_and_keeps_both(tmp_path, renames, start,
                                                                  change):
    out = tmp_path / "out"
    if START[start] is not None:
        make_dir(out, START[start])
    c = OutputCommitter(str(out), overwrite=True)
    c.note()
    run_output(c)
    change(out)
    before = sorted(os.listdir(tmp_path))
    occupant = contents(out) if out.is_dir() else out.read_text() if out.exists() else None
    with pytest.raises(OutputConflict) as e:
        c.commit()
    c.abort()
    message = str(e.value)
    assert message.startswith("--output-dir %s changed while the job ran" % out)
    # the occupant is as it was; this run's output is kept, complete, beside it
    after = contents(out) if out.is_dir() else out.read_text() if out.exists() else None
    assert after == occupant
    kept = [n for n in sorted(os.listdir(tmp_path)) if n not in before]
    assert len(kept) == 1 and kept[0].startswith("out.mrsparse-"), kept
    assert str(tmp_path / kept[0]) in message
    assert contents(tmp_path / kept[0]) == {"_SUCCESS": "", "part-00000": "new\n"}


def test_a_non_empty_directory_needs_overwrite(tmp_path):
    out = tmp_path / "out"
    make_dir(out, {"part-00000": "old\n"})
    with pytest.raises(OutputConflict, match="is not empty .1 entries, e.g. part-00000."):
        OutputCommitter(str(out)).note()
    assert contents(out) == {"part-00000": "old\n"}


def test_an_aborted_run_leaves_nothing(tmp_path):
    out = tmp_path / "out"
    make_dir(out, {"part-00000": "old\n"})
    c = OutputCommitter(str(out), overwrite=True)
    c.note()
    run_output(c)
    c.abort()
    assert os.listdir(tmp_path) == ["out"] and contents(out) == {"part-00000": "old\n"}


@pytest.mark.parametrize("occupant", ["file", "empty-dir", "full-dir"])
def test_rename_noreplace_never_replaces(tmp_path, renames, occupant):
    src = tmp_path / "src"
    make_dir(src, {"a": "1\n"})
    dst = tmp_path / "dst"
    if occupant == "file":
        dst.write_text("theirs\n")
    else:
        make_dir(dst, {} if occupant == "empty-dir" else {"b": "2\n"})
    with pytest.raises(FileExistsError):
        rename_noreplace(str(src), str(dst))
    assert contents(src) == {"a": "1\n"}
    assert (dst.read_text() == "theirs\n" if occupant == "file" else
            contents(dst) == ({} if occupant == "empty-dir" else {"b": "2\n"}))
    rename_noreplace(str(src), str(tmp_path / "new"))
    assert contents(tmp_path / "new") == {"a": "1\n"} and not src.exists()


# -- through the launcher --------------------------------------------------------

def launcher(tmp_path, args, module="mrjobs.dot_products", hold=None, hold_dir=None,
             tmpdir=None, **kw):
    env = env_for(tmp_path)
    if tmpdir:
        env["TMPDIR"] = str(tmpdir)
    if hold:
        env.update(MRSPARSE_TEST_HOLD_ATTEMPT=hold, MRSPARSE_TEST_DIR=str(hold_dir))
    return subprocess.Popen([sys.executable, "-m", module] + [str(a) for a in args],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def finish(proc):
    stdout, stderr = proc.communicate()
    return proc.returncode, stdout, stderr


def run(tmp_path, *args, **kw):
    return finish(launcher(tmp_path, args, **kw))


def held(hold_dir):
    return [f for f in os.listdir(hold_dir) if f.endswith(".held")]


def hold_dir(tmp_path, name="hold"):
    d = tmp_path / name
    d.mkdir()
    return d


def old_output(out):
    make_dir(out, {"part-00000": "previous complete output\n", "_SUCCESS": ""})
    return contents(out)


def assert_one_line_error(status, stderr, start):
    assert status == 1, stderr
    assert "Traceback" not in stderr, stderr
    assert stderr.splitlines()[-1].startswith("mrsparse: error: " + start), stderr


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.parametrize("case", ["binary", "blank", "empty-queries", "index-blank"])
@pytest.mark.parametrize("overwrite", [True, False])
@pytest.mark.slow
def test_a_failed_run_never_commits(tmp_path, runner, case, overwrite):
    write_lines(tmp_path / "corpus.jsonl", LINES)
    (tmp_path / "binary.bin").write_bytes(bytes(range(256)) * 8)
    (tmp_path / "blank.txt").write_text("\n\n  \n")
    (tmp_path / "queries.jsonl").write_text("\n")
    args = {"binary": ["binary.bin"], "blank": ["blank.txt"],
            "empty-queries": ["corpus.jsonl", "--queries", "queries.jsonl"],
            "index-blank": ["blank.txt"]}[case]
    module = "mrjobs.inverted_index" if case == "index-blank" else "mrjobs.dot_products"
    out = tmp_path / "out"
    before = old_output(out) if overwrite else None
    status, stdout, stderr = run(tmp_path, *args, "-r", runner, "-o", "out",
                                 *(["--overwrite-output"] if overwrite else []), module=module)
    assert_one_line_error(status, stderr, "--queries" if case == "empty-queries" else
                          "not one vector could be read")
    if overwrite:
        assert contents(out) == before
    else:
        assert not out.exists()
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["binary.bin", "blank.txt", "corpus.jsonl", "queries.jsonl", "tmp"]
        + (["out"] if overwrite else []))
    assert os.listdir(tmp_path / "tmp") == []


def reference(tmp_path):
    """The output lines of an undisturbed run (inline, to stdout)."""
    status, stdout, stderr = run(tmp_path, "corpus.jsonl", "-r", "inline", "-q")
    assert status == 0, stderr
    return sorted(stdout.splitlines())


def part_lines(path):
    return sorted(line for n in sorted(os.listdir(path)) if n.startswith("part-")
                  for line in (path / n).read_text().splitlines())


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.parametrize("start,change", [("absent", appear), ("full", add_file),
                                          ("full", replaced)],
                         ids=["absent-appear", "full-add_file", "full-replaced"])
@pytest.mark.slow
def test_an_occupant_appearing_during_the_run_fails_it_and_both_are_kept(
        tmp_path, runner, start, change):
    write_lines(tmp_path / "corpus.jsonl", LINES)
    expected = reference(tmp_path)
    out = tmp_path / "out"
    if start == "full":
        old_output(out)
    hd = hold_dir(tmp_path)
    proc = launcher(tmp_path, ["corpus.jsonl", "-r", runner, "-o", "out", "--overwrite-output"],
                    hold=FIRST_REDUCER, hold_dir=hd)
    try:
        wait_for(lambda: held(hd), "a held reducer")
        change(out)
        occupant = contents(out)
    finally:
        (hd / "release").touch()
    status, _, stderr = finish(proc)
    assert_one_line_error(status, stderr, "--output-dir out changed while the job ran")
    assert contents(out) == occupant
    kept = [n for n in os.listdir(tmp_path) if n.startswith("out.mrsparse-")]
    assert len(kept) == 1 and kept[0] in stderr.splitlines()[-1]
    assert part_lines(tmp_path / kept[0]) == expected
    assert (tmp_path / kept[0] / "_SUCCESS").read_bytes() == b""
    assert os.listdir(tmp_path / "tmp") == []


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.parametrize("overwrite", [False, True])
@pytest.mark.slow
def test_two_runs_racing_into_one_output_dir(tmp_path, runner, overwrite):
    """Both start while the directory is absent; the first to end commits,
    the second fails and keeps its output beside it -- with or without
    --overwrite-output (which replaces only what was there at the start)."""
    write_lines(tmp_path / "corpus.jsonl", LINES)
    write_lines(tmp_path / "other.jsonl", corpus(n=40, seed=9))
    expected = reference(tmp_path)
    flag = ["--overwrite-output"] if overwrite else []
    first, second = hold_dir(tmp_path, "first"), hold_dir(tmp_path, "second")
    a = launcher(tmp_path, ["corpus.jsonl", "-r", runner, "-o", "out"] + flag,
                 hold=FIRST_REDUCER, hold_dir=first)
    b = launcher(tmp_path, ["other.jsonl", "-r", runner, "-o", "out"] + flag,
                 hold=FIRST_REDUCER, hold_dir=second)
    gave_up = None
    try:
        wait_for(lambda: held(first) and held(second), "both runs' held reducers")
    except AssertionError as e:  # said below, with what each run said
        gave_up = str(e)
    finally:
        (first / "release").touch()
        status_a, _, stderr_a = finish(a)
        (second / "release").touch()
        status_b, _, stderr_b = finish(b)
    assert gave_up is None, "%s; the first run (%s): %s; the second (%s): %s" % (
        gave_up, status_a, stderr_a[-1500:], status_b, stderr_b[-1500:])
    assert status_a == 0, stderr_a
    assert_one_line_error(status_b, stderr_b, "--output-dir out changed while the job ran")
    assert part_lines(tmp_path / "out") == expected
    kept = [n for n in os.listdir(tmp_path) if n.startswith("out.mrsparse-")]
    assert len(kept) == 1 and part_lines(tmp_path / kept[0])


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.slow
def test_output_dir_as_a_symbolic_link(tmp_path, runner):
    write_lines(tmp_path / "corpus.jsonl", LINES)
    expected = reference(tmp_path)
    # a link to an empty directory: the output goes there, the link stays
    (tmp_path / "empty-target").mkdir()
    os.symlink("empty-target", tmp_path / "to-empty")
    status, _, stderr = run(tmp_path, "corpus.jsonl", "-r", runner, "-o", "to-empty")
    assert status == 0, stderr
    assert os.readlink(tmp_path / "to-empty") == "empty-target"
    assert part_lines(tmp_path / "empty-target") == expected
    # a link to a full directory, replaced: the target is replaced, the link stays
    old_output(tmp_path / "full-target")
    os.symlink("full-target", tmp_path / "to-full")
    status, _, stderr = run(tmp_path, "corpus.jsonl", "-r", runner, "-o", "to-full",
                            "--overwrite-output")
    assert status == 0, stderr
    assert os.readlink(tmp_path / "to-full") == "full-target"
    assert part_lines(tmp_path / "full-target") == expected
    assert "previous complete output" not in "".join(
        (tmp_path / "full-target" / n).read_text() for n in os.listdir(tmp_path / "full-target"))
    # a dangling link: one line, nothing made
    os.symlink("nowhere", tmp_path / "dangling")
    status, _, stderr = run(tmp_path, "corpus.jsonl", "-r", runner, "-o", "dangling")
    assert_one_line_error(status, stderr, "--output-dir dangling is a symbolic link to ")
    assert "which is not there" in stderr
    assert sorted(os.listdir(tmp_path)) == ["corpus.jsonl", "dangling", "empty-target",
                                           "full-target", "tmp", "to-empty", "to-full"]
    assert os.listdir(tmp_path / "tmp") == []


@pytest.mark.parametrize("where", ["inside", "itself"])
def test_temporary_directory_inside_the_output_is_refused(tmp_path, where):
    write_lines(tmp_path / "corpus.jsonl", LINES)
    out = tmp_path / "out"
    old_output(out)
    tmpdir = out / "tmp" if where == "inside" else out
    tmpdir.mkdir(exist_ok=True)
    before = sorted(os.listdir(out))
    status, _, stderr = run(tmp_path, "corpus.jsonl", "-r", "local", "-o", "out",
                            "--overwrite-output", tmpdir=tmpdir)
    assert_one_line_error(status, stderr, "the temporary directory %s (TMPDIR)" % tmpdir)
    assert sorted(os.listdir(out)) == before


@pytest.mark.skipif(not LINUX, reason="reads the process tree from /proc")
@pytest.mark.parametrize("runner,sig,to", [
    ("local", signal.SIGTERM, "launcher"), ("local", signal.SIGTERM, "process-group"),
    ("local", signal.SIGHUP, "process-group"), ("inline", signal.SIGTERM, "launcher"),
    ("inline", signal.SIGHUP, "launcher")])
@pytest.mark.slow
def test_sigterm_and_sighup_end_a_run_as_ctrl_c_does(tmp_path, runner, sig, to):
    write_lines(tmp_path / "corpus.jsonl", LINES)
    out = tmp_path / "out"
    before = old_output(out)
    hd = hold_dir(tmp_path)
    proc = launcher(tmp_path, ["corpus.jsonl", "-r", runner, "-o", "out",
                               "--overwrite-output"], hold=FIRST_REDUCER, hold_dir=hd,
                    start_new_session=True)
    try:
        wait_for(lambda: held(hd), "a held reducer")
        below = descendants(proc.pid)
        if to == "process-group":  # as a terminal, a container stop or a CI cancel does
            os.killpg(proc.pid, sig)
        else:  # as `kill` and `timeout` do
            os.kill(proc.pid, sig)
        status, stdout, stderr = finish(proc)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert status == 128 + sig, stderr
    last = stderr.splitlines()[-1]
    assert last.startswith("mrsparse: stopped by %s; removed " % signal.Signals(sig).name)
    assert last.endswith(" MB of temporary files")
    assert "Traceback" not in stderr and "Error" not in stderr, stderr
    assert stdout == ""
    wait_for(lambda: not any(running(p) for p in below), "the task processes to end")
    assert os.listdir(tmp_path / "tmp") == []
    assert contents(out) == before
    assert not [f for f in os.listdir(tmp_path) if f.startswith((".out", "out."))]


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.slow
def test_a_write_that_finds_no_room_is_one_line_that_says_where(tmp_path, runner):
    """A full disk, as a file-size limit makes it real for this run alone
    (writes beyond it fail with EFBIG, as with ENOSPC on a full disk)."""
    import resource
    write_lines(tmp_path / "corpus.jsonl", LINES)

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, 50_000))
    env = env_for(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "mrjobs.dot_products", "corpus.jsonl", "-r",
                           runner, "-o", "out", "-q"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, preexec_fn=limit)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    last = proc.stderr.splitlines()[-1]
    assert last.startswith("mrsparse: ") and "File too large" in last, last
    assert "free space there, or point TMPDIR" in last and env["TMPDIR"] in last, last
    assert not (tmp_path / "out").exists()
    assert os.listdir(tmp_path / "tmp") == []
