"""The jobs on a real pseudo-distributed Hadoop: HDFS (NameNode + DataNode) and
YARN (ResourceManager + 2 NodeManagers, MapReduce tasks in containers), through
mrjob's hadoop runner used unchanged, against the inline runner.

The cluster (tests/engines/cluster.py) starts once per session and is always
stopped.  Every run here uses:

- a task interpreter with numpy and scipy only (``--python-bin``): mrjob and
  mrsparse travel with the job;
- 3 reducers and at least 3 map tasks per step (``mapreduce.job.maps=4`` is
  Hadoop Streaming's split-size knob: its input format cuts each input into
  about that many splits), so binary keys are partitioned, and sorted runs
  from several maps merged, across two NodeManagers (the failing run has one
  map, see there);
- ``examples/conf/hadoop.mrjob.conf`` where a user would use it (map-output
  compression with its codec, container sizes, HDFS tmp dir).

A job run costs 0.5-3 minutes on a 2-core machine, so each test combines cases.

The ``test_survives_*`` tests at the end inject real faults into running jobs
(a task attempt killed -9, a reducer's failed first attempt, speculative
attempts, a NodeManager stopped) and check that the results do not change.
"""
import getpass
import os
import re
import signal
import subprocess
import threading
import time
import uuid

import numpy as np
import pytest

from mrjobs.convert import MRConvert
from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.inverted_index import MRInvertedIndex
from mrjobs.testing import run_job, write_lines
from tests.engines.cluster import hadoop
from tests.engines.support import (
    BAD_LINES, COMMON, EXAMPLE_CONF, LAUNCHER, MAX_DF, PYTHON, REPO, TRICKY_DOCS,
    TRICKY_FEATURES, clean_env, mrsparse_counters, run_cli, run_status)
from tests.jobs_helpers import assert_scores_close

#: the fixtures (hadoop_cluster, task_python, corpus_files, ...)
pytest_plugins = ["tests.engines.fixtures"]
pytestmark = [pytest.mark.engines, pytest.mark.usefixtures("cluster_env")]

HADOOP_CONF = os.path.join(EXAMPLE_CONF, "hadoop.mrjob.conf")
#: several maps and reducers per step
SPREAD = ["-D", "mapreduce.job.reduces=3", "-D", "mapreduce.job.maps=4"]


def cluster_args(cluster, jar, python_bin, conf=HADOOP_CONF):
    """mrjob options of a run on the cluster: what a user passes, plus where
    the NodeManagers keep task logs (for mrjob's report of a failed task)."""
    args = ["-c", conf] if conf else ["--no-conf"]
    args += ["-r", "hadoop", "--hadoop-bin", LAUNCHER, "--hadoop-streaming-jar", jar,
             "--python-bin", python_bin]
    for d in cluster.log_dirs:
        args += ["--hadoop-log-dirs", d]
    return args + SPREAD


def group(step, name):
    """A counter group of one step (Hadoop writes some names with a trailing space)."""
    (found,) = [names for g, names in step.items() if g.strip() == name]
    return found


def check_spread(run, steps):
    """Every step ran >= 3 map tasks and, if it has a reducer, >= 3 reduce
    tasks (the first step always has one), on YARN.  The counters count
    attempts, which YARN may start more of than there are tasks (a retry, a
    speculative attempt): at least, never exactly."""
    assert len(run.step_counters) == steps
    for n, step in enumerate(run.step_counters):
        job = group(step, "Job Counters")
        assert job["Launched map tasks"] >= 3, (n, job)
        if n == 0 or "Launched reduce tasks" in job:
            assert job["Launched reduce tasks"] >= 3, (n, job)
    assert "Submitted application application_" in run.log      # YARN, not local mode
    assert "hdfs://" in run.log


def check_compressed(run):
    """Map output went through the example conf's codec: what was written for
    the shuffle (materialized) is smaller than the records themselves."""
    for step in run.step_counters:
        if "Launched reduce tasks" not in group(step, "Job Counters"):
            continue                 # a map-only step has no shuffle
        mr = group(step, "Map-Reduce Framework")
        assert mr["Map output materialized bytes"] < mr["Map output bytes"], mr


