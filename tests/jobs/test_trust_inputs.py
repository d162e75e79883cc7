"""Issue 24, finding 10 and the option side of finding 5: inputs that are no
regular files, and option values a task could overflow on.

* A pipe (``<(zcat x.gz)``: a ``/dev/fd`` path; a named FIFO; stdin with or
  without ``-``) is read, once, and the job's output is the output of the
  same lines in a file; nothing of the pipe's copy is left behind.
* Size-dependent decisions (the default --blocks, the check of --blocks
  against the line count) never open or consume a pipe.
* ``/dev/zero`` and other devices (as a path, inside a directory, as stdin)
  are refused in one line naming the path, before the job starts.
* --top-k, --buffer-entries, --max-df, --num-features and --num-cores are
  bounded at parse time (one line, exit 2); the bounds themselves run.
* The out-of-memory advice names --top-k when K is large.

Every run is a real launcher process.  Pipes are fed by writer threads that
always finish: they write only once a reader has the pipe open and give up
when the launcher has ended; a write to a launcher that is gone fails
(EPIPE) instead of blocking.  Subprocess timeouts are only a safety net
against a hang bug, never a measure of speed.
"""
import errno
import os
import resource
import subprocess
import sys
import threading
import time

import pytest

from mrjobs.runtime.failures import TaskFailed
from mrjobs.runtime.tasks import task_errors
from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.options import LARGE_TOP_K, MAX_TOP_K
from mrjobs.testing import write_lines
from tests.jobs_helpers import corpus

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINES = corpus(n=40, seed=24)
DATA = "".join(line + "\n" for line in LINES).encode()
LINUX = sys.platform.startswith("linux")

#: a safety net against a hang bug only (a slow machine passes)
HANG = 600

pytestmark = pytest.mark.skipif(not LINUX, reason="/dev/fd, /dev/zero and FIFOs as on Linux")


