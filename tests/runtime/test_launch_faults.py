"""How a run ends when something goes wrong around it: an output directory
over the input, a closed pipe, Ctrl-C, kill -9 of the launcher, a task out of
memory, a task Python without scipy, options out of range or without effect,
and messages that name what the user gave.

Every run here is a real launcher process (``python -m mrjobs...``) with its
real task processes.  Tasks are held in place where a test must act while
they run: a ``sitecustomize`` on the tasks' path (``STALL``) makes the chosen
task write a marker and wait, so the test waits for the marker -- never a
fixed time -- and the run can be slow or fast.
"""
import json
import os
import random
import resource
import signal
import subprocess
import sys
import time
import uuid

import pytest

from mrjobs.runtime.paths import OverlapError, refuse_overlap
from mrjobs.testing import write_lines
from tests.jobs_helpers import bare_python, corpus

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINES = corpus(n=60, seed=5)
LINUX = sys.platform.startswith("linux")

STALL = '''
import os, sys, time
_where = os.environ.get("MRSPARSE_TEST_STALL")
if _where:
    _dir, _step, _task = _where.split(":")
    if "--step-num=%s" % _step in sys.argv and "--%s" % _task in sys.argv:
        import mrjobs.job

        def _stalled(self):
            open(os.path.join(_dir, "stalled.%d" % os.getpid()), "w").close()
            while True:
                time.sleep(0.05)
            yield

        mrjobs.job.SparseJob._read_input = _stalled
'''


def env_for(tmp_path, stall=None):
    """The launcher's environment: a temporary directory of its own (so the
    test sees everything left behind), and optionally a stalled task."""
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    env = dict(os.environ, PYTHONPATH=REPO, TMPDIR=str(tmp), OPENBLAS_NUM_THREADS="1")
    if stall:
        site = tmp_path / "site"
        site.mkdir(exist_ok=True)
        (site / "sitecustomize.py").write_text(STALL)
        env["PYTHONPATH"] = "%s:%s" % (REPO, site)
        env["MRSPARSE_TEST_STALL"] = "%s:%s" % (tmp_path, stall)
    return env


def launch(tmp_path, *args, module="mrjobs.dot_products", **kw):
    return subprocess.run([sys.executable, "-m", module] + [str(a) for a in args],
                          cwd=kw.pop("cwd", tmp_path), env=kw.pop("env", None)
                          or env_for(tmp_path), capture_output=True, text=True, **kw)


def start(tmp_path, *args, stall=None, **kw):
    return subprocess.Popen([sys.executable, "-m", "mrjobs.dot_products"]
                            + [str(a) for a in args], cwd=tmp_path,
                            env=env_for(tmp_path, stall), **kw)


def wait_for(predicate, what, bound=300.0):
    """Poll ``predicate`` until true; the bound only keeps a broken run from
    hanging the suite (generous: a slow machine passes)."""
    deadline = time.monotonic() + bound
    while not predicate():
        assert time.monotonic() < deadline, "gave up waiting for " + what
        time.sleep(0.05)


def signal_group(proc, at, what, *sigs, bound=300.0):
    """Once ``at()`` is true (``what`` names that moment), send ``sigs`` to
    the process group of ``proc`` (started in a session of its own) and wait
    for it to end.  Returns its stderr and the processes that were below it.
    A run not ended after ``bound`` seconds fails the test as hung (the bound
    only keeps it from hanging the suite: generous); it is killed in any case."""
    try:
        wait_for(lambda: at() or proc.poll() is not None, what)
        assert proc.poll() is None, proc.stderr.read()
        below = descendants(proc.pid)
        for sig in sigs:
            os.killpg(proc.pid, sig)
        try:
            _, stderr = proc.communicate(timeout=bound)
        except subprocess.TimeoutExpired:
            pytest.fail("the run hung after %s" % "+".join(signal.Signals(s).name for s in sigs))
        return stderr, below
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def stalled(tmp_path):
    return [f for f in os.listdir(tmp_path) if f.startswith("stalled.")]