def check_same_neighbours(got, want):
    assert_scores_close(got, want, rtol=1e-12)
    for k, row in want.items():               # same order: best first, ties by UUID
        assert list(got[k]) == list(row), k


def test_inverted_index_hdfs_input_example_conf(hadoop_cluster, streaming_jar, task_python,
                                                hdfs_corpus, corpus_files):
    corpus, _ = corpus_files
    args = ["--output-format", "compact"]
    run = run_cli(MRInvertedIndex, cluster_args(hadoop_cluster, streaming_jar, task_python)
                  + args + [hdfs_corpus])
    inline = run_job(MRInvertedIndex, None, args, input_paths=[corpus])
    # binary records, TAB/LF/CR escaped in keys and values: byte for byte
    assert run.lines == inline.lines
    assert set(TRICKY_FEATURES) | {COMMON} <= {f.bytes for f, _ in run.output}
    assert mrsparse_counters(run.counters) == mrsparse_counters(inline.counters)
    check_spread(run, 1)
    check_compressed(run)
    assert "mrsparse: skipped 4 bad input line(s)" in run.log
    check_quiet(run.log)
    # the conf's hadoop_tmp_dir, relative: in the user's HDFS home
    assert "Output directory: hdfs:///user/%s/tmp/mrjob/" % getpass.getuser() in run.log


def check_quiet(log):
    """The launcher shows Hadoop's WARN and above, plus the INFO lines mrjob
    reads back: not the hundreds of other INFO lines of a job."""
    for wanted in ("Running job: job_", "The url to track the job: ", " map 100% reduce 100%",
                   "Output directory: hdfs://", "Counters: "):
        assert wanted in log, wanted
    for noise in ("Connecting to ResourceManager", "Total input files to process",
                  "number of splits:", "Submitting tokens for job", "Got brand-new"):
        assert noise not in log, noise


def test_the_prefix_strategy_on_the_cluster(hadoop_cluster, streaming_jar, task_python,
                                           corpus_files):
    # the df run and the job's two steps on YARN (the table shipped from the
    # launcher to the tasks), reducers spread: the same lines as blocks inline
    corpus, _ = corpus_files
    args = ["--measure", "cosine", "--threshold", "0.2"]
    run = run_cli(MRSparseDotProducts, cluster_args(hadoop_cluster, streaming_jar, task_python)
                  + args + ["--strategy", "prefix", corpus])
    inline = run_job(MRSparseDotProducts, None, args, input_paths=[corpus])
    assert sorted(run.lines) == sorted(inline.lines) and len(run.lines) > 20
    assert len(run.step_counters) == 2


def test_dot_products_cosine_top_k_max_df_uploaded_input(hadoop_cluster, streaming_jar,
                                                         task_python, corpus_files):
    # a local input file: mrjob uploads it to HDFS itself
    corpus, _ = corpus_files
    args = ["--measure", "cosine", "--top-k", "3", "--max-df", str(MAX_DF)]
    run = run_cli(MRSparseDotProducts, cluster_args(hadoop_cluster, streaming_jar, task_python)
                  + args + [corpus])
    inline = run_job(MRSparseDotProducts, None, args, input_paths=[corpus])
    got, want = dict(run.output), dict(inline.output)
    assert {uuid.UUID(bytes=d) for d in TRICKY_DOCS} <= set(want)
    assert len(want) > 200 and all(len(row) <= 3 for row in got.values())
    check_same_neighbours(got, want)
    check_spread(run, len(run.step_counters))
    assert len(run.step_counters) >= 2
    check_compressed(run)
    # the counters, read back by mrjob from the cluster: equal to inline's ...
    assert mrsparse_counters(run.counters) == mrsparse_counters(inline.counters)
    bad = run.counters["mrsparse input"]
    assert {name: bad.get(name) for name in BAD_LINES} == {
        name: len(lines) for name, lines in BAD_LINES.items()}
    assert run.counters["mrsparse df-cut"]["features dropped"] == 1
    # ... and in what the user sees
    assert "\t\tfeatures dropped=1\n" in run.log
    assert "mrsparse: skipped 4 bad input line(s)" in run.log
    assert "mrsparse: --max-df dropped 1 feature(s)" in run.log
    # mrjob uploaded the local input: the first step's maps read it from HDFS
    fs = group(run.step_counters[0], "File System Counters")
    assert fs["HDFS: Number of bytes read"] >= os.path.getsize(corpus), fs