def env_for(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    return dict(os.environ, PYTHONPATH=REPO, TMPDIR=str(tmp), OPENBLAS_NUM_THREADS="1")


def start(tmp_path, *args, module="mrjobs.dot_products", **kw):
    return subprocess.Popen([sys.executable, "-m", module]
                            + [str(a) for a in args], cwd=tmp_path, env=env_for(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def finish(proc, stdin=None):
    try:
        out, err = proc.communicate(stdin, timeout=HANG)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError("the launcher hung (killed after the safety timeout)")
    return proc.returncode, out.decode(), err.decode()


def launch(tmp_path, *args, stdin=None, **kw):
    return finish(start(tmp_path, *args, stdin=subprocess.PIPE if stdin is not None
                        else kw.pop("stdin_file", subprocess.DEVNULL), **kw), stdin)


def feed(fd, data):
    """Write ``data`` to the write end ``fd`` of a pipe, then close it; ends
    early (EPIPE) when no reader is left."""
    def run():
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        except BrokenPipeError:
            pass
        finally:
            os.close(fd)
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def feed_fifo(path, data, proc):
    """Write ``data`` into the named FIFO once a reader opens it; gives up
    when ``proc`` ends without opening it."""
    def run():
        while True:
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError as e:
                if e.errno != errno.ENXIO or proc.poll() is not None:
                    return
                time.sleep(0.02)
        os.set_blocking(fd, True)
        feed(fd, data).join()
    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def start_with_pipe(tmp_path, data, *args, **kw):
    """A launcher whose input (where ``{pipe}`` stands in ``args``) is a
    /dev/fd path of a pipe, as bash's ``<(...)`` gives."""
    r, w = os.pipe()
    path = "/dev/fd/%d" % r
    try:
        proc = start(tmp_path, *[path if a == "{pipe}" else a for a in args],
                     stdin=subprocess.DEVNULL, pass_fds=(r,), **kw)
    finally:
        os.close(r)
    feed(w, data)
    return proc


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The output of the job on the lines as a regular file."""
    tmp = tmp_path_factory.mktemp("reference")
    write_lines(tmp / "corpus.jsonl", LINES)
    status, out, err = launch(tmp, "-q", tmp / "corpus.jsonl")
    assert status == 0, err
    assert len(out.splitlines()) > 10
    return out


def left_behind(tmp_path):
    return sorted(os.listdir(tmp_path / "tmp"))


def assert_refused(status, err, *words):
    assert status == 1, err
    last = err.splitlines()[-1]
    assert last.startswith("mrsparse: error: "), err
    for w in words:
        assert w in last, err
    assert "Traceback" not in err and "Running step" not in err, err


# -- pipes are read -------------------------------------------------------------

@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.slow
def test_a_dev_fd_pipe_is_read_as_its_lines_in_a_file(tmp_path, reference, runner):
    """``<(zcat x.gz)``: failed with "No such file or directory:
    '/proc/PID/fd/pipe:[...]'"."""
    proc = start_with_pipe(tmp_path, DATA, "-q", "-r", runner, "{pipe}")
    status, out, err = finish(proc)
    assert status == 0, err
    assert out == reference
    assert left_behind(tmp_path) == []


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.slow
def test_a_named_fifo_is_read_as_its_lines_in_a_file(tmp_path, reference, runner):
    fifo = tmp_path / "vectors.fifo"
    os.mkfifo(fifo)
    proc = start(tmp_path, "-q", "-r", runner, "--blocks", "2", fifo, stdin=subprocess.DEVNULL)
    writer = feed_fifo(fifo, DATA, proc)
    status, out, err = finish(proc)
    writer.join(HANG)
    assert status == 0, err
    assert out == reference
    assert left_behind(tmp_path) == []


@pytest.mark.slow
def test_queries_from_a_pipe(tmp_path):
    write_lines(tmp_path / "corpus.jsonl", LINES)
    write_lines(tmp_path / "q.jsonl", LINES[:5])
    status, expected, err = launch(tmp_path, "-q", "--queries", tmp_path / "q.jsonl",
                                   tmp_path / "corpus.jsonl")
    assert status == 0, err
    proc = start_with_pipe(tmp_path, "".join(l + "\n" for l in LINES[:5]).encode(),
                           "-q", "-r", "local", "--queries", "{pipe}",
                           tmp_path / "corpus.jsonl")
    status, out, err = finish(proc)
    assert status == 0, err
    assert out == expected and out
    assert left_behind(tmp_path) == []


@pytest.mark.parametrize("dash", [[], ["-"]])
@pytest.mark.slow
def test_stdin_with_blocks_counts_its_lines(tmp_path, reference, dash):
    """Piped stdin without ``-`` plus --blocks 2 was refused as "2 blocks
    for 0 input line(s)"."""
    status, out, err = launch(tmp_path, "-q", "--blocks", "2", *dash, stdin=DATA)
    assert status == 0, err
    assert out == reference
    status, out, err = launch(tmp_path, "--blocks", "2", *dash, stdin=DATA[:DATA.index(b"\n") + 1])
    assert status == 2, err
    assert "argument --blocks: 2 blocks for 1 input line(s)" in err.splitlines()[-1]
    assert left_behind(tmp_path) == []


def test_sizing_never_opens_or_consumes_a_pipe(tmp_path):
    """The default --blocks and the --blocks check of a job built without
    the launcher (the planner's way): a pipe's size is unknown, and its
    lines stay in it."""
    r, w = os.pipe()
    try:
        os.write(w, DATA[:1000])
        os.close(w)
        path = "/dev/fd/%d" % r
        job = MRSparseDotProducts([path])
        assert job._default_blocks() == 8  # "input size unknown"
        from mrjobs.runtime.paths import local_lines
        assert local_lines([path], stop_above=2) is None
        assert os.read(r, 2000) == DATA[:1000]
    finally:
        os.close(r)
    assert MRSparseDotProducts([])._input_size() is None  # stdin


# -- what never ends (or is no file) is refused -----------------------------------

@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.parametrize("blocks", [[], ["--blocks", "2"]])
@pytest.mark.slow
def test_dev_zero_is_refused_naming_it(tmp_path, runner, blocks):
    """``/dev/zero --blocks 2`` hung (the line count never ended); without
    --blocks the tasks read it forever."""
    status, out, err = launch(tmp_path, "-r", runner, "/dev/zero", *blocks)
    assert_refused(status, err, "input path /dev/zero is a character device")
    assert out == "" and left_behind(tmp_path) == []


def test_dev_zero_as_stdin_is_refused(tmp_path):
    with open("/dev/zero", "rb") as zero:
        status, out, err = launch(tmp_path, stdin_file=zero)
    assert_refused(status, err, "stdin (no input path was given) is a character device")


def test_dev_zero_as_queries_is_refused(tmp_path):
    write_lines(tmp_path / "corpus.jsonl", LINES)
    status, out, err = launch(tmp_path, "--queries", "/dev/zero", tmp_path / "corpus.jsonl")
    assert_refused(status, err, "--queries path /dev/zero is a character device")


def test_a_fifo_inside_an_input_directory_is_refused_unopened(tmp_path):
    """Its lines could be read only once, and nobody writes to it: opening
    it would wait forever."""
    data = tmp_path / "data"
    data.mkdir()
    write_lines(data / "a.jsonl", LINES)
    os.mkfifo(data / "b.fifo")
    status, out, err = launch(tmp_path, data)
    assert_refused(status, err, "holds %s, a pipe" % (data / "b.fifo"))


def test_dev_null_is_an_empty_input_not_a_refused_device(tmp_path):
    status, out, err = launch(tmp_path, "/dev/null")
    assert status == 1, err
    assert err.splitlines()[-1].startswith("mrsparse: error: not one vector could be read")
    assert left_behind(tmp_path) == []


# -- options out of range -----------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    (["--top-k", "6148914691236517206"],
     "argument --top-k: must be at most 2147483647, not 6148914691236517206"),
    (["--top-k", "100000000000000000000000"], "argument --top-k: must be at most 2147483647"),
    (["--top-k", "2147483648"], "argument --top-k: must be at most 2147483647, not 2147483648"),
    (["--top-k", "1e23"], "argument --top-k: invalid int value: '1e23'"),
    (["--buffer-entries", str(2**40 + 1)],
     "argument --buffer-entries: must be at most %d" % 2**40),
    (["--buffer-entries", "9" * 5000], "argument --buffer-entries: invalid int value"),
    (["--max-df", str(2**62 + 1)], "argument --max-df: must be at most %d" % 2**62),
    (["--measure", "loglikelihood", "--num-features", str(2**62 + 1)],
     "argument --num-features: must be at most %d" % 2**62),
    (["--num-cores", "0"], "argument --num-cores: must be at least 1, not 0"),
    (["--num-cores", "-2"], "argument --num-cores: must be at least 1, not -2"),
    (["--num-cores", "100000"], "argument --num-cores: must be at most 1024, not 100000"),
    (["--threshold", "1e999"], "argument --threshold: must be a finite number, not 1e999"),
    (["--threshold", "-inf"], "argument --threshold: must be a finite number, not -inf"),
])
@pytest.mark.slow
def test_option_values_a_task_could_overflow_on_are_refused(tmp_path, args, message):
    write_lines(tmp_path / "corpus.jsonl", LINES)
    # --option=value: a value may start with "-"
    status, out, err = launch(tmp_path, "-r", "local", tmp_path / "corpus.jsonl",
                              *("%s=%s" % (args[i], args[i + 1]) for i in range(0, len(args), 2)))
    assert status == 2, err
    last = err.splitlines()[-1]
    assert last.startswith("python -m mrjobs.dot_products: error: " + message), err
    assert len(last) < 200 and "Traceback" not in err


