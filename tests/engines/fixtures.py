"""Fixtures of the real-engine tests, loaded by the test modules with
``pytest_plugins = ["tests.engines.fixtures"]`` (helpers: :mod:`tests.engines.support`)."""
import os
import shutil
import subprocess
import sys

import pytest

from tests.engines.support import (CACHE, FETCH, NUMPY_VENV, PYTHON, clean_env, probe,
                                   write_engine_corpus)


@pytest.fixture(scope="session")
def streaming_jar():
    """The hadoop-streaming jar; fetched by tests/engines/fetch-jars.sh if missing."""
    link = os.path.join(CACHE, "hadoop-streaming.jar")
    if not os.path.exists(link):
        out = subprocess.run(["bash", FETCH], check=True, stdout=subprocess.PIPE, text=True)
        link = out.stdout.strip().splitlines()[-1]
    assert os.path.isfile(link), "no hadoop-streaming jar at %s" % link
    return link


@pytest.fixture(scope="module")
def engine_env():
    """Environment for the engines: the launcher finds pyspark's jars through
    this interpreter; Spark binds to the loopback interface; no PYTHONPATH
    leaks into tasks (they must get our packages from the shipped zip)."""
    mp = pytest.MonkeyPatch()
    mp.setenv("MRSPARSE_PYTHON", PYTHON)
    mp.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    mp.delenv("PYTHONPATH", raising=False)
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
def numpy_only_python():
    """The python of a real, separate virtualenv with numpy and nothing else of
    ours (no mrjob, no mrsparse): what a cluster node has.  Built once with
    ``python -m venv`` + ``pip install numpy`` and reused while it works."""
    python = os.path.join(NUMPY_VENV, "bin", "python")
    want = {"numpy": True, "mrjob": False, "mrcodecs": False, "mrjobs": False}
    if probe(python) != want:
        shutil.rmtree(NUMPY_VENV, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", NUMPY_VENV], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        "numpy"], check=True, env=clean_env())
    found = probe(python)
    assert found == want, "numpy-only venv %s can import: %s" % (NUMPY_VENV, found)
    return python