def descendants(pid):
    """The processes below ``pid`` (Linux /proc)."""
    children = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open("/proc/%s/stat" % p) as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(p))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def running(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def corpus_file(tmp_path, lines=LINES, name="corpus.jsonl"):
    path = tmp_path / name
    write_lines(path, lines)
    return path


# -- 1. the output directory is never one of the inputs ------------------------

@pytest.mark.parametrize("module", ["mrjobs.dot_products", "mrjobs.inverted_index"])
@pytest.mark.parametrize("case", ["is-parent", "relative-dot", "symlink", "file-uri", "glob",
                                  "inside-input-dir", "queries"])
@pytest.mark.slow
def test_output_dir_over_an_input_is_refused_before_anything_is_removed(tmp_path, module,
                                                                        case):
    data = tmp_path / "data"
    data.mkdir()
    corpus_file(data)
    args, cwd, out = ["data/corpus.jsonl"], tmp_path, "data"
    if case == "relative-dot":
        args, cwd, out = ["corpus.jsonl"], data, "."
    elif case == "symlink":
        os.symlink(data, tmp_path / "link")
        args = ["link/corpus.jsonl"]
    elif case == "file-uri":
        out = "file://%s" % data
    elif case == "glob":
        args = ["data/*.jsonl"]
    elif case == "inside-input-dir":
        args, out = ["data"], "data/out"
    elif case == "queries":
        if module != "mrjobs.dot_products":
            pytest.skip("--queries is an option of the dot products job")
        corpus_file(tmp_path, name="corpus.jsonl")
        args, out = ["corpus.jsonl", "--queries", "data/corpus.jsonl"], "data"
    proc = launch(tmp_path, *args, "--output-dir", out, "--overwrite-output", module=module,
                  cwd=cwd)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "mrsparse: error: --output-dir %s " % out in proc.stderr
    assert "Choose an output directory apart from every input" in proc.stderr
    assert "--queries" in proc.stderr.splitlines()[-1] if case == "queries" else True
    assert sorted(os.listdir(data)) == ["corpus.jsonl"]  # nothing removed, nothing added


@pytest.mark.parametrize("out, inputs, relation", [
    ("hdfs:///data", [("the input", "hdfs://nn:8020/data/a.jsonl")], "holds"),
    ("hdfs://nn:8020/data/a.jsonl/out", [("the input", "hdfs:///data/a.jsonl")],
     "lies inside"),
    ("s3://bucket/data/", [("the input", "s3://bucket/data")], "is"),
    ("s3://bucket/x/../data", [("--queries", "s3://bucket/data/q-*.jsonl")], "holds"),
    ("s3://bucket/data/q-1.jsonl/out", [("--queries", "s3://bucket/data/q-*.jsonl")],
     "lies inside"),
])
def test_overlap_of_uris(out, inputs, relation):
    with pytest.raises(OverlapError, match=" %s %s " % (relation, inputs[0][0])):
        refuse_overlap(out, inputs)


@pytest.mark.parametrize("out, inputs", [
    ("s3://bucket/out", [("the input", "s3://bucket/data")]),
    ("s3://other/data", [("the input", "s3://bucket/data")]),
    ("hdfs:///data", [("the input", "s3://bucket/data")]),
    ("hdfs://nn:8020/data", [("the input", "hdfs://other:8020/data")]),
    ("hdfs:///data/out", [("the input", "hdfs:///data/*.jsonl")]),
])
def test_outputs_apart_from_the_inputs_are_accepted(out, inputs):
    refuse_overlap(out, inputs)


# -- 4. and 19.4: options out of range or without effect -----------------------

@pytest.mark.parametrize("args, message", [
    (["--blocks", "99999999999999999999"], "argument --blocks: at most 10000"),
    (["--blocks", str(len(LINES) + 1)],
     "argument --blocks: %d blocks for %d input line(s)" % (len(LINES) + 1, len(LINES))),
    (["--blocks", "0"], "argument --blocks: must be at least 1, not 0"),
    (["--threshold", "nan"], "argument --threshold: must be a finite number, not nan"),
    (["--threshold", "inf"], "argument --threshold: must be a finite number, not inf"),
    (["--top-k", "0"], "argument --top-k: must be at least 1, not 0"),
    (["--top-k", "-3"], "argument --top-k: must be at least 1, not -3"),
    (["--buffer-entries", "0"], "argument --buffer-entries: must be at least 1, not 0"),
    (["--max-df", "0"], "argument --max-df: must be at least 1, not 0"),
    (["--num-features", "0", "--measure", "loglikelihood"],
     "argument --num-features: must be at least 1, not 0"),
    (["--strategy", "stripes", "--blocks", "3"],
     "argument --blocks: has no effect with --strategy stripes"),
    (["--num-features", "5"], "argument --num-features: has no effect with --measure dot"),
    (["--overwrite-output"], "argument --overwrite-output: has no effect without --output-dir"),
    (["--no-prune"], "argument --no-prune: has no effect without --threshold"),
    (["--no-prune", "--threshold", "0.5", "--strategy", "stripes"],
     "argument --no-prune: has no effect with --strategy stripes"),
    (["--no-prune", "--threshold", "0.5", "--measure", "loglikelihood", "--num-features", "9"],
     "argument --no-prune: has no effect with --measure loglikelihood"),
])
@pytest.mark.slow
def test_options_out_of_range_or_without_effect_are_refused(tmp_path, args, message):
    path = corpus_file(tmp_path)
    proc = launch(tmp_path, path, *args)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines()[-1].startswith(
        "python -m mrjobs.dot_products: error: " + message)
    assert "Traceback" not in proc.stderr and "Running step" not in proc.stderr


@pytest.mark.slow
def test_blocks_up_to_the_number_of_lines_run(tmp_path):
    path = corpus_file(tmp_path)
    proc = launch(tmp_path, path, "--blocks", str(len(LINES)), "-q")
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) > 10