def test_the_largest_top_k_runs(tmp_path, reference):
    """K beyond every vector's neighbours keeps them all: the output
    without --top-k."""
    write_lines(tmp_path / "corpus.jsonl", LINES)
    status, out, err = launch(tmp_path, "-q", "--top-k", str(MAX_TOP_K),
                              tmp_path / "corpus.jsonl")
    assert status == 0, err
    assert out == reference


# -- the out-of-memory advice ---------------------------------------------------------

@pytest.mark.parametrize("k, named", [(None, False), (10, False), (LARGE_TOP_K, True)])
def test_out_of_memory_advice_names_a_large_top_k(k, named):
    args = ["--blocks", "3"] + (["--top-k", str(k)] if k else [])
    job = MRSparseDotProducts(args)
    with pytest.raises(TaskFailed) as e:
        with task_errors(job, "reducer", 0):
            raise MemoryError()
    message = str(e.value)
    assert message.startswith("out of memory in the reducer of step 1 ")  # the block pairs
    assert ("lower --top-k (now %s" % k in message) is named
    assert "lower --buffer-entries (now 1000000)" in message
    assert "raise --blocks (now 3)" in message


@pytest.mark.slow
def test_a_task_out_of_memory_with_a_large_top_k_says_so(tmp_path):
    """A block pair of 3,000 vectors that share every feature with K above
    them: each column keeps 1.5 times 3,000 candidates."""
    import json
    import random
    import uuid
    r = random.Random(1)
    feats = [str(uuid.UUID(int=r.getrandbits(128))) for _ in range(20)]
    write_lines(tmp_path / "dense.jsonl", [json.dumps({
        "id": str(uuid.UUID(int=r.getrandbits(128))),
        "features": {f: 1 + r.random() for f in feats}}) for _ in range(3000)])

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (250 * 2**20, 250 * 2**20))
    status, out, err = launch(tmp_path, "-q", "--blocks", "1", "--top-k", "2000000000",
                              tmp_path / "dense.jsonl", preexec_fn=limit)
    assert status == 1, err
    last = err.splitlines()[-1]
    assert last.startswith("mrsparse: task failed: out of memory in the reducer of step 1 ")  # the block pairs
    assert "lower --top-k (now 2000000000" in last