@pytest.mark.smoke
def test_dot_products_default_options_hdfs_input_and_output(hadoop_cluster, streaming_jar,
                                                            task_python, hdfs_corpus,
                                                            corpus_files):
    # the job's defaults; no mrjob.conf (no map-output compression); input and
    # output on HDFS, the output read back with --cat-output
    corpus, _ = corpus_files
    out = "hdfs:///out/default"
    run = run_cli(MRSparseDotProducts, cluster_args(
        hadoop_cluster, streaming_jar, task_python, conf=None)
        + ["--output-dir", out, "--cat-output", hdfs_corpus])
    inline = run_job(MRSparseDotProducts, None, (), input_paths=[corpus])
    got, want = dict(run.output), dict(inline.output)
    assert len(want) > 200
    check_same_neighbours(got, want)
    check_spread(run, len(run.step_counters))
    assert mrsparse_counters(run.counters) == mrsparse_counters(inline.counters)
    # a complete output: a part file per reducer and the commit marker
    listing = hadoop(hadoop_cluster, "fs", "-ls", "-C", out).stdout.split()
    names = sorted(os.path.basename(p) for p in listing)
    assert names == ["_SUCCESS", "part-00000", "part-00001", "part-00002"], names


def test_convert_on_the_cluster_then_run_from_the_compact_copy(hadoop_cluster, streaming_jar,
                                                               task_python, hdfs_corpus,
                                                               corpus_files):
    # convert once where the data is (HDFS in, HDFS out), then run the
    # products job on the compact copy: the neighbours of the JSON corpus
    corpus, _ = corpus_files
    out = "hdfs:///compact/corpus"
    conv = run_cli(MRConvert, cluster_args(hadoop_cluster, streaming_jar, task_python)
                   + ["--to", "compact", "--output-dir", out, "--no-cat-output", hdfs_corpus])
    assert conv.lines == []
    assert conv.counters["mrsparse input"]["malformed line"] == \
        len(BAD_LINES["malformed line"])
    got = subprocess.run([LAUNCHER, "fs", "-cat", out + "/part-*"], check=True,
                         env=dict(os.environ, **hadoop_cluster.env), capture_output=True)
    inline = run_job(MRConvert, None, ["--to", "compact"], input_paths=[corpus])
    assert sorted(got.stdout.split(b"\n")[:-1]) == inline.lines

    args = ["--measure", "cosine", "--top-k", "3", "--max-df", str(MAX_DF)]
    run = run_cli(MRSparseDotProducts, cluster_args(hadoop_cluster, streaming_jar, task_python)
                  + args + ["--input-format", "compact", out])
    want = dict(run_job(MRSparseDotProducts, None, args, input_paths=[corpus]).output)
    got = dict(run.output)
    assert {uuid.UUID(bytes=d) for d in TRICKY_DOCS} <= set(got)
    check_same_neighbours(got, want)
    check_spread(run, len(run.step_counters))