# -- 5. an output committer; tasks that die with their launcher ----------------

@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.slow
@pytest.mark.smoke
def test_output_appears_only_when_the_job_succeeded_with_success_marker(tmp_path, runner):
    path = corpus_file(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "part-00007").write_text("stale\n")
    bad = corpus_file(tmp_path, LINES[:5] + ["garbage"], name="bad.jsonl")
    # a failed run under --overwrite-output leaves the old output as it was
    proc = launch(tmp_path, bad, "-r", runner, "-o", out, "--overwrite-output", "--strict")
    assert proc.returncode == 1 and "garbage" in proc.stderr.splitlines()[-1], proc.stderr
    assert os.listdir(out) == ["part-00007"]
    proc = launch(tmp_path, path, "-r", runner, "-o", out, "--overwrite-output")
    assert proc.returncode == 0, proc.stderr
    files = sorted(os.listdir(out))
    assert "_SUCCESS" in files and "part-00007" not in files
    assert (out / "_SUCCESS").read_bytes() == b""
    assert "job output is in %s\n" % out in proc.stderr
    # nothing beside it, nothing in the temporary directory
    assert sorted(os.listdir(tmp_path)) == ["bad.jsonl", "corpus.jsonl", "out", "tmp"]
    assert os.listdir(tmp_path / "tmp") == []


@pytest.mark.skipif(not LINUX, reason="reads the process tree from /proc")
@pytest.mark.slow
def test_kill_9_of_the_launcher_leaves_no_task_and_no_output(tmp_path):
    path = corpus_file(tmp_path)
    out = tmp_path / "out"
    # the last step's reducers wait: the moment a killed run left half its parts
    proc = start(tmp_path, path, "-r", "local", "-o", out, stall="1:reducer",
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: stalled(tmp_path), "a task of the last step")
        below = descendants(proc.pid)
        assert below
    finally:
        proc.kill()
        proc.wait()
    wait_for(lambda: not any(running(p) for p in below), "the task processes to end")
    assert not out.exists()


