"""Progress on the inline and local runners: the tasks' status lines (what
they read, the pair step's products), the monitor's lines and ETA, and the
bar on a terminal (mrjobs.runtime.taskstatus, .progress, .progressbar)."""
import glob
import io
import logging
import os
import re

import numpy as np
import pytest
import scipy.sparse as sp

from mrjobs.counters import PRODUCTS_COMPUTED, WORK
from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.runtime import taskfork
from mrjobs.runtime.progress import ProgressMonitor, View
from mrjobs.runtime.taskstatus import TaskStatus, parse_status, status_text
from mrjobs.testing import write_lines
from tests.jobs_helpers import corpus, read_corpus

LINES = corpus(n=80, fpv=6, vocab=60, seed=11, edge_cases=False)
BLOCKS = 3

#: a line of the monitor: the step, then what runs (tasks, the sort, the split)
LINE = re.compile(
    r"step [12] of 2: ((mappers|reducers) \d+/\d+ done(, \d+ running)? \([\d,]+ lines, "
    r"[\d.]+ (of [\d.]+ )?MB\)(; )?|preparing the mappers' input \(.*\)|sorting the "
    r"mappers' output \(.*\)|splitting the sorted input among the reducers \(.*\))+"
    r"(; products [\d.]+[kMGT]?( of ~?[\d.]+[kMGT]? \(\d+%\))?(, ETA (unknown|.+))?)?$")


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class Collect(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    """One local run (3 blocks, 2 reducers a step), kept on disk, with the
    monitor's lines (polled every 50 ms; the tasks fresh interpreters, not
    forked: each then lasts long enough for a poll to see it)."""
    tmp = tmp_path_factory.mktemp("progress")
    path = tmp / "corpus.jsonl"
    write_lines(path, LINES)
    job = MRSparseDotProducts(["-r", "local", "--cleanup", "NONE", "--no-conf", "--blocks",
                               str(BLOCKS), "--jobconf", "mapreduce.job.reduces=2",
                               "--measure", "cosine", "--local-tmp-dir", str(tmp),
                               "--cmdenv", "%s=0" % taskfork.ENV, str(path)])
    log = logging.getLogger("tests.progress")
    log.propagate, log.level = False, logging.INFO
    collect = Collect()
    log.addHandler(collect)
    try:
        with job.make_runner() as runner:
            monitor = ProgressMonitor(runner, log, every=0.05)
            monitor.start()
            try:
                runner.run()
            finally:
                monitor.stop()
            yield runner, monitor, collect.lines
    finally:
        log.removeHandler(collect)


def test_task_status_lines_are_timed_and_parse_back():
    written, clock = [], Clock()
    status = TaskStatus(written.append, every=3.0, clock=clock)
    status.read(10)
    assert written == []  # (not yet 3 s)
    clock.now = 3.0
    status.read(20)
    assert written == ["mrsparse running: 2 lines, 30 bytes"]
    status.begin_pair(1, 9)
    status.pair_products(0, 100)
    clock.now = 6.5
    status.pair_products(40, 100)
    assert written[-1] == ("mrsparse running: 2 lines, 30 bytes; products 40 of 100 in "
                           "block-pair shares 1 of 9")
    status.begin_pair(2, 9)  # a pair with nothing to multiply: its share counts all the same
    status.tell(done=True)
    assert written[-1].startswith("mrsparse done: ")
    line = b"noise\nreporter:status:" + written[-1].encode() + b"\n"
    assert parse_status(line) == (True, 2, 30, (40, 100, 3, 9))
    assert parse_status(b"reporter:status:" + status_text(False, 5, 7).encode()) == (
        False, 5, 7, None)
    assert parse_status(b"nothing of ours") is None


def pair_step_statuses(runner):
    """The final status of each reducer of the pair step (step 1), read from
    the task's stderr as the runner wrote it."""
    tmp = runner._get_local_tmp_dir()
    out = []
    for path in sorted(glob.glob(os.path.join(tmp, "step", "000", "reducer", "*", "stderr"))):
        with open(path, "rb") as f:
            out.append(parse_status(f.read()))
    return out


@pytest.mark.slow
def test_the_products_planned_are_the_planners_sum_over_the_features(local_run):
    runner, _, _ = local_run
    statuses = pair_step_statuses(runner)
    assert len(statuses) == 2 and all(s[0] for s in statuses)  # both ended
    done, planned, shares, total = (sum(s[3][i] for s in statuses) for i in range(4))
    _, X, _ = read_corpus(LINES)
    df = np.bincount(X.indices, minlength=X.shape[1]).astype(np.int64)
    assert planned == int((df * (df - 1) // 2).sum())  # Σ_f df(df-1)/2
    assert done == planned
    assert shares == BLOCKS ** 2 and total == BLOCKS ** 2 * 2  # (each task: of 9)
    # the kernel's counted products: each pair of vectors that shares a feature
    S = sp.triu((X != 0).astype(np.int64) @ (X != 0).astype(np.int64).T, k=1)
    counted = runner.counters()[0][WORK][PRODUCTS_COMPUTED]
    assert counted == S.nnz and counted <= planned


def test_the_monitor_reads_the_pair_steps_products(local_run):
    runner, monitor, _ = local_run
    view = monitor.view(step=0)
    _, X, _ = read_corpus(LINES)
    df = np.bincount(X.indices, minlength=X.shape[1]).astype(np.int64)
    assert view.unit == "products" and not view.running
    assert view.done == view.total == int((df * (df - 1) // 2).sum())
    assert view.line.startswith("step 1 of 2: mappers 1/1 done (")  # (the mappers read the input)
    assert "; reducers 2/2 done (" in view.line
    assert view.line.endswith(" (100%)")
    assert monitor.summary().startswith("step 2 of 2: reducers 2/2 done")


def test_the_monitors_lines_of_a_local_run(local_run):
    _, _, lines = local_run
    assert lines, "no line logged"
    assert all(LINE.match(l) for l in lines), lines
    assert any(l.startswith("step 1 of 2: mappers ") for l in lines), lines
    assert any(l.startswith("step 1 of 2: ") and "; products " in l for l in lines), lines


def fake_step(tmp_path, reducers, written=100.0):
    """A runner's step 2 of 3 with the reducers' stderr as given, their input
    written at ``written`` (the reducers' start)."""
    for i, text in enumerate(reducers):
        d = tmp_path / "step" / "001" / "reducer" / ("%05d" % i)
        d.mkdir(parents=True, exist_ok=True)
        (d / "input").write_bytes(b"x" * 100_000)
        os.utime(d / "input", (written, written))
        (d / "stderr").write_text(text)


class FakeRunner:
    """What the monitor asks of a sim runner."""

    def __init__(self, tmp):
        self.tmp = str(tmp)

    def _get_local_tmp_dir(self):
        return self.tmp

    def _num_steps(self):
        return 3

    def _step_dir(self, step_num):
        return os.path.join(self.tmp, "step", "%03d" % step_num)


def status(done, lines, nbytes, work):
    return "reporter:status:%s\n" % status_text(done, lines, nbytes, work)


def test_the_eta_comes_from_the_rate_so_far(tmp_path):
    monitor = ProgressMonitor(FakeRunner(tmp_path), None)
    fake_step(tmp_path, [status(False, 2, 50_000, (20, 400, 2, 9)), ""])
    line = monitor.view(now=130.0).line  # (1% done: too soon for a rate)
    assert line == ("step 2 of 3: reducers 0/2 done, 2 running (2 lines, 0.1 of 0.2 MB); "
                    "products 20 of ~1.8k (1%), ETA unknown")
    fake_step(tmp_path, [status(False, 4, 80_000, (300, 400, 2, 9)),
                         status(False, 1, 20_000, (0, 500, 7, 9))])
    assert "ETA unknown" in monitor.view(now=109.0).extra  # (9 s: too soon)
    view = monitor.view(now=110.0)  # 300 in the 10 s since the start, 600 to go: 20 s
    assert (view.done, view.total) == (300, 900)
    assert view.extra == "products 300 of 900 (33%), ETA 20 s"
    fake_step(tmp_path, [status(True, 4, 800, (400, 400, 2, 9)),
                         status(True, 1, 200, (500, 500, 7, 9))])
    assert monitor.view(now=120.0).extra == "products 900 of 900 (100%)"


def test_the_sort_and_the_split_are_said(tmp_path):
    monitor = ProgressMonitor(FakeRunner(tmp_path), None)
    mapper = tmp_path / "step" / "001" / "mapper" / "00000"
    mapper.mkdir(parents=True)
    (mapper / "input").write_bytes(b"x" * 2_000_000)
    assert monitor.view(now=0.0).text == "step 2 of 3: preparing the mappers' input (2.0 MB)"
    os.symlink(mapper / "input", mapper / "output")
    (tmp_path / "step" / "001" / "reducer").mkdir()
    monitor.view(now=10.0)
    assert monitor.view(now=25.0).text == ("step 2 of 3: sorting the mappers' output "
                                           "(2.0 MB, 15 s so far)")
    (tmp_path / "step" / "001" / "reducer" / "sorted-input").write_bytes(b"x" * 2_000_000)
    (tmp_path / "step" / "001" / "reducer" / "00000").mkdir()
    (tmp_path / "step" / "001" / "reducer" / "00000" / "input").write_bytes(b"x" * 500_000)
    assert monitor.view(now=30.0).text == ("step 2 of 3: splitting the sorted input among the "
                                           "reducers (0.5 of 2.0 MB)")


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("stream", [Terminal(), io.StringIO(), None])
def test_the_bar_only_on_a_terminal(tmp_path, stream):
    monitor = ProgressMonitor(FakeRunner(tmp_path), logging.getLogger("tests.progress"),
                              stream=stream)
    monitor.start()
    try:
        assert (monitor.bar is not None) == isinstance(stream, Terminal)
    finally:
        monitor.stop()


def test_the_bar_draws_the_view_and_gives_way_to_log_lines(tmp_path):
    stream = Terminal()
    handler = logging.StreamHandler(stream)
    log = logging.getLogger("mrjobs.tests-progress-bar")
    logging.getLogger("mrjobs").addHandler(handler)
    monitor = ProgressMonitor(FakeRunner(tmp_path), log, stream=stream)
    try:
        monitor.start()
        monitor.bar.show(View(("s", "products"), "step 2 of 3: reducers 0/2 done", 300, 900,
                              "products", True))
        assert "step 2 of 3: reducers 0/2 done" in stream.getvalue()
        assert "300/900" in stream.getvalue() and "33%" in stream.getvalue()
        drawn = len(stream.getvalue())
        logging.getLogger("mrjobs").warning("a note")
        # the bar was wiped (a carriage return, blanks) before the note
        assert stream.getvalue()[drawn:].rstrip().endswith("a note")
        assert "\r" in stream.getvalue()[drawn:]
    finally:
        monitor.stop()
        logging.getLogger("mrjobs").removeHandler(handler)
    assert not handler.filters
