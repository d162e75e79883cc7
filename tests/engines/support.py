"""What the real-engine tests share: the corpus, the fixtures, and a runner
that runs a job as the command line does and keeps what the user would see.

The fixtures are in :mod:`tests.engines.fixtures`, which the test modules
load as a pytest plugin (``pytest_plugins = ["tests.engines.fixtures"]``).

Environment
-----------
MRSPARSE_ENGINES_CACHE
    where ``fetch-jars.sh`` keeps the streaming jar, Hadoop's client jars
    (``client/lib``) and the cluster's (default ``<repo>/.cache/engines``)
MRSPARSE_TASK_VENV
    the task virtualenv, numpy and scipy only (default ``<repo>/.cache/task-venv``)
"""
import io
import json
import logging
import os
import shutil
import subprocess
import sys
import uuid

import numpy as np

from mrjobs.testing import JobRun, write_lines

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
LAUNCHER = os.path.join(HERE, "hadoop")
FETCH = os.path.join(HERE, "fetch-jars.sh")
CACHE = os.environ.get("MRSPARSE_ENGINES_CACHE") or os.path.join(REPO, ".cache", "engines")
#: Hadoop's client jars, the launcher's classpath in local mode (with the streaming jar)
CLIENT_LIB = os.path.join(CACHE, "client", "lib")
TASK_VENV = os.environ.get("MRSPARSE_TASK_VENV") or os.path.join(REPO, ".cache", "task-venv")
#: what the task virtualenv has: a cluster node's Python with the jobs'
#: requirements only (mrjob and mrsparse travel with each job)
TASK_VENV_PACKAGES = ("numpy", "scipy")
EXAMPLE_CONF = os.path.join(REPO, "examples", "conf")

#: the interpreter running the tests; absolute, not resolved (it is a venv's)
PYTHON = os.path.abspath(sys.executable)


# -- the corpus ---------------------------------------------------------------

#: ids whose bytes Hadoop's line reader and mrjob's line stripping would break
#: if they reached the wire unescaped: TAB, LF, CR, VT (the escape byte), also last
TRICKY_DOCS = [b"\t" * 16, b"\n\r\x0b\t" * 4, b"\x0b" * 15 + b"\r", b"\r" * 15 + b"\x0b",
               b"\n" * 16, b"\r" * 16, b"\x00" * 15 + b"\n", b"\xff" * 15 + b"\t"]
#: the empty vector's id: escape bytes only
EMPTY_DOC = b"\x0b" * 16
TRICKY_FEATURES = [b"\t" * 16, b"\n\r\x0b\t" * 4, b"\x0b" * 15 + b"\r", b"\r" * 15 + b"\n"]
#: a feature in about half the vectors: the only one over MAX_DF
COMMON = b"\r\x0b" * 8
MAX_DF = 60
BAD_LINES = {
    "malformed line": ["this line is not a vector",
                       '{"id": "00000000-0000-0000-0000-000000000001", "features": '],
    "id not a UUID": ['{"id": "not-a-uuid", "features": {}}'],
    "weight not a finite number": [
        '{"id": "%s", "features": {"%s": NaN}}' % (uuid.UUID(int=5), uuid.UUID(int=6))],
}


def _line(doc, feats, weights, tsv, upper=False):
    name = (lambda b: str(uuid.UUID(bytes=b)).upper()) if upper else (
        lambda b: str(uuid.UUID(bytes=b)))
    if tsv:
        return "%s\t%s" % (name(doc), " ".join(
            "%s:%r" % (name(f), w) for f, w in zip(feats, weights)))
    return json.dumps({"id": name(doc), "features": {
        name(f): w for f, w in zip(feats, weights)}})


