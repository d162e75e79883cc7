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


@pytest.mark.slow
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
                 "mrjobs/csrc/module.c"):
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
#: modules at the top of mrjobs/ (``__init__`` not counted): the rest in rooms
MAX_TOP_LEVEL_MODULES = 12
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


def test_mrjobs_has_at_most_12_top_level_modules():
    top = sorted(os.path.basename(p)[:-3] for p in _modules(PRODUCT[0])
                 if os.path.basename(p) != "__init__.py")
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


def test_no_module_name_is_repeated():
    # one module a name across mrjobs and mrcodecs (a package's __init__ and
    # __main__ aside): a name found in a traceback or a grep is one file
    seen = {}
    for path in _product_modules():
        name = os.path.basename(path)
        if name not in ("__init__.py", "__main__.py"):
            seen.setdefault(name, []).append(_rel(path))
    assert {n: paths for n, paths in seen.items() if len(paths) > 1} == {}


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
    # "from mrjobs.x import _y", "x._y" on a module of ours or "C._y" on a
    # class (or any name) imported from one, where _y is no module itself
    # (mrjobs._c and mrcodecs._impl are the twins' seams); every module of
    # mrjobs (mrcodecs keeps its layers' own arrangement)
    ours = ("mrjobs", "mrcodecs")
    reached = []
    for path in _jobs_modules():
        tree = ast.parse(open(path).read(), path)
        imported = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                module = _absolute(path, node)
                if module.split(".")[0] not in ours:
                    continue
                for a in node.names:
                    full = "%s.%s" % (module, a.name)
                    if _is_module(full) or not a.name.startswith("_") or a.name.startswith("__"):
                        imported[a.asname or a.name] = full
                    else:
                        reached.append("%s:%d %s" % (_rel(path), node.lineno, full))
            elif isinstance(node, ast.Import):
                imported.update((a.asname or a.name, a.name) for a in node.names
                               if a.name.split(".")[0] in ours)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                    and not node.attr.startswith("__")):
                chain, base = [], node.value
                while isinstance(base, ast.Attribute):
                    chain.insert(0, base.attr)
                    base = base.value
                if isinstance(base, ast.Name) and base.id in imported:
                    full = ".".join([imported[base.id]] + chain + [node.attr])
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
    assert sorted(subpackages) == ["api", "measures", "pairs", "plan", "runtime", "strategies",
                                   "update"]


def test_setup_cfg_lists_every_package():
    import configparser
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(ROOT, "setup.cfg"))
    listed = set(cfg["options"]["packages"].split())
    found = {os.path.relpath(os.path.dirname(p), PRODUCT[0]).replace(os.sep, ".")
             for p in _jobs_modules() if p.endswith("__init__.py")}
    assert {"mrjobs" if f == "." else "mrjobs." + f for f in found} | {"mrcodecs"} == listed



# -- the layers (issue 45): no import circle, the launcher below the jobs ------------

#: the packages whose imports are checked, and where their modules are
PACKAGES = {"mrjobs": os.path.join(ROOT, "mrjobs"),
            "mrcodecs": os.path.join(ROOT, "codecs", "mrcodecs"),
            "bench": os.path.join(ROOT, "bench")}
#: the job modules (and their base): the launcher (mrjobs.runtime) runs them,
#: through their hooks, and imports none of them
JOB_MODULES = ("mrjobs.job", "mrjobs.dot_products", "mrjobs.inverted_index", "mrjobs.convert")
#: the C twins' seams, the one private names imported across modules
SEAMS = ("mrjobs._c", "mrcodecs._impl", "mrcodecs._pyimpl")
#: bench modules that still import the Hadoop minicluster harness from
#: tests/engines, each at most these names (moving one takes it off the list)
BENCH_TEST_IMPORTS_TO_MOVE = {
    "bench.hadoop": {"tests.engines.support.LAUNCHER", "tests.engines.support.run_cli",
                     "tests.engines.support.CACHE", "tests.engines.support.task_venv_python",
                     "tests.engines.cluster.hadoop", "tests.engines.cluster.Cluster"}}


def _package_modules():
    """{dotted name: path} of every module of :data:`PACKAGES` (a package's
    ``__init__.py`` under the package's own name; ``__main__`` included)."""
    out = {}
    for package, top in PACKAGES.items():
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if os.path.exists(os.path.join(folder, d,
                                                                            "__init__.py")))
            for f in sorted(files):
                if f.endswith(".py"):
                    parts = os.path.relpath(os.path.join(folder, f), top)[:-3].split(os.sep)
                    parts = parts[:-1] if parts[-1] == "__init__" else parts
                    out[".".join([package] + parts)] = os.path.join(folder, f)
    return out


