"""``mrsparse``, the console script: each subcommand writes what ``python -m
mrjobs.<module>`` writes, and a wrong one is one line with a suggestion."""
import os
import subprocess
import sys

import pytest

from mrjobs.api.command import SUBCOMMANDS

pytestmark = pytest.mark.versions

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(ROOT, "examples", "sample.jsonl")
MRSPARSE = os.path.join(os.path.dirname(sys.executable), "mrsparse")


def run(*args):
    return subprocess.run(list(args), capture_output=True, cwd=ROOT)


@pytest.mark.parametrize("args", [
    ("dot-products", SAMPLE, "--measure", "cosine", "--top-k", "2", "--quiet"),
    ("index", SAMPLE, "--quiet"),
    ("plan", SAMPLE, "--top-k", "2"),
    ("generate", "--vectors", "5", "--seed", "3"),
], ids=lambda a: a[0])
@pytest.mark.slow
@pytest.mark.smoke
def test_a_subcommand_writes_what_python_m_writes(args):
    module = SUBCOMMANDS[args[0]][0]
    ours, theirs = run(MRSPARSE, *args), run(sys.executable, "-m", module, *args[1:])
    assert ours.returncode == theirs.returncode == 0, ours.stderr.decode()[-2000:]
    assert ours.stdout == theirs.stdout and ours.stdout


def test_usage_lists_every_subcommand():
    bare, helped = run(MRSPARSE), run(MRSPARSE, "--help")
    assert (bare.returncode, helped.returncode) == (2, 0)
    assert bare.stderr == helped.stdout
    assert all(name.encode() in helped.stdout for name in SUBCOMMANDS)


@pytest.mark.slow
@pytest.mark.smoke
def test_a_misspelt_subcommand_or_option_names_the_one_meant():
    p = run(MRSPARSE, "dot-prodcts", SAMPLE)
    assert p.returncode == 2 and p.stdout == b""
    assert p.stderr.splitlines()[0] == (b"mrsparse: error: no subcommand 'dot-prodcts' "
                                        b"(did you mean dot-products?)")
    p = run(MRSPARSE, "dot-products", SAMPLE, "--top-kk", "2")
    assert p.returncode == 2
    assert b"mrsparse dot-products: error: unrecognized arguments: --top-kk" in p.stderr
    assert b"did you mean --top-k?" in p.stderr
    p = run(MRSPARSE, "plan", "--no-such-option")
    assert p.returncode == 2 and b"mrsparse plan: error:" in p.stderr