def engine_corpus(seed=20261130):
    """(corpus lines, query lines): seeded, every byte value in the ids.

    Corpus: 256 vectors whose ids start and end with byte b for every b in
    0..255, the TRICKY_DOCS, one empty vector, and BAD_LINES in between;
    JSON and TSV lines mixed, one line ended by CRLF.  Features: 60 whose
    ids cover all 256 byte values, TRICKY_FEATURES, and COMMON in about half
    of the vectors.  Queries: 24 vectors with ids starting with CR and
    ending with TAB, LF, VT, FF, CR, 0x00 or 0xFF, over the same features.
    """
    rng = np.random.default_rng(seed)
    feats = [bytes((4 * j + k) % 256 for k in range(16)) for j in range(60)] + TRICKY_FEATURES
    docs = [bytes([b]) + rng.bytes(14) + bytes([b]) for b in range(256)] + TRICKY_DOCS
    lasts = b"\t\n\x0b\x0c\r\x00\xff"
    queries = [b"\r" + rng.bytes(14) + lasts[i % len(lasts):][:1] for i in range(24)]
    assert len(set(docs + queries + [EMPTY_DOC])) == len(docs) + len(queries) + 1

    def vectors(ids, offset):
        out = []
        for i, doc in enumerate(ids):
            k = int(rng.integers(2, 7))
            fs = [feats[j] for j in rng.choice(len(feats), k, replace=False)]
            if rng.random() < 0.5:
                fs.append(COMMON)
            w = np.round(rng.lognormal(0.0, 0.5, len(fs)), 6).tolist()
            out.append(_line(doc, fs, w, tsv=(i + offset) % 3 == 0, upper=i % 7 == 3))
        return out

    lines = vectors(docs, 0)
    lines.insert(100, _line(EMPTY_DOC, [], [], tsv=False))
    bad = [line for group in BAD_LINES.values() for line in group]
    for n, line in enumerate(bad):
        lines.insert(37 + 50 * n, line)
    lines[11] += "\r"          # a CRLF line end: both runners drop the CR
    return lines, vectors(queries, 1)


def write_engine_corpus(directory):
    """Write the corpus and queries; return their paths (distinct file names)."""
    lines, queries = engine_corpus()
    corpus_path = os.path.join(directory, "corpus.jsonl")
    queries_path = os.path.join(directory, "queries.jsonl")
    write_lines(corpus_path, lines)
    write_lines(queries_path, queries)
    return corpus_path, queries_path


# -- the task interpreter -------------------------------------------------------

