"""What a user reads when a run stops: the same one line on every runner,
and options that take negative numbers in every spelling."""
import pytest

from tests.runtime.test_launch_faults import launch

pytestmark = pytest.mark.versions

GOOD = ('{"id": "00000000-0000-0000-0000-00000000000%d", "features": '
        '{"00000000-0000-0000-0000-00000000000a": 1.0}}')
BAD = "not json at all"


def corpus(tmp_path, lines):
    (tmp_path / "bad.jsonl").write_text("".join(line + "\n" for line in lines))
    return "bad.jsonl"


def strict_error(tmp_path, runner, verbose):
    proc = launch(tmp_path, "bad.jsonl", "--strict", "-r", runner, *([] if verbose else ["-q"]))
    assert proc.returncode == 1
    assert proc.stdout == ""
    return proc.stderr


@pytest.mark.parametrize("verbose", [False, True])
@pytest.mark.parametrize("where", [1, 2, 5])
@pytest.mark.slow
def test_a_strict_stop_is_the_same_line_on_inline_and_local(tmp_path, where, verbose):
    """mrjob's inline runner logged the step's counters, blank lines and
    "Error while reading from <a split in the temp dir>" first; the local
    runner said "task failed:" where the inline one said "error:", and the
    format hint depended on where the split began, not on the file."""
    lines = [GOOD % i for i in range(1, 7)]
    lines[where - 1] = BAD
    corpus(tmp_path, lines)
    errors = {r: strict_error(tmp_path, r, verbose) for r in ("inline", "local")}
    last = {r: e.splitlines()[-1] for r, e in errors.items()}
    assert last["inline"] == last["local"], errors
    assert last["local"].startswith("mrsparse: error: bad.jsonl, line %d: " % where)
    assert ("is the input in an accepted format?" in last["local"]) == (where == 1)
    for stderr in errors.values():
        assert "Error while reading" not in stderr and "Counters" not in stderr, stderr
        assert "" not in stderr.splitlines() and "Traceback" not in stderr, stderr
        if not verbose:
            assert stderr.count("\n") == 1, stderr


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.parametrize("value", ["-1e-3", "-0.5", "-1E+2"])
@pytest.mark.slow
def test_a_negative_threshold_in_any_spelling(tmp_path, runner, value):
    """argparse takes only ``-1`` and ``-.5`` as values: ``--threshold -1e-3``
    was "expected one argument"."""
    corpus(tmp_path, [GOOD % i for i in range(1, 5)])
    joined = launch(tmp_path, "bad.jsonl", "-r", runner, "-q", "--threshold=" + value)
    apart = launch(tmp_path, "bad.jsonl", "-r", runner, "-q", "--threshold", value)
    assert joined.returncode == 0, joined.stderr
    assert apart.returncode == 0, apart.stderr
    assert apart.stdout == joined.stdout and joined.stdout.count("\n") == 4


@pytest.mark.parametrize("module", ["mrjobs.dot_products", "mrjobs.plan"])
def test_minus_infinity_is_refused_by_the_option_itself(tmp_path, module):
    corpus(tmp_path, [GOOD % i for i in range(1, 5)])
    proc = launch(tmp_path, "bad.jsonl", "--threshold", "-inf", module=module)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1].endswith(
        "error: argument --threshold: must be a finite number, not -inf"), proc.stderr