@pytest.mark.skipif(not LINUX, reason="reads the process tree from /proc")
@pytest.mark.parametrize("to", ["process-group", "launcher"])
@pytest.mark.slow
@pytest.mark.smoke
def test_ctrl_c_of_a_local_run_is_one_line_and_leaves_nothing(tmp_path, to):
    path = corpus_file(tmp_path)
    proc = start(tmp_path, path, "-r", "local", "-o", tmp_path / "out", stall="1:reducer",
                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                 start_new_session=True)
    try:
        wait_for(lambda: stalled(tmp_path), "a running task")
        below = descendants(proc.pid)
        if to == "process-group":  # what a terminal's Ctrl-C does
            os.killpg(proc.pid, signal.SIGINT)
        else:
            os.kill(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, stderr
    assert stderr.splitlines()[-1].startswith("mrsparse: interrupted; removed ")
    assert stderr.splitlines()[-1].endswith(" MB of temporary files")
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert stdout == ""
    wait_for(lambda: not any(running(p) for p in below), "the task processes to end")
    assert os.listdir(tmp_path / "tmp") == []
    assert not [f for f in os.listdir(tmp_path) if f.startswith((".out", "out"))]


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.slow
def test_failed_strict_run_leaves_no_temporary_files(tmp_path, runner):
    path = corpus_file(tmp_path, LINES[:5] + ["garbage here"])
    proc = launch(tmp_path, path, "--strict", "-r", runner)
    assert proc.returncode == 1
    assert os.listdir(tmp_path / "tmp") == []


# -- 19.1: a closed pipe ---------------------------------------------------------

@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.slow
def test_closed_pipe_ends_quietly_like_unix_tools(tmp_path, runner):
    path = corpus_file(tmp_path)
    proc = start(tmp_path, path, "-q", "-r", runner, stdout=subprocess.PIPE,
                 stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader went away (`| head -0`) before any output
    stderr = proc.stderr.read().decode()
    proc.wait()
    assert proc.returncode == 141  # 128 + SIGPIPE, as the shell reports `seq 9 | head -0`
    assert stderr == ""
    assert os.listdir(tmp_path / "tmp") == []


def test_head_of_the_output_in_a_shell_pipe(tmp_path):
    path = corpus_file(tmp_path)
    proc = subprocess.run(["/bin/sh", "-c", '"$0" -m mrjobs.dot_products "$1" -q | head -1',
                           sys.executable, str(path)],
                          cwd=tmp_path, env=env_for(tmp_path), capture_output=True, text=True)
    assert proc.stderr == ""
    assert len(proc.stdout.splitlines()) == 1 and proc.stdout.startswith('"')


# -- 6. a task out of memory; a task Python without scipy -------------------------

def dense_corpus(tmp_path, n=3000, features=20):
    r = random.Random(1)
    feats = [str(uuid.UUID(int=r.getrandbits(128))) for _ in range(features)]
    return corpus_file(tmp_path, [json.dumps({
        "id": str(uuid.UUID(int=r.getrandbits(128))),
        "features": {f: 1 + r.random() for f in feats}}) for _ in range(n)], "dense.jsonl")


@pytest.mark.skipif(not LINUX, reason="address-space limits as on Linux")
@pytest.mark.parametrize("runner, mb", [("inline", 250), ("local", 240)])
@pytest.mark.slow
def test_task_out_of_memory_is_one_line_with_advice(tmp_path, runner, mb):
    path = dense_corpus(tmp_path)

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (mb * 2**20, mb * 2**20))
    # one block pair of 3,000 vectors that share every feature: 9 million
    # products in one chunk with --buffer-entries 10^8
    proc = launch(tmp_path, path, "-q", "-r", runner, "--blocks", "1", "--buffer-entries",
                  "100000000", preexec_fn=limit)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    last = proc.stderr.splitlines()[-1]
    assert last.startswith("mrsparse: task failed: out of memory in the reducer of step 1 ")
    assert "lower --buffer-entries (now 100000000) or raise --blocks (now 1)" in last


@pytest.mark.slow
def test_task_python_without_scipy_is_refused_before_any_step(tmp_path):
    path = corpus_file(tmp_path)
    python = bare_python(tmp_path, ("numpy",))
    proc = launch(tmp_path, path, "-r", "local", "--python-bin", python)
    assert proc.returncode == 1, proc.stderr
    assert "Running step" not in proc.stderr and "Traceback" not in proc.stderr
    last = proc.stderr.splitlines()[-1]
    assert last.startswith("mrsparse: error: the task Python %s cannot import numpy, "
                           "scipy.sparse (ModuleNotFoundError: No module named 'scipy')"
                           % python), last
    assert "install numpy and scipy in the task Python" in last
    # stripes needs numpy alone: the same Python runs it
    proc = launch(tmp_path, path, "-r", "local", "--python-bin", python, "-q",
                  "--strategy", "stripes")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.slow
def test_task_without_scipy_fails_in_one_line(tmp_path):
    """The task side, where no launcher could check (a cluster): the steps
    run by hand, as Hadoop Streaming runs them, the last in a numpy-only
    Python."""
    from mrjobs.runtime.shipping import package_zip
    path = corpus_file(tmp_path)
    env = dict(os.environ, PYTHONPATH=REPO)
    job = [sys.executable, "-m", "mrjobs.dot_products", "--blocks", "2"]
    data = path.read_bytes()
    # step 1's mappers (they need numpy alone), then its shuffle
    data = subprocess.run(job + ["--step-num=0", "--mapper"], input=data,
                          env=env, capture_output=True, check=True).stdout
    data = b"".join(sorted(data.splitlines(keepends=True)))
    import mrjob
    shipped = tmp_path / "mrjob-only"  # mrjob ships itself to the tasks
    shipped.mkdir()
    os.symlink(os.path.dirname(mrjob.__file__), shipped / "mrjob")
    bare = [bare_python(tmp_path, ("numpy",)), "-m", "mrjobs.dot_products", "--blocks", "2"]
    proc = subprocess.run(bare + ["--step-num=0", "--reducer"], input=data, cwd=tmp_path,
                          env=dict(os.environ, PYTHONPATH="%s:%s" % (package_zip(), shipped)),
                          capture_output=True)
    err = proc.stderr.decode()
    assert proc.returncode == 1
    assert "Traceback" not in err, err
    assert err.startswith("mrsparse: task failed: the task Python ") and \
        "cannot import scipy in the reducer of step 1" in err and \
        "install numpy and scipy in the task Python" in err and len(err.splitlines()) == 1


# -- 7 (part): an empty --queries file -------------------------------------------

@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.slow
def test_empty_queries_file_fails_clearly(tmp_path, runner):
    path = corpus_file(tmp_path)
    (tmp_path / "queries.jsonl").write_text("\n")
    proc = launch(tmp_path, path, "--queries", "queries.jsonl", "-r", runner)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        "mrsparse: error: --queries queries.jsonl: not one query vector could be read (the "
        "file is empty, blank or all bad lines), so there is nothing to score")