def _imported(name, path):
    """(line, module, names) of every import statement of module ``name``: at
    its top, inside functions and classes, under ``if`` or ``try`` alike;
    relative ones resolved (``names``: what an ``import from`` takes)."""
    package = name.split(".")[:None if path.endswith("__init__.py") else -1]
    for node in ast.walk(ast.parse(open(path).read(), path)):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name, ()
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            yield node.lineno, module, tuple(a.name for a in node.names)


def import_graph(modules=None):
    """{module: {module it imports: first line}} over :data:`PACKAGES`.

    How the edges are counted (the dependencies as Python resolves them, not
    only what runs at import time):

    - every import statement is an edge, a deferred one inside a function as
      much as one at the top (it still needs the other module, and closes a
      circle as soon as it runs);
    - ``from p import n`` is an edge to ``p.n`` where that is a module, else
      to ``p`` (a name its ``__init__`` defines); ``import a.b.c`` to ``a.b.c``;
    - importing ``a.b.c`` runs the ``__init__`` of ``a`` and ``a.b`` first: an
      edge to each of those packages too, but not to the importer's own
      packages (Python has initialised them before the importer runs);
    - only modules of :data:`PACKAGES` are nodes (numpy, mrjob, tests.* are
      not); imports by name at run time (``importlib.import_module``) are
      not seen.
    """
    modules = modules or _package_modules()
    graph = {}
    for name, path in modules.items():
        edges = graph[name] = {}
        for line, module, names in _imported(name, path):
            targets = [module + "." + n if module + "." + n in modules else module
                       for n in names] or [module]
            for target in targets:
                parts = target.split(".")
                while parts and ".".join(parts) not in modules:
                    parts.pop()  # a name of a module: the module
                for i in range(len(parts), 0, -1):
                    m = ".".join(parts[:i])
                    if m == name or (i < len(parts) and name.startswith(m + ".")):
                        continue
                    edges.setdefault(m, line)
    return graph


