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


def _product_modules():
    """Every module of the product, subpackages (folders with an ``__init__.py``)
    included."""
    out = []
    for top in PRODUCT:
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if os.path.exists(os.path.join(folder, d,
                                                                            "__init__.py")))
            out += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".py")]
    return out


def test_no_function_of_the_product_is_longer_than_60_lines():
    long = []
    for path in _product_modules():
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


# -- the floor plan (issue 25): small rooms, one door each -------------------------

MAX_CLASS_LINES = 250
MAX_MODULE_LINES = 500
MAX_PARAMETERS = 8
#: modules of mrjobs still over MAX_MODULE_LINES, each at most its size here;
#: splitting one takes it off the list (and a new module never joins it)
MODULES_TO_SPLIT = {}
#: functions of mrjobs still over MAX_PARAMETERS, each at most its count here
#: (the pair kernel's are bundled: mrjobs.pairs.kernel.PairSpec, PruneSpec)
FUNCTIONS_TO_BUNDLE = {}


def _jobs_modules():
    return [p for p in _product_modules() if p.startswith(PRODUCT[0] + os.sep)]


def _rel(path):
    return os.path.relpath(path, ROOT).replace(os.sep, "/")


def _defs(tree, prefix=""):
    """(qualified name, node) of the classes and functions of a module."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            name = prefix + node.name
            yield name, node
            yield from _defs(node, name + ".")


def test_no_class_of_the_product_is_longer_than_250_lines():
    long = ["%s:%s (%d lines)" % (_rel(path), name, node.end_lineno - node.lineno + 1)
            for path in _product_modules()
            for name, node in _defs(ast.parse(open(path).read(), path))
            if isinstance(node, ast.ClassDef)
            and node.end_lineno - node.lineno + 1 > MAX_CLASS_LINES]
    assert long == []


def test_no_module_of_the_jobs_is_longer_than_500_lines():
    sizes = {_rel(p): len(open(p).read().splitlines()) for p in _jobs_modules()}
    long = {m: n for m, n in sizes.items() if n > MODULES_TO_SPLIT.get(m, MAX_MODULE_LINES)}
    assert long == {}
    assert {m for m in MODULES_TO_SPLIT if sizes.get(m, 0) <= MAX_MODULE_LINES} == set(), \
        "split: take it off MODULES_TO_SPLIT"


def test_no_function_of_the_jobs_takes_more_than_8_parameters():
    many, seen = {}, {}
    for path in _jobs_modules():
        for name, node in _defs(ast.parse(open(path).read(), path)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                n = (len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + bool(a.vararg)
                     + bool(a.kwarg))
                n -= bool(a.args) and a.args[0].arg in ("self", "cls")
                key = "%s:%s" % (_rel(path), name)
                seen[key] = n
                if n > FUNCTIONS_TO_BUNDLE.get(key, MAX_PARAMETERS):
                    many[key] = n
    assert many == {}
    assert {k for k in FUNCTIONS_TO_BUNDLE if seen.get(k, 0) <= MAX_PARAMETERS} == set(), \
        "bundled: take it off FUNCTIONS_TO_BUNDLE"


def _is_module(name):
    import importlib.util
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _absolute(path, node):
    """The module an ``import from`` names, relative ones resolved."""
    if not node.level:
        return node.module or ""
    rel = _rel(path)
    parts = (rel[len("codecs/"):] if rel.startswith("codecs/") else rel)[:-3].split("/")
    package = parts[:len(parts) - node.level]
    return ".".join(package + ([node.module] if node.module else []))


def test_no_module_reaches_into_another_modules_private_names():
    # "from mrjobs.x import _y" or "x._y" on a module of ours, where _y is no
    # module itself (mrjobs._c and mrcodecs._impl are the twins' seams); the
    # jobs' modules (mrcodecs keeps its layers' own arrangement)
    ours = ("mrjobs", "mrcodecs")
    reached = []
    for path in _jobs_modules():
        tree = ast.parse(open(path).read(), path)
        modules = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                module = _absolute(path, node)
                if module.split(".")[0] not in ours:
                    continue
                for a in node.names:
                    full = "%s.%s" % (module, a.name)
                    if _is_module(full):
                        modules[a.asname or a.name] = full
                    elif a.name.startswith("_") and not a.name.startswith("__"):
                        reached.append("%s:%d %s" % (_rel(path), node.lineno, full))
            elif isinstance(node, ast.Import):
                modules.update((a.asname or a.name, a.name) for a in node.names
                               if a.name.split(".")[0] in ours)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                    and not node.attr.startswith("__")):
                chain, base = [], node.value
                while isinstance(base, ast.Attribute):
                    chain.insert(0, base.attr)
                    base = base.value
                if isinstance(base, ast.Name) and base.id in modules:
                    full = ".".join([modules[base.id]] + chain + [node.attr])
                    if not _is_module(full):
                        reached.append("%s:%d %s" % (_rel(path), node.lineno, full))
    assert reached == []


def test_the_package_never_reads_bench():
    # an installed wheel has no bench/: the planner's calibration is package data
    for path in _product_modules():
        text = open(path).read()
        assert '"bench"' not in text and "'bench'" not in text and "bench/" not in text, path
    import mrjobs.plan
    assert os.path.exists(mrjobs.plan.CALIBRATION)
    assert os.path.dirname(mrjobs.plan.CALIBRATION) == os.path.dirname(mrjobs.plan.__file__)


def test_the_package_zip_ships_every_subpackage():
    import zipfile

    import mrjobs
    from mrjobs.runtime.shipping import package_zip
    names = set(zipfile.ZipFile(package_zip()).namelist())
    for path in _product_modules():
        rel = _rel(path)
        name = rel[len("codecs/"):] if rel.startswith("codecs/") else rel
        assert name in names, name
    subpackages = [d for d in os.listdir(os.path.dirname(mrjobs.__file__))
                   if os.path.exists(os.path.join(os.path.dirname(mrjobs.__file__), d,
                                                  "__init__.py"))]
    assert sorted(subpackages) == ["measures", "pairs", "plan", "runtime", "strategies"]


def test_setup_cfg_lists_every_package():
    import configparser
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(ROOT, "setup.cfg"))
    listed = set(cfg["options"]["packages"].split())
    found = {os.path.relpath(os.path.dirname(p), PRODUCT[0]).replace(os.sep, ".")
             for p in _jobs_modules() if p.endswith("__init__.py")}
    assert {"mrjobs" if f == "." else "mrjobs." + f for f in found} | {"mrcodecs"} == listed