def test_index_on_the_cluster_feeds_the_products(hadoop_cluster, streaming_jar, task_python,
                                                 hdfs_corpus, corpus_files):
    # the design's two jobs chained where the data is: the index writes its
    # compact posting lists on HDFS, the products job reads them there
    corpus, _ = corpus_files
    out = "hdfs:///postings/corpus"
    index = run_cli(MRInvertedIndex, cluster_args(hadoop_cluster, streaming_jar, task_python)
                    + ["--output-format", "compact", "--output-dir", out, "--no-cat-output",
                       hdfs_corpus])
    assert index.lines == []
    args = ["--measure", "cosine", "--top-k", "3", "--max-df", str(MAX_DF)]
    run = run_cli(MRSparseDotProducts, cluster_args(hadoop_cluster, streaming_jar, task_python)
                  + args + ["--input-format", "postings", out])
    inline = run_job(MRSparseDotProducts, None, args, input_paths=[corpus])
    got, want = dict(run.output), dict(inline.output)
    assert {uuid.UUID(bytes=d) for d in TRICKY_DOCS} <= set(got)
    assert run.lines == inline.lines  # blocks: the same bytes on every runner and split
    check_same_neighbours(got, want)
    assert run.counters["mrsparse input"]["posting lists read"] == len(
        run_job(MRInvertedIndex, None, [], input_paths=[corpus]).lines)


def test_strict_failure_is_reported_and_leaves_no_output(hadoop_cluster, streaming_jar,
                                                         task_python, hdfs_corpus):
    # the command line itself (python -m ...): its exit status and its stderr
    out = "/out/strict"
    env = dict(clean_env(), **hadoop_cluster.env)
    # One map task, one attempt: mrjob 0.7.4 cannot tell which container ran
    # the failed attempt here (it learns that from history logs whose names it
    # expects to hold the user "hadoop"), so it takes the first task log with a
    # Python command in it; with more maps, that of a map the AppMaster killed
    # when the job failed may come first.  3 reducers still.
    cmd = [PYTHON, "-m", "mrjobs.inverted_index"] + cluster_args(
        hadoop_cluster, streaming_jar, task_python) + [
        "-D", "mapreduce.job.maps=1", "-D", "mapreduce.map.maxattempts=1",
        "--strict", "--output-dir", "hdfs://" + out, hdfs_corpus]
    proc = subprocess.run(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=900)
    err = proc.stderr
    shown = err[:3000] + "\n[...]\n" + err[-6000:]
    assert proc.returncode == 1, shown
    assert proc.stdout == ""
    assert "Step 1 of 1 failed" in err, shown
    # the task's own error, which mrjob found in the NodeManagers' task logs
    # and shows as the cause: the file, the line, the kind, the line itself
    assert "Probable cause of failure" in err, shown
    # (one line, no traceback: mrjobs.job's task wrapper)
    m = re.search(r"mrsparse: error: hdfs://localhost:\d+/data/corpus\.jsonl, "
                  r"line (\d+): ([a-zA-Z ]+): .*\(line: '(.*)'\)",
                  err)
    assert m, shown
    kind, line = m.group(2), m.group(3)
    assert any(bad.startswith(line) for bad in BAD_LINES[kind]), (kind, line)
    assert m.group(1) == "38" and kind == "malformed line"      # the first bad line
    assert "Traceback" not in err, shown
    assert "Launched map tasks=1" in err
    # nothing half-written: no part file, no commit marker, no temporary dir
    ls = hadoop(hadoop_cluster, "fs", "-ls", "-R", out, check=False)
    assert ls.returncode != 0 or not ls.stdout.strip(), ls.stdout


# -- faults: what a cluster does to a job, injected for real --------------------
#
# Each test makes a fault happen to a running job (the test hooks of
# mrjobs/runtime/testhooks.py pick the task attempt by its id; the test kills its
# process, stops its NodeManager, or lets speculative execution overtake it)
# and compares the result with the inline runner's: the same records byte
# for byte, the same mrsparse counters, and Hadoop's own record counters
# equal to the input's and the output's line counts (an attempt that was
# killed or failed after it counted its records is not counted).  Each also
# checks that the fault did happen, so that it cannot pass without one.
# Nothing here depends on how many attempts YARN starts, or when.

INDEX_ARGS = ["--output-format", "compact"]

#: generous bounds against hanging forever (the faults wait for conditions)
PATIENCE = 1200