def import_circles(graph):
    """The strongly connected components of more than one module (Tarjan's,
    iterative), each as its modules sorted, with the edges inside it."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return ["%d modules: %s" % (len(c), "; ".join(
        "%s -> %s" % (m, ", ".join("%s (line %d)" % (t, graph[m][t])
                                   for t in sorted(graph[m]) if t in c)) for m in c))
        for c in out]


def test_the_import_graph_counts_deferred_and_package_imports(tmp_path):
    # the rules of import_graph on a made-up package
    files = {"p/__init__.py": "from p.a import A\n",
             "p/a.py": "A = 1\ndef f():\n    from p.b import g\n",
             "p/b.py": "from . import a\nfrom p import A\ng = 1\n",
             "p/q/__init__.py": "from p.q.c import C\n",
             "p/q/c.py": "import p.a\nC = 1\n",
             "p/d.py": "import p.q.c\n"}
    modules = {}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
        parts = rel[:-3].split("/")
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = str(tmp_path / rel)
    graph = import_graph(modules)
    assert graph["p.a"] == {"p.b": 3}                   # deferred: an edge
    assert graph["p.b"] == {"p.a": 1, "p": 2}           # a module; a name of __init__
    assert graph["p.d"] == {"p.q.c": 1, "p.q": 1}       # and the package it runs
    assert graph["p.q.c"] == {"p.a": 1}                 # its own packages: no edge
    assert import_circles(graph) == [
        "3 modules: p -> p.a (line 1); p.a -> p.b (line 3); p.b -> p (line 2), p.a (line 1)"]


def test_no_import_circle_in_any_package():
    circles = import_circles(import_graph())
    print("\n".join(["import circles:"] + circles if circles else ["no import circle in "
                                                                     + ", ".join(PACKAGES)]))
    assert circles == []


def test_the_launcher_imports_neither_the_planner_nor_the_jobs():
    # mrjobs.runtime runs the jobs and asks them through hooks (the temp disk:
    # SparseJob.temp_disk_estimate); the planner models a job and is called by it
    graph = import_graph()
    upward = ["%s -> %s (line %d)" % (m, t, line) for m, edges in sorted(graph.items())
              if m.startswith("mrjobs.runtime.") for t, line in sorted(edges.items())
              if t == "mrjobs.plan" or t.startswith("mrjobs.plan.") or t in JOB_MODULES]
    assert upward == []


@pytest.mark.slow
@pytest.mark.smoke
def test_only_the_runners_choice_imports_the_local_runner():
    # importing mrjobs.runtime.localrunner patches mrjob (mrjob.bin with a
    # stand-in for pyspark): what others read of it is in localsettings
    graph = import_graph()
    assert sorted(m for m, edges in graph.items()
                  if "mrjobs.runtime.localrunner" in edges) == ["mrjobs.runtime.runnerargs"]
    assert graph["mrjobs.runtime.localsettings"] == {}
    out = subprocess.run([sys.executable, "-c", "import sys, mrjobs.runtime.localsettings, "
                          "mrjobs.plan.cli; print('mrjob.bin' in sys.modules, "
                          "'mrjobs.runtime.localrunner' in sys.modules)"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.split() == ["False", "False"], out.stderr


def test_bench_imports_no_test_module_and_no_private_name():
    modules = _package_modules()
    private, from_tests = [], {}
    for name, path in sorted(modules.items()):
        if not name.startswith("bench"):
            continue
        for line, module, names in _imported(name, path):
            if module.split(".")[0] == "tests":
                from_tests.setdefault(name, set()).update(
                    "%s.%s" % (module, n) for n in names or ("",))
            if module.split(".")[0] not in PACKAGES or module in SEAMS:
                continue
            private += ["%s:%d %s.%s" % (name, line, module, n) for n in names
                        if n.startswith("_") and not n.startswith("__")
                        and "%s.%s" % (module, n) not in modules]
    assert private == []
    assert {m: n for m, n in from_tests.items()
            if not n <= BENCH_TEST_IMPORTS_TO_MOVE.get(m, set())} == {}
    assert {m for m in BENCH_TEST_IMPORTS_TO_MOVE if m not in from_tests} == set(), \
        "moved: take it off BENCH_TEST_IMPORTS_TO_MOVE"


def readme_layers():
    """The layers of README's "How it is built", top first: a list of
    ``(layer name, [module or package names])``."""
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    section = text.split("## How it is built\n", 1)[1].split("\n## ", 1)[0]
    layers = []
    for item in re.split(r"\n(?=\d+\. )", section):
        head = re.match(r"\d+\. \*\*(.+?)\*\*", item)
        if head:
            layers.append((head.group(1), re.findall(r"`((?:mrjobs|mrcodecs)[\w.]*)`", item)))
    return layers


def layer_of(module, layers):
    """Index of the layer that holds ``module`` (its longest listed prefix)."""
    best = max(((len(name), i) for i, (_, names) in enumerate(layers) for name in names
                if module == name or module.startswith(name + ".")), default=None)
    return None if best is None else best[1]


def test_every_import_goes_down_the_layers_of_the_readme():
    layers = readme_layers()
    assert [name for name, _ in layers] == ["Tools", "Commands", "Steps", "Launcher", "Records",
                                            "Kernels", "Wire"]
    graph = {m: edges for m, edges in import_graph().items() if not m.startswith("bench")}
    listed = {name for _, names in layers for name in names}
    # each top-level module and subpackage of mrjobs named in a layer of its own
    unplaced = sorted(m for m in graph if layer_of(m, layers) is None or (
        m.startswith("mrjobs.") and ".".join(m.split(".")[:2]) not in listed))
    upward = ["%s (%s) -> %s (%s), line %d" % (
        m, layers[layer_of(m, layers)][0], t, layers[layer_of(t, layers)][0], line)
        for m, edges in sorted(graph.items()) for t, line in sorted(edges.items())
        if t in graph and layer_of(t, layers) < layer_of(m, layers)]
    assert unplaced == [] and upward == []


def test_the_layer_check_sees_an_import_that_goes_up():
    layers = [("Top", ["a.top"]), ("Bottom", ["a"])]
    assert (layer_of("a.top.x", layers), layer_of("a.b", layers), layer_of("b", layers)) == (
        0, 1, None)


def test_the_tests_mirror_the_packages():
    # a folder for each subpackage of mrjobs, jobs/ for its top-level modules,
    # codecs/ and bench/ for the other packages; engines/ and hostile/ cut across
    subpackages = {d for d in os.listdir(os.path.join(ROOT, "mrjobs"))
                   if os.path.exists(os.path.join(ROOT, "mrjobs", d, "__init__.py"))}
    folders = {d for d in os.listdir(os.path.join(ROOT, "tests"))
               if os.path.exists(os.path.join(ROOT, "tests", d, "__init__.py"))}
    assert folders == subpackages | {"jobs", "codecs", "bench", "engines", "hostile"}