# -- 19.3: messages that name what the user gave -----------------------------------

def test_output_dir_that_is_a_file_is_refused_even_with_overwrite(tmp_path):
    path = corpus_file(tmp_path)
    (tmp_path / "afile").write_text("keep me\n")
    for extra in ([], ["--overwrite-output"]):
        proc = launch(tmp_path, path, "-o", "afile", *extra)
        assert proc.returncode == 1
        assert proc.stderr.splitlines()[-1] == (
            "mrsparse: error: --output-dir afile is a file, not a directory: give a "
            "directory (the job writes part files into it)")
        assert (tmp_path / "afile").read_text() == "keep me\n"


def test_missing_queries_names_the_option(tmp_path):
    path = corpus_file(tmp_path)
    proc = launch(tmp_path, path, "--queries", "nosuch.jsonl")
    assert proc.stderr.splitlines()[-1] == "mrsparse: error: --queries path nosuch.jsonl " \
                                           "does not exist"


@pytest.mark.parametrize("strict", [False, True])
def test_csv_given_by_mistake_says_which_formats_are_accepted(tmp_path, strict):
    (tmp_path / "sample.csv").write_text("id,feature,weight\n1,2,0.5\n")
    proc = launch(tmp_path, "sample.csv", *(["--strict"] if strict else []))
    assert proc.returncode == 1
    last = proc.stderr.splitlines()[-1]
    assert 'accepted: json, one {"id": UUID, "features": {UUID: weight, ...}} a line; ' \
           'tsv, one UUID TAB UUID:weight UUID:weight ... a line' in last
    if strict:  # the path as given, not file://sample.csv
        assert last.startswith("mrsparse: error: sample.csv, line 1: id not a UUID: ")


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.slow
def test_strict_names_the_line_in_the_file(tmp_path, runner):
    lines = corpus(n=3000, seed=8, edge_cases=False)
    lines[2500] = "garbage here"
    corpus_file(tmp_path, lines)
    proc = launch(tmp_path, "corpus.jsonl", "--strict", "-r", runner,
                  "--jobconf", "mapreduce.job.maps=4")
    assert proc.returncode == 1
    last = proc.stderr.splitlines()[-1]
    assert "corpus.jsonl, line 2501: malformed line" in last, proc.stderr
    assert "file:" not in last and "split" not in last
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(not LINUX, reason="reads the process table from /proc")
def test_stopping_reaps_a_task_the_launcher_started_itself():
    # a step of one task runs it from the launcher's own process (no pool): on
    # Ctrl-C it ends on SIGTERM and must be reaped, not left a zombie that
    # still looks alive (the stop then waited its whole patience)
    from mrjobs.runtime.tasks import TaskGuard

    guard = TaskGuard()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        open(os.path.join(guard.dir, str(child.pid)), "w").close()
        guard.stop()
        assert not os.path.exists("/proc/%d" % child.pid)
        assert not os.path.exists(guard.dir)
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