@pytest.fixture(scope="module")
def inline_index(corpus_files):
    """The inverted index of the engine corpus on the inline runner."""
    corpus, _ = corpus_files
    return run_job(MRInvertedIndex, None, INDEX_ARGS, input_paths=[corpus])


class Faults:
    """The test hooks of :mod:`mrjobs.runtime.testhooks` for one run: the ``--cmdenv``
    options that switch them on, and the notes they leave in ``dir``."""

    def __init__(self, directory, **variables):
        self.dir = str(directory)
        os.makedirs(self.dir, exist_ok=True)
        self.variables = dict(variables, MRSPARSE_TEST_DIR=self.dir)

    def args(self):
        out = []
        for name, value in sorted(self.variables.items()):
            out += ["--cmdenv", "%s=%s" % (name, value)]
        return out

    def notes(self, event):
        """{attempt id: text} of the notes of one event (held, released, failed)."""
        out = {}
        for name in os.listdir(self.dir):
            attempt, dot, ext = name.rpartition(".")
            if dot and ext == event:
                with open(os.path.join(self.dir, name)) as f:
                    out[attempt] = f.read()
        return out

    def release(self):
        with open(os.path.join(self.dir, "release"), "w"):
            pass

    def wait_held(self, done):
        """(attempt, pid) of the first held attempt; None if ``done`` is set
        (the job ended) or after PATIENCE seconds first."""
        t0 = time.monotonic()
        while not done.is_set() and time.monotonic() - t0 < PATIENCE:
            held = self.notes("held")
            if held:
                attempt = sorted(held)[0]
                return attempt, int(held[attempt])
            time.sleep(0.2)
        return None


def run_with_fault(faults, fault, job):
    """Run ``job()`` (a run_cli call) while ``fault(held_attempt, pid)`` acts
    on the attempt the hooks hold, on a thread of its own; the hold is
    released afterwards.  Returns (the job's result, what ``fault`` returned);
    raises what either raised."""
    done = threading.Event()
    result = {}

    def act():
        try:
            held = faults.wait_held(done)
            result["fault"] = fault(*held) if held else None
        except BaseException as e:          # reported by the main thread
            result["error"] = e
        finally:
            faults.release()

    thread = threading.Thread(target=act, name="fault")
    thread.start()
    try:
        run = job()
    finally:
        done.set()
        thread.join()
    if "error" in result:
        raise result["error"]
    return run, result.get("fault")


def wait_gone(pid):
    """Wait until process ``pid`` is gone (or a zombie); True if it went."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < PATIENCE:
        try:
            with open("/proc/%d/stat" % pid, "rb") as f:
                if f.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    return True
        except OSError:
            return True
        time.sleep(0.2)
    return False


def task_process(cluster, pid, attempt, task_python, kind):
    """Check that ``pid`` is the Python process of task attempt ``attempt``
    in one of the cluster's containers (its command line and environment say
    so); return its command line."""
    cmdlines = dict(cluster.processes())
    assert pid in cmdlines, (pid, attempt, cmdlines)
    cmdline = cmdlines[pid]
    assert cmdline.startswith(task_python + " ") and "--%s" % kind in cmdline, cmdline
    with open("/proc/%d/environ" % pid, "rb") as f:
        env = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
    assert env[b"mapreduce_task_attempt_id"].decode() == attempt, env
    return cmdline


def check_same_index(run, inline, corpus):
    """The same records as inline, byte for byte, and the same counters: the
    mrsparse ones, and Hadoop's records in and out equal to the input's
    lines and the output's (nothing counted twice, nothing lost)."""
    assert run.lines == inline.lines
    assert len(set(run.lines)) == len(run.lines)
    assert mrsparse_counters(run.counters) == mrsparse_counters(inline.counters)
    (step,) = run.step_counters
    mr = group(step, "Map-Reduce Framework")
    with open(corpus, "rb") as f:
        assert mr["Map input records"] == len(f.read().splitlines())
    assert mr["Reduce output records"] == len(inline.lines)


