"""What a user sees at the command line when something is off: the usage
line names the command they ran, a misspelt option gets a suggestion, and
a --hadoop-bin that does not run is one line, not a traceback.  Every run is
a real launcher process."""
import os
import subprocess
import sys

import pytest

from mrjobs.testing import write_lines
from tests.jobs_helpers import corpus

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def launch(tmp_path, module, *args):
    env = dict(os.environ, PYTHONPATH=REPO, TMPDIR=str(tmp_path))
    return subprocess.run([sys.executable, "-m", module] + [str(a) for a in args],
                          cwd=tmp_path, env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("module, misspelt, meant", [
    ("mrjobs.dot_products", "--top-kk", "--top-k"),
    ("mrjobs.dot_products", "--mesure=cosine", "--measure"),
    ("mrjobs.inverted_index", "--max-dff", "--max-df")])
@pytest.mark.slow
def test_a_misspelt_option_names_the_one_meant_and_the_command_run(tmp_path, module,
                                                                   misspelt, meant):
    proc = launch(tmp_path, module, "x.jsonl", misspelt, "3")
    assert proc.returncode == 2
    usage, error = proc.stderr.splitlines()[-2:]
    assert usage == "usage: python -m %s [options] [input files]" % module
    assert error.startswith("python -m %s: error: unrecognized arguments: " % module)
    assert error.endswith("(%s: did you mean %s?)" % (misspelt.split("=")[0], meant))


@pytest.mark.parametrize("option, misspelt, meant", [
    ("--measure", "cosin", "cosine"), ("--strategy", "stripe", "stripes")])
@pytest.mark.slow
def test_a_misspelt_choice_names_the_one_meant(tmp_path, option, misspelt, meant):
    proc = launch(tmp_path, "mrjobs.dot_products", "x.jsonl", option, misspelt)
    assert proc.returncode == 2
    error = proc.stderr.splitlines()[-1]
    assert error.startswith("python -m mrjobs.dot_products: error: argument %s: invalid "
                            "choice: '%s' (choose from " % (option, misspelt))
    assert error.endswith(") (did you mean %s?)" % meant)


def test_a_misspelt_choice_of_the_planner_names_the_one_meant(capsys):
    from mrjobs.plan.cli import parser

    with pytest.raises(SystemExit):
        parser().parse_args(["x", "--measure", "jacard"])
    error = capsys.readouterr().err.splitlines()[-1]
    assert "invalid choice: 'jacard'" in error and error.endswith("(did you mean jaccard?)")


def test_help_names_the_command_run(tmp_path):
    proc = launch(tmp_path, "mrjobs.dot_products", "--help")
    assert proc.returncode == 0
    assert proc.stdout.splitlines()[0] == \
        "usage: python -m mrjobs.dot_products [options] [input files]"


def test_a_hadoop_bin_that_does_not_run_is_one_line(tmp_path):
    write_lines(tmp_path / "corpus.jsonl", corpus(n=20, seed=2))
    proc = launch(tmp_path, "mrjobs.dot_products", "corpus.jsonl", "-r", "hadoop",
                  "--hadoop-bin", "/bin/false", "-o", "file://%s" % (tmp_path / "out"))
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        "mrsparse: error: /bin/false version failed (exit status 1): check --hadoop-bin "
        "(it must run `hadoop version`)")
    assert not (tmp_path / "out").exists()
