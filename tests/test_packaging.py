"""Packaging: the optional C extension, the declared dependencies, the venvs
of the Makefile."""
import glob
import importlib.metadata
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_a_failed_build_of_the_extension_warns_and_the_install_goes_on(tmp_path):
    # CC=false: a compiler that always fails
    out = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(tmp_path / "lib"),
                          "--build-temp", str(tmp_path / "tmp")],
                         cwd=ROOT, capture_output=True, text=True, env=dict(os.environ, CC="false"))
    assert out.returncode == 0, out.stderr
    assert "WARNING: the C extension _mrcodecs_speedups of mrsparse was not built:" in out.stderr
    assert "CompileError" in out.stderr
    assert not glob.glob(str(tmp_path / "lib" / "_mrcodecs_speedups*"))


def test_a_built_extension_that_does_not_import_is_removed_and_reported(tmp_path):
    # a module that compiles and links but whose symbol is missing at import
    out = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(tmp_path / "lib"),
                          "--build-temp", str(tmp_path / "tmp")],
                         cwd=ROOT, capture_output=True, text=True,
                         env=dict(os.environ, CFLAGS="-DPyInit__mrcodecs_speedups=PyInit_misnamed"))
    assert out.returncode == 0, out.stderr
    assert "WARNING: the C extension _mrcodecs_speedups of mrsparse was not built:" in out.stderr
    assert "built, but importing it failed: ImportError" in out.stderr
    assert not glob.glob(str(tmp_path / "lib" / "_mrcodecs_speedups*"))


def test_dependencies_for_new_pythons_are_declared():
    requires = importlib.metadata.requires("mrsparse")
    assert 'standard-pipes; python_version >= "3.13"' in requires
    assert 'setuptools; python_version >= "3.12"' in requires
    import pipes  # mrjob 0.7.4 imports it; on 3.13 it comes from standard-pipes

    assert pipes.quote("a b") == "'a b'"


def _python(version):
    for c in [shutil.which("python%s" % version)] + sorted(
            glob.glob(os.path.expanduser("~/.pyenv/versions/%s.*/bin/python%s" % (version, version)))):
        if c and subprocess.run([c, "-c", "pass"], capture_output=True).returncode == 0:
            return c
    return None


def test_make_rebuilds_a_venv_built_with_another_python(tmp_path):
    make = shutil.which("make")
    this = os.path.realpath(sys.executable)
    other = _python("3.12" if sys.version_info[:2] != (3, 12) else "3.13")
    if make is None or other is None:
        pytest.skip("needs make and a second Python")
    shutil.copy(os.path.join(ROOT, "Makefile"), tmp_path)
    subprocess.run([this, "-m", "venv", "--without-pip", str(tmp_path / ".venv")], check=True)

    def dry_run(python):
        return subprocess.run([make, "-n", "install", "PYTHON=%s" % python], cwd=tmp_path,
                              capture_output=True, text=True).stdout

    out = dry_run(this)
    assert "rebuilding" not in out and (tmp_path / ".venv").exists()
    out = dry_run(other)
    assert "make: .venv was built with cpython %d.%d." % sys.version_info[:2] in out
    assert "rebuilding .venv" in out
    assert not (tmp_path / ".venv").exists()
