"""Fixtures of the real-engine tests, loaded by the test modules with
``pytest_plugins = ["tests.engines.fixtures"]`` (helpers: :mod:`tests.engines.support`)."""
import getpass
import os
import signal
import subprocess
import threading

import pytest

from tests.engines.cluster import Cluster, hadoop
from tests.engines.support import (CACHE, CLIENT_LIB, FETCH, task_venv_python,
                                   write_engine_corpus)


@pytest.fixture(scope="session")
def streaming_jar():
    """The hadoop-streaming jar; it and Hadoop's client jars (the launcher's
    classpath in local mode) fetched by tests/engines/fetch-jars.sh if missing."""
    link = os.path.join(CACHE, "hadoop-streaming.jar")
    stamp = os.path.join(os.path.dirname(CLIENT_LIB), "lib.stamp")
    if not (os.path.exists(link) and os.path.exists(stamp)):
        out = subprocess.run(["bash", FETCH], check=True, stdout=subprocess.PIPE, text=True)
        link = out.stdout.strip().splitlines()[-1]
    assert os.path.isfile(link), "no hadoop-streaming jar at %s" % link
    return link


@pytest.fixture(scope="module")
def engine_env():
    """Environment for the engines: Spark binds to the loopback interface; no
    PYTHONPATH leaks into tasks (they must get our packages from the shipped zip)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    mp.delenv("PYTHONPATH", raising=False)
    # the launcher's target and log level are the tests' to choose: Hadoop's
    # local mode unless a test names the cluster's conf dir (cluster_env)
    for name in ("HADOOP_CONF_DIR", "MRSPARSE_HADOOP_JARS", "MRSPARSE_HADOOP_LOG"):
        mp.delenv(name, raising=False)
    yield
    mp.undo()


@pytest.fixture(scope="session")
def hadoop_tmp(tmp_path_factory):
    """A directory for Hadoop's working files (used as a file:/// URI)."""
    return tmp_path_factory.mktemp("hadoop")


@pytest.fixture(scope="session")
def corpus_files(tmp_path_factory):
    return write_engine_corpus(str(tmp_path_factory.mktemp("corpus")))


@pytest.fixture(scope="session")
def task_python():
    """The task interpreter: numpy and scipy only (support.task_venv_python)."""
    return task_venv_python()


# -- the HDFS + YARN cluster ----------------------------------------------------

def _raise_interrupt(signum, _frame):
    raise KeyboardInterrupt("signal %d" % signum)


@pytest.fixture(scope="session")
def hadoop_cluster(tmp_path_factory, streaming_jar):
    """A running pseudo-distributed Hadoop (HDFS + YARN with 2 NodeManagers,
    :class:`tests.engines.cluster.Cluster`), started once per test session.

    It is always stopped: at the end of the session, after a failed test, on
    Ctrl-C (pytest tears fixtures down), on SIGTERM or SIGHUP (turned into a
    KeyboardInterrupt while the cluster runs), and if this process is killed
    outright (the cluster watches its stdin pipe).  Teardown fails if any of
    its processes is still alive afterwards."""
    cluster = Cluster(str(tmp_path_factory.mktemp("cluster")), nodemanagers=2)
    saved = {}
    if threading.current_thread() is threading.main_thread():
        for s in (signal.SIGTERM, signal.SIGHUP):
            saved[s] = signal.signal(s, _raise_interrupt)
    try:
        cluster.start()
        hadoop(cluster, "fs", "-mkdir", "-p", "/user/%s" % getpass.getuser(), "/data")
        yield cluster
    finally:
        try:
            cluster.stop()
        finally:
            for s, handler in saved.items():
                signal.signal(s, handler)
    print("\ncluster: started in %.0f s, stopped in %.0f s (%s)" % (
        cluster.start_seconds or -1, cluster.stop_seconds,
        "cleanly" if cluster.stopped_cleanly else "killed"))
    assert not cluster.processes(), "cluster processes left: %r" % cluster.processes()
    assert cluster.stopped_cleanly, "the cluster did not stop by itself:\n%s" % (
        cluster.log_tail())
    assert not cluster.leftovers, "processes killed after the stop: %r" % cluster.leftovers


@pytest.fixture(scope="module")
def cluster_env(hadoop_cluster, engine_env):
    """The environment of a client of the cluster (HADOOP_CONF_DIR, JAVA_HOME)."""
    mp = pytest.MonkeyPatch()
    for name, value in hadoop_cluster.env.items():
        mp.setenv(name, value)
    yield hadoop_cluster
    mp.undo()


@pytest.fixture(scope="session")
def hdfs_corpus(hadoop_cluster, corpus_files):
    """The engine corpus on the cluster's HDFS: its ``hdfs:///`` URI."""
    corpus, _ = corpus_files
    hadoop(hadoop_cluster, "fs", "-put", corpus, "/data/corpus.jsonl")
    return "hdfs:///data/corpus.jsonl"
