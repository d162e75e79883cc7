"""The documentation site (docs/, mkdocs.yml): its commands run, its examples
are doctests, and it builds without a warning.

Shell blocks of the user guide (docs/guide/*.md) are marked by an HTML comment
on the line just before the opening fence, invisible on the site:

``<!-- runnable -->``
    every command of the block runs as written, in order, in a temporary
    directory that holds a link to ``examples/``, with the venv's python as
    ``python`` on PATH (what ``. .venv/bin/activate`` does). Commands write
    only under ``/tmp/`` (here: the temporary directory); the blocks of a
    page share it, so a later block may read what an earlier one wrote. Each
    command must exit with status 0 and print no traceback, and each output it
    promises must be there afterwards: a file it redirects to (``> /tmp/x``)
    or names with ``-o`` not empty, a job's output directory (``-o`` /
    ``--output-dir``) holding ``_SUCCESS`` and part files that are not all
    empty.
``<!-- not run: REASON -->``
    the block is shown, not run: it needs a Hadoop cluster, EMR, Java, a
    network install or a corpus of your own, or it is the quick start that
    tests/test_readme.py runs.

A ``sh`` block with neither mark fails the test, so no new command goes
untested by accident. The README's task commands must be commands of the
guide's runnable blocks. A command may continue over lines ending in ``\\``;
``  #`` starts a comment.
"""
import doctest
import glob
import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
GUIDE = sorted(glob.glob(os.path.join(DOCS, "guide", "*.md")))
PAGES = sorted(glob.glob(os.path.join(DOCS, "**", "*.md"), recursive=True))

BLOCK = re.compile(r"^(?:<!-- (runnable|not run: [^\n]*?) -->\n)?```sh\n(.*?)^```", re.M | re.S)


def shell_blocks(path):
    """[(mark or None, [command, ...])] of the page's ``sh`` blocks."""
    with open(path) as f:
        text = f.read()
    blocks = []
    for m in BLOCK.finditer(text):
        lines = re.sub(r"\\\n\s*", "", m.group(2)).splitlines()
        commands = [line.split("  #")[0].strip() for line in lines]
        blocks.append((m.group(1), [c for c in commands if c and not c.startswith("#")]))
    return blocks


def runnable_commands(path):
    return [c for mark, commands in shell_blocks(path) if mark == "runnable" for c in commands]


def promised_outputs(command):
    """The paths under /tmp/ that ``command`` says it writes: what it redirects
    to, and what it names with ``-o`` / ``--output-dir`` (a job's output
    directory, or the generator's file)."""
    return (re.findall(r"(?<![0-9&])>\s*(/tmp/\S+)", command)
            + re.findall(r"(?:^|\s)(?:-o|--output-dir)\s+(/tmp/\S+)", command))


@pytest.mark.parametrize("path", GUIDE, ids=lambda p: os.path.basename(p))
def test_every_shell_block_of_the_guide_is_marked(path):
    unmarked = [commands for mark, commands in shell_blocks(path) if mark is None]
    assert not unmarked, "%s: sh blocks without <!-- runnable --> or <!-- not run: ... -->: %r" % (
        path, unmarked)


def test_the_guide_shows_runnable_commands_of_each_task():
    pages = {os.path.basename(p)[:-3]: runnable_commands(p) for p in GUIDE}
    for page in ("neighbours", "threshold", "queries", "inverted-index", "chaining", "convert",
                 "testing", "planning", "getting-started"):
        assert pages[page], "docs/guide/%s.md has no runnable block" % page
    assert any("--queries" in c for c in pages["queries"])
    assert any("--input-format postings" in c for c in pages["inverted-index"])
    assert any(c.startswith("python -m mrjobs.plan ") for c in pages["planning"])
    assert any(c.startswith("python -m mrjobs.convert --to compact") for c in pages["convert"])


@pytest.mark.parametrize("path", [p for p in GUIDE if runnable_commands(p)],
                         ids=lambda p: os.path.basename(p))
@pytest.mark.slow
def test_the_commands_of_the_guide_run_as_written(path, tmp_path):
    commands = runnable_commands(path)
    # what they write goes to /tmp, not into the checkout (here: into tmp_path)
    for command in commands:
        for target in re.findall(r"(?<![0-9&])>\s*(\S+)", command):
            assert target.startswith("/tmp/"), (command, target)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").write_text('#!/bin/sh\nexec %s "$@"\n' % sys.executable)
    (bin_dir / "python").chmod(0o755)
    os.symlink(os.path.join(ROOT, "examples"), tmp_path / "examples")
    env = dict(os.environ, PATH="%s:%s" % (bin_dir, os.environ["PATH"]), PYTHONPATH=ROOT)
    # bytecode caching on, as a user's shell has it: each command would
    # otherwise compile mrjob's and mrsparse's modules again
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for command in commands:
        run = command.replace("/tmp/", "%s/" % tmp_path)
        proc = subprocess.run(["bash", "-o", "pipefail", "-c", run], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, (command, proc.stderr[-3000:])
        assert "Traceback" not in proc.stderr, (command, proc.stderr)
        assert "Traceback" not in proc.stdout, (command, proc.stdout)
        for name in promised_outputs(command):
            out = tmp_path / name[len("/tmp/"):].rstrip("/")
            if out.is_dir():  # a job's output directory
                assert (out / "_SUCCESS").is_file(), (command, name, os.listdir(out))
                parts = glob.glob(str(out / "part-*"))
                assert parts and sum(os.path.getsize(p) for p in parts) > 0, (command, name)
            else:
                assert out.is_file() and out.stat().st_size > 0, (command, name)


def test_the_readme_shows_the_guides_commands():
    """The README's task commands are commands of the guide (which run above);
    its quick start runs in tests/test_readme.py, and any other block is marked
    ``<!-- not run: ... -->``."""
    guide = {c for p in GUIDE for c in runnable_commands(p)}
    blocks = shell_blocks(os.path.join(ROOT, "README.md"))
    quick_start, others = blocks[0], blocks[1:]
    assert quick_start[1][0].startswith("make run"), quick_start
    tasks = [commands for mark, commands in others if mark is None]
    assert len(tasks) >= 5, tasks
    for commands in tasks:
        for command in commands:
            assert command in guide, "README command not run by the guide: %s" % command


def test_the_guide_promises_the_lines_it_compares():
    # the pages say "same lines" where two runs give identical output: the
    # commands above exit 0 only if cmp found them equal
    compared = [c for p in GUIDE for c in runnable_commands(p) if c.startswith("cmp ")]
    assert len(compared) >= 3, compared


@pytest.mark.parametrize("path", PAGES, ids=lambda p: os.path.relpath(p, DOCS))
def test_the_examples_of_the_docs_run_as_doctests(path):
    failures, tried = doctest.testfile(path, module_relative=False, optionflags=doctest.ELLIPSIS)
    assert failures == 0


def test_the_docs_hold_doctests():
    for page in ("internals/wire-format.md", "guide/testing.md"):
        result = doctest.testfile(os.path.join(DOCS, page), module_relative=False,
                                  optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0, (page, result)


@pytest.mark.slow
def test_the_site_builds_without_a_warning(tmp_path):
    """``mkdocs build --strict`` (as ``make docs`` runs it): a broken link, a
    missing anchor or a page outside the navigation fails."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (make install installs it with the docs extra)")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                           str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    for page in ("index.html", "guide/neighbours/index.html", "reference/options/index.html",
                 "internals/spec/index.html"):
        assert (tmp_path / "site" / page).is_file(), page