def test_the_default_blocks_never_exceed_the_jobs_limit(tmp_path, caplog):
    # an input of 2 TB (a sparse file: no disk used) would suit more blocks
    # than the job takes; the default stays at the limit, with a warning
    from mrjobs.dot_products import MRSparseDotProducts
    from mrjobs.strategies.sizing import MAX_BLOCKS
    big = tmp_path / "big.jsonl"
    with open(big, "wb") as f:
        f.truncate(2 * 10**12)
    job = MRSparseDotProducts([str(big), "-r", "local", "--num-cores", "2"])
    with caplog.at_level("INFO", logger="mrjobs"):
        assert job._default_blocks() == MAX_BLOCKS
    assert "more than the job takes (%d)" % MAX_BLOCKS in caplog.text


# -- the inverted index reads its input as the dot-products job does ---------------

@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.slow
def test_the_index_reads_a_pipe_as_the_same_lines_in_a_file(tmp_path, runner):
    write_lines(tmp_path / "corpus.jsonl", LINES)
    index = "mrjobs.inverted_index"
    status, want, err = launch(tmp_path, "-q", "-r", runner, tmp_path / "corpus.jsonl",
                               module=index)
    assert status == 0, err
    status, out, err = finish(start_with_pipe(tmp_path, DATA, "-q", "-r", runner, "{pipe}",
                                              module=index))
    assert status == 0, err
    assert out == want and len(out.splitlines()) > 10
    assert left_behind(tmp_path) == []


def test_the_index_refuses_dev_zero(tmp_path):
    status, out, err = launch(tmp_path, "/dev/zero", module="mrjobs.inverted_index")
    assert_refused(status, err, "input path /dev/zero is a character device")