def clean_env():
    """os.environ without PYTHONPATH and PYTHONHOME."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


#: modules whose presence :func:`probe` reports
PROBED = TASK_VENV_PACKAGES + ("mrjob", "mrcodecs", "mrjobs")


def probe(python):
    """Which of :data:`PROBED` ``python`` can import (from /): {name: bool}."""
    code = ("import importlib.util as u, json; print(json.dumps({m: u.find_spec(m) is not "
            "None for m in %r}))" % (PROBED,))
    try:
        out = subprocess.run([python, "-c", code], cwd="/", env=clean_env(), check=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return json.loads(out.stdout)


# -- runner options -----------------------------------------------------------

def task_venv_python():
    """The python of a real, separate virtualenv with the jobs' task
    requirements (numpy and scipy) and nothing else of ours (no mrjob, no
    mrsparse): what a cluster node has.  Built once with ``python -m venv`` +
    ``pip install numpy scipy`` and reused while it has exactly that."""
    python = os.path.join(TASK_VENV, "bin", "python")
    want = {m: m in TASK_VENV_PACKAGES for m in PROBED}
    if probe(python) != want:
        shutil.rmtree(TASK_VENV, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", TASK_VENV], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
                       + list(TASK_VENV_PACKAGES), check=True, env=clean_env())
    found = probe(python)
    if found != want:
        raise RuntimeError("task venv %s can import: %s" % (TASK_VENV, found))
    return python


def hadoop_args(jar, tmp, python_bin=PYTHON):
    """mrjob options of a run on real Hadoop (local mode, file:/// paths)."""
    # --sh-bin without mrjob's -x: local mode passes the tasks' stderr to the
    # console, where the trace of each task's wrapper script is noise
    return ["-r", "hadoop", "--hadoop-bin", LAUNCHER, "--hadoop-streaming-jar", jar,
            "--hadoop-tmp-dir", "file://%s" % tmp, "--python-bin", python_bin,
            "--sh-bin", "/bin/sh -e"]


#: the Spark driver's log4j2 config: warnings, errors and finished stages
SPARK_LOG4J = os.path.join(HERE, "log4j2-spark.properties")


def spark_args():
    return ["-r", "spark", "--spark-master", "local[2]", "-D", "spark.ui.enabled=false",
            "-D", "spark.driver.extraJavaOptions=-Dlog4j2.configurationFile=file:" + SPARK_LOG4J,
            "--python-bin", PYTHON]


# -- running ------------------------------------------------------------------

class EngineRun(JobRun):
    """A :class:`~mrjobs.testing.JobRun` plus ``log``, what the user saw on
    stderr, ``step_counters``, ``runner.counters()`` itself, and
    ``before_counters``, those of the runs before the job's own (the prefix
    strategy's df count)."""

    def __init__(self, output, counters, lines, log, step_counters, before_counters=()):
        super().__init__(output, counters, lines)
        self.log = log
        self.step_counters = step_counters
        self.before_counters = list(before_counters)


def run_status(job_class, argv):
    """``python -m ... ARGV`` in-process, where it may fail: (exit status,
    stderr)."""
    job = job_class(list(argv))
    stderr = io.BytesIO()
    job.sandbox(stdin=io.BytesIO(), stdout=io.BytesIO(), stderr=stderr)
    loggers = [logging.getLogger(n) for n in ("mrjob", "__main__")]
    saved = [(lg, list(lg.handlers), lg.level) for lg in loggers]
    try:
        job.execute()
        status = 0
    except SystemExit as e:
        status = e.code
    finally:
        for lg, handlers, level in saved:
            lg.handlers[:] = handlers
            lg.setLevel(level)
    return status, stderr.getvalue().decode("utf-8", "replace")


def run_cli(job_class, argv):
    """Run ``job_class`` exactly as ``python -m ... ARGV`` does (its
    ``run_job``: runner, output on stdout, report on stderr), in-process.

    Returns
    -------
    EngineRun
        Output lines sorted (part files come in no fixed order) and decoded.
    """
    job = job_class(list(argv))
    stdout, stderr = io.BytesIO(), io.BytesIO()
    job.sandbox(stdin=io.BytesIO(), stdout=stdout, stderr=stderr)
    runners = []
    make_runner = job.make_runner

    def keep_runner():
        runner = make_runner()
        # (a run before the job's own, the prefix strategy's df count: not the job's counters)
        runners.append((runner, job.preliminary_run()))
        return runner

    job.make_runner = keep_runner
    # run_job adds a handler per run to these loggers; restore them afterwards
    loggers = [logging.getLogger(n) for n in ("mrjob", "__main__")]
    saved = [(lg, list(lg.handlers), lg.level) for lg in loggers]
    try:
        try:
            job.execute()
        except SystemExit as e:
            raise AssertionError("job failed (exit %s); its log:\n%s" % (
                e.code, stderr.getvalue().decode("utf-8", "replace")[-20000:])) from None
    finally:
        for lg, handlers, level in saved:
            lg.handlers[:] = handlers
            lg.setLevel(level)
    # one runner, or two where the output goes through a second run (--ids any),
    # after the prefix strategy's df count (where the launcher ran one)
    before = [step for r, first in runners if first for step in r.counters()]
    runners = [r for r, first in runners if not first]
    assert len(runners) == (2 if getattr(job.options, "names_of", None) else 1)
    step_counters = [step for runner in runners for step in runner.counters()]
    counters = {}
    for step in step_counters:
        for group, names in step.items():
            g = counters.setdefault(group, {})
            for name, n in names.items():
                g[name] = g.get(name, 0) + n
    lines = sorted(line for line in stdout.getvalue().split(b"\n") if line)
    protocol = job.output_protocol()
    return EngineRun([protocol.read(line) for line in lines], counters, lines,
                     stderr.getvalue().decode("utf-8", "replace"), step_counters, before)


def mrsparse_counters(counters):
    """The counters of skipped input and df-cut drops (equal on every runner)."""
    return {g: n for g, n in counters.items() if g in ("mrsparse input", "mrsparse df-cut")}
