"""The task-side shims for mrjob 0.7.4 (codecs/mrcodecs/_shims): a task
interpreter with numpy alone runs the jobs on Python 3.11 to 3.13.

mrjob 0.7.4 imports ``distutils`` (gone from the standard library in 3.12)
and ``pipes`` (gone in 3.13) in every task.  The shims go at the root of the
zip the jobs ship; each defers to the real module when there is one.

The zip built here is ``mrjobs.runtime.shipping.package_zip()`` plus the shims it does
not ship yet (a change to mrjobs/job.py, pending), or without them for the
control.
"""
import importlib.util
import os
import shutil
import subprocess
import sys
import warnings
import zipfile

import pytest

import mrcodecs
from mrjobs.runtime import runnerargs as base
from mrjobs.inverted_index import MRInvertedIndex
from mrjobs.testing import run_job
from tests import jobs_helpers
from tests.jobs_helpers import corpus

pytestmark = pytest.mark.versions

SHIMS = os.path.join(os.path.dirname(os.path.abspath(mrcodecs.__file__)), "_shims")
FILES = ("pipes.py", "distutils/__init__.py", "distutils/version.py", "distutils/spawn.py")
NEW = sys.version_info >= (3, 12)  # no distutils in the standard library
NEWER = sys.version_info >= (3, 13)  # no pipes either


def bare_python(tmp_path):
    """This interpreter without site-packages, plus numpy alone: a cluster
    node with numpy, without setuptools, standard-pipes or mrjob."""
    return jobs_helpers.bare_python(tmp_path, ("numpy",))


PACKAGE_ZIP = base.package_zip


def zip_with_shims(tmp_path, shims=True):
    path = tmp_path / ("with-shims.zip" if shims else "without-shims.zip")
    shutil.copy(PACKAGE_ZIP(), path)
    with zipfile.ZipFile(path, "a") as z:
        shipped = set(z.namelist())
        for fn in FILES:
            if shims and fn not in shipped:
                z.write(os.path.join(SHIMS, fn), fn)
    if not shims and shipped & set(FILES):  # package_zip ships them: take them out
        with zipfile.ZipFile(path) as src, zipfile.ZipFile(str(path) + ".new", "w") as dst:
            for info in src.infolist():
                if info.filename not in FILES:
                    dst.writestr(info, src.read(info))
        os.replace(str(path) + ".new", path)
    return str(path)


def run_bare(tmp_path, code, zip_path):
    env = dict(os.environ, PYTHONPATH=zip_path)
    return subprocess.run([bare_python(tmp_path), "-c", code], capture_output=True, text=True,
                          env=env)


PROBE = (
    "import sys, pipes, distutils.version as v, distutils.spawn as s\n"
    "print(pipes.__file__.split('.zip')[0] != pipes.__file__, "
    "v.__file__.split('.zip')[0] != v.__file__)\n"
    "print(pipes.quote('a b'), v.LooseVersion('2.7.10') > '2.7.9', s.find_executable('sh') is not None)\n"
)


def test_shims_defer_to_the_real_modules_and_fill_in_when_missing(tmp_path):
    out = run_bare(tmp_path, PROBE, zip_with_shims(tmp_path))
    assert out.returncode == 0, out.stderr
    from_zip, works = out.stdout.splitlines()
    # a module comes from the zip exactly when this Python lacks it
    assert from_zip == "%s %s" % (NEWER, NEW)
    assert works == "'a b' True True"


def test_without_the_shims_a_bare_task_interpreter_cannot_import_mrjob_deps(tmp_path):
    out = run_bare(tmp_path, PROBE, zip_with_shims(tmp_path, shims=False))
    if NEW:
        assert out.returncode != 0
        assert "No module named '%s'" % ("pipes" if NEWER else "distutils") in out.stderr
    else:
        assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("version", ["0.20", "1.0", "2.7.10", "3.1.1", "2.0.0-cdh4.1", "1.2.3a4",
                                     "10", "2.7.9", "2.8", "2.7.10b"])
def test_loose_version_is_distutils_loose_version(version):
    spec = importlib.util.spec_from_file_location("shim_version", os.path.join(SHIMS, "distutils",
                                                                             "version.py"))
    shim = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shim)
    try:
        from setuptools._distutils.version import LooseVersion as Real
    except ImportError:
        pytest.skip("no reference distutils (setuptools) here")
    others = ["0.20", "1.0", "2.7.10", "3.1.1", "2.0.0-cdh4.1", "1.2.3a4", "10", "2.7.9", "2.8", "2.7.10b"]
    mine = [(shim.LooseVersion(version) < o, shim.LooseVersion(version) == o,
             shim.LooseVersion(version) >= o) for o in others]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        real = [(Real(version) < o, Real(version) == o, Real(version) >= o) for o in others]
        assert shim.LooseVersion(version).version == Real(version).version
    assert mine == real


@pytest.mark.slow
def test_job_on_local_runner_with_a_numpy_only_interpreter(tmp_path, monkeypatch):
    lines = corpus(n=60, seed=5)
    inline = run_job(MRInvertedIndex, lines)
    monkeypatch.setattr(base, "package_zip", lambda: zip_with_shims(tmp_path))
    local = run_job(MRInvertedIndex, lines, ["--python-bin", bare_python(tmp_path),
                                             "--jobconf", "mapreduce.job.maps=2"], runner="local")
    assert local.lines == inline.lines and len(inline.lines) > 50