def test_survives_killed_task_attempt(hadoop_cluster, streaming_jar, task_python, hdfs_corpus,
                                      corpus_files, inline_index, tmp_path):
    # the first attempt of map task 0 has written all its output and counted
    # its records (its counters are with Hadoop) when it is killed -9
    corpus, _ = corpus_files
    faults = Faults(tmp_path / "faults", MRSPARSE_TEST_HOLD_ATTEMPT="exit:_m_000000_0$")

    def kill(attempt, pid):
        cmdline = task_process(hadoop_cluster, pid, attempt, task_python, "mapper")
        os.kill(pid, signal.SIGKILL)
        assert wait_gone(pid), cmdline
        return attempt

    run, killed = run_with_fault(faults, kill, lambda: run_cli(MRInvertedIndex, cluster_args(
        hadoop_cluster, streaming_jar, task_python) + INDEX_ARGS + faults.args()
        + [hdfs_corpus]))
    assert killed and killed.endswith("_m_000000_0"), faults.notes("held")
    assert killed not in faults.notes("released")       # it died holding
    check_same_index(run, inline_index, corpus)


def test_survives_reducer_failing_first_attempt(hadoop_cluster, streaming_jar, task_python,
                                                hdfs_corpus, corpus_files, inline_index, tmp_path):
    # every reducer's first attempt exits with status 1 after it wrote all its
    # output and counters; the retries' output is the job's
    corpus, _ = corpus_files
    faults = Faults(tmp_path / "faults", MRSPARSE_TEST_FAIL_ATTEMPT="_r_[0-9]+_0$")
    run = run_cli(MRInvertedIndex, cluster_args(hadoop_cluster, streaming_jar, task_python)
                  + INDEX_ARGS + faults.args() + [hdfs_corpus])
    failed = faults.notes("failed")
    # each reducer task's first attempt failed (attempt_<cluster>_<job>_r_<task>_0)
    assert {"_".join(a.split("_")[3:]) for a in failed} == {
        "r_000000_0", "r_000001_0", "r_000002_0"}, failed
    check_same_index(run, inline_index, corpus)


def spread_corpus(path, n=12000, k=10, n_features=3000, seed=20261202):
    """A corpus big enough that a reducer's input (about 1 MB each of 3) does
    not fit in the pipe buffers to its Python process: a reducer that does
    not read its input stays below 100% progress, as a slow task does (one
    at 100% is never speculated on).  TSV, integer weights.  Returns path."""
    rng = np.random.default_rng(seed)
    feats = [str(uuid.UUID(bytes=rng.bytes(16))) for _ in range(n_features)]
    lines = []
    for _ in range(n):
        doc = uuid.UUID(bytes=rng.bytes(16))
        w = rng.integers(1, 100, k)
        lines.append("%s\t%s" % (doc, " ".join("%s:%d" % (feats[j], x) for j, x in zip(
            rng.choice(n_features, k, replace=False), w))))
    write_lines(path, lines)
    return path


def test_survives_speculative_attempts(hadoop_cluster, streaming_jar, task_python, tmp_path):
    # speculative execution on for maps and reducers; the first attempt of
    # reduce task 0 waits before it reads its input until it is killed:
    # the job can only finish through a speculative attempt of that task,
    # which then runs beside it (reducers start once the maps are done, so
    # the other reducers' run times tell the AppMaster what to expect)
    corpus = spread_corpus(str(tmp_path / "spread.tsv"))
    inline = run_job(MRInvertedIndex, None, INDEX_ARGS, input_paths=[corpus])
    faults = Faults(tmp_path / "faults", MRSPARSE_TEST_HOLD_ATTEMPT="start:_r_000000_0$")
    run = run_cli(MRInvertedIndex, cluster_args(hadoop_cluster, streaming_jar, task_python)
                  + ["-D", "mapreduce.map.speculative=true",
                     "-D", "mapreduce.reduce.speculative=true",
                     "-D", "mapreduce.job.reduce.slowstart.completedmaps=1.0",
                     # no time-out: only the AppMaster ends the hold
                     "-D", "mapreduce.task.timeout=0"]
                  + INDEX_ARGS + faults.args() + [corpus])
    held = faults.notes("held")
    assert [a.endswith("_r_000000_0") for a in held] == [True], held
    # it never went on (with no time-out and no hold left, the AppMaster
    # killed it): a speculative attempt of its task did its work
    assert not faults.notes("released"), faults.notes("released")
    check_same_index(run, inline, corpus)


