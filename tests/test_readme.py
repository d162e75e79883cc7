"""The README's Python examples run as doctests, so they cannot go stale."""
import doctest
import os

import pytest

README = os.path.join(os.path.dirname(__file__), "..", "README.md")


def test_readme_examples():
    failures, tried = doctest.testfile(README, module_relative=False, optionflags=doctest.ELLIPSIS)
    assert tried > 0
    assert failures == 0


@pytest.mark.slow
@pytest.mark.smoke
def test_first_five_minutes_commands_run_as_written(tmp_path):
    """The quick start's shell lines, typed as written (with the venv's python as
    ``python`` on PATH, as ``. .venv/bin/activate`` makes it)."""
    import re
    import subprocess
    import sys

    root = os.path.dirname(README)
    with open(README) as f:
        text = f.read()
    block = re.search(r"The first five minutes.*?```sh\n(.*?)```", text, re.S).group(1)
    commands = [line.split("  #")[0].strip() for line in block.splitlines()]
    commands = [c for c in commands if c and not c.startswith(("make ", ". ", "#"))]
    assert any(c.startswith("python -m mrjobs.dot_products examples/") for c in commands)
    assert any(c.startswith("mrsparse dot-products examples/") for c in commands)
    # what they write goes to /tmp, not into the checkout (here: into tmp_path)
    written = [w for c in commands for w in re.findall(r">\s*(\S+)", c)]
    assert written and all(w.startswith("/tmp/") for w in written), written
    commands = [c.replace("/tmp/", "%s/" % tmp_path) for c in commands]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").write_text('#!/bin/sh\nexec %s "$@"\n' % sys.executable)
    (bin_dir / "python").chmod(0o755)
    os.symlink(os.path.join(os.path.dirname(sys.executable), "mrsparse"), bin_dir / "mrsparse")
    os.symlink(os.path.join(root, "examples"), tmp_path / "examples")
    env = dict(os.environ, PATH="%s:%s" % (bin_dir, os.environ["PATH"]), PYTHONPATH=root)
    for command in commands:
        proc = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, (command, proc.stderr)
        assert "Traceback" not in proc.stderr, (command, proc.stderr)
    first = (tmp_path / "neighbours.txt").read_text().splitlines()[0]
    assert first.startswith('"') and '\t{"' in first
