"""Packaging: the optional C extension, the declared dependencies, the venvs
of the Makefile; the shape of the product (no function over 60 lines, the
codec's imports without a circle)."""
import ast
import glob
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import sysconfig

import pytest

pytestmark = pytest.mark.versions

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
            glob.glob(os.path.join(os.environ.get("PYENV_ROOT") or os.path.expanduser(
                "~/.pyenv"), "versions/%s.*/bin/python%s" % (version, version)))):
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


@pytest.mark.parametrize("root", ["HOME", "PYENV_ROOT"])
def test_make_python_finds_a_pyenv_version_that_is_not_active(tmp_path, root):
    # PYTHON=python3.13 where python3.13 on PATH is a pyenv shim of a version
    # that is not active (it fails): make takes pyenv's own install of 3.13,
    # as the Python 3.12/3.13 tests of `make test` do
    make = shutil.which("make")
    if make is None:
        pytest.skip("needs make")
    shutil.copy(os.path.join(ROOT, "Makefile"), tmp_path)
    for name in ("setup.cfg", "setup.py", "pyproject.toml", "codecs/mrcodecs/_speedups.c",
                 "mrjobs/_speedups.c"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).touch()
    shims, home = tmp_path / "shims", tmp_path / "home"
    # pyenv's root: ~/.pyenv, or $PYENV_ROOT where that is set (HOME elsewhere)
    pyenv = home / ".pyenv" if root == "HOME" else tmp_path / "pyenv-root"
    installed = pyenv / "versions" / "3.13.9" / "bin"
    shims.mkdir()
    installed.mkdir(parents=True)
    (shims / "python3.13").write_text("#!/bin/sh\necho 'pyenv: python3.13: command not found' >&2\n"
                                      "exit 127\n")
    (installed / "python3.13").write_text('#!/bin/sh\nexec %s "$@"\n' % sys.executable)
    for script in (shims / "python3.13", installed / "python3.13"):
        script.chmod(0o755)
    env = dict(os.environ, HOME=str(home), PATH="%s:%s" % (shims, os.environ["PATH"]))
    env.pop("PYENV_ROOT", None)
    if root == "PYENV_ROOT":
        env.update(PYENV_ROOT=str(pyenv), HOME=str(tmp_path / "elsewhere"))
    out = subprocess.run([make, "-n", "install", "PYTHON=python3.13"], cwd=tmp_path, env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "does not run" not in out.stderr
    assert "creating .venv with %s" % (installed / "python3.13") in out.stdout


def test_the_editable_install_is_a_path_entry():
    # src/ is the one import root (links to mrjobs and codecs/mrcodecs), so
    # setuptools installs the package editable as a plain .pth line, with no
    # import hook and no warning about folders that shadow the package
    site = sysconfig.get_paths()["purelib"]
    pth = glob.glob(os.path.join(site, "__editable__.mrsparse-*.pth"))
    if not pth:
        pytest.skip("mrsparse is not installed in editable mode")
    with open(pth[0]) as f:
        entry = f.read().strip()
    assert not entry.startswith("import "), entry      # setuptools' import hook
    assert os.path.samefile(entry, os.path.join(ROOT, "src"))
    assert not glob.glob(os.path.join(site, "__editable__*mrsparse*finder*"))
    import mrcodecs
    import mrjobs
    for package in (mrcodecs, mrjobs):
        assert os.path.dirname(package.__file__) in (
            os.path.join(ROOT, "src", package.__name__), os.path.join(ROOT, package.__name__))


PRODUCT = [os.path.join(ROOT, "mrjobs"), os.path.join(ROOT, "codecs", "mrcodecs")]
MAX_FUNCTION_LINES = 60


def _modules(folder):
    return sorted(glob.glob(os.path.join(folder, "*.py")))


def test_no_function_of_the_product_is_longer_than_60_lines():
    long = []
    for path in [p for folder in PRODUCT for p in _modules(folder)]:
        for node in ast.walk(ast.parse(open(path).read(), path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append("%s:%d %s (%d lines)" % (os.path.relpath(path, ROOT),
                                                        node.lineno, node.name, lines))
    assert long == []


def _codec_imports(path):
    """The mrcodecs modules a module imports, at its top or inside functions."""
    names = set()
    for node in ast.walk(ast.parse(open(path).read(), path)):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names |= {node.module} if node.module else {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mrcodecs."):
            names.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            names |= {a.name.split(".")[1] for a in node.names
                      if a.name.startswith("mrcodecs.")}
    return names


def test_the_codec_imports_without_a_circle():
    folder = PRODUCT[1]
    graph = {os.path.basename(p)[:-3]: _codec_imports(p) for p in _modules(folder)}
    # the C twin reaches for mrcodecs.vector (the type it builds), as _pyimpl does
    c_source = open(os.path.join(folder, "_speedups.c")).read()
    graph["_impl"] = graph["_impl"] | {"_mrcodecs_speedups"}
    graph["_mrcodecs_speedups"] = {m.split(".")[1] for m in re.findall(
        r'PyImport_ImportModule\("(mrcodecs\.\w+)"\)', c_source)}
    assert graph["_mrcodecs_speedups"] == {"vector"}
    assert graph["_pyimpl"] == {"vector"}
    done, path = set(), []

    def visit(module):
        assert module not in path, "import circle: " + " -> ".join(path + [module])
        if module in done:
            return
        path.append(module)
        for m in sorted(graph.get(module, ())):
            visit(m)
        path.pop()
        done.add(module)

    for module in sorted(graph):
        visit(module)