# The last test of the module: the cluster runs on with one NodeManager.

def test_survives_stopped_nodemanager(hadoop_cluster, streaming_jar, task_python, hdfs_corpus,
                                      corpus_files, inline_index, tmp_path):
    # the first attempt of reduce task 0 has written its output and counters
    # when the NodeManager running it is stopped (it unregisters; its
    # containers, maybe the AppMaster's too, are killed); the job finishes on
    # the other NodeManager
    corpus, _ = corpus_files
    faults = Faults(tmp_path / "faults", MRSPARSE_TEST_HOLD_ATTEMPT="exit:_r_000000_0$")

    def stop_its_nodemanager(attempt, pid):
        task_process(hadoop_cluster, pid, attempt, task_python, "reducer")
        index = hadoop_cluster.nodemanager_of(pid)
        assert index in (0, 1), pid
        state = hadoop_cluster.stop_nodemanager(index)
        assert state == "STOPPED", state
        assert wait_gone(pid)                    # its container was killed
        return attempt

    run, held = run_with_fault(faults, stop_its_nodemanager, lambda: run_cli(
        MRInvertedIndex, cluster_args(hadoop_cluster, streaming_jar, task_python)
        + INDEX_ARGS + faults.args() + [hdfs_corpus]))
    assert held and held.endswith("_r_000000_0"), faults.notes("held")
    assert held not in faults.notes("released")
    check_same_index(run, inline_index, corpus)


def test_hdfs_output_replaced_only_by_a_run_that_succeeded(hadoop_cluster, streaming_jar,
                                                          task_python, hdfs_corpus,
                                                          corpus_files, tmp_path):
    # the output protocol of the inline and local runners, on HDFS: a failed
    # run under --overwrite-output leaves the previous output as it was; a run
    # that succeeded replaces it, and nothing is left beside it
    corpus, _ = corpus_files
    out = "/protocol/out"
    old = tmp_path / "part-00000"
    old.write_text("previous complete output\n")
    hadoop(hadoop_cluster, "fs", "-mkdir", "-p", out)
    hadoop(hadoop_cluster, "fs", "-put", str(old), out + "/part-00000")
    hadoop(hadoop_cluster, "fs", "-touchz", out + "/_SUCCESS")
    blank = tmp_path / "blank.txt"
    blank.write_text("\n\n")
    hadoop(hadoop_cluster, "fs", "-put", str(blank), "/data/blank.txt")
    args = cluster_args(hadoop_cluster, streaming_jar, task_python, conf=None) + [
        "--output-format", "compact", "--output-dir", out, "--overwrite-output"]
    status, stderr = run_status(MRInvertedIndex, args + ["hdfs:///data/blank.txt"])
    assert status == 1, stderr[-5000:]
    assert stderr.splitlines()[-1].startswith("mrsparse: error: not one vector could be read")
    assert hadoop(hadoop_cluster, "fs", "-cat", out + "/part-00000").stdout == \
        "previous complete output\n"
    status, stderr = run_status(MRInvertedIndex, args + [hdfs_corpus])
    assert status == 0, stderr[-5000:]
    inline = run_job(MRInvertedIndex, None, ["--output-format", "compact"],
                     input_paths=[corpus])
    got = subprocess.run([LAUNCHER, "fs", "-cat", out + "/part-*"], check=True,
                         env=dict(os.environ, **hadoop_cluster.env), capture_output=True)
    assert sorted(got.stdout.split(b"\n")[:-1]) == sorted(inline.lines)
    listing = hadoop(hadoop_cluster, "fs", "-ls", "-C", "/protocol").stdout.split()
    assert listing == ["/protocol/out"], listing
