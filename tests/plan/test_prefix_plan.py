"""The planner on the prefix strategy: its prefixes are the job's, its copies
and entries follow the job's counters, the cheaper of blocks and prefix is
named, and a group that would make a straggler is warned of."""
import pytest

from mrjobs.counters import PREFIX_ENTRIES_SENT, WORK
from mrjobs.plan.cli import parser, plan
from mrjobs.plan.render import format_plan
from mrjobs.strategies.prefixing import repeats
from tests import jobs_helpers
from tests.jobs_helpers import corpus

SAMPLE = "examples/sample.jsonl"


def _plan(path, *args, strategy="prefix"):
    o = parser().parse_args([str(path), "--measure", "cosine", "--strategy", strategy, *args])
    e = plan(o)
    return e, format_plan(e, o)


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("prefix-plan") / "c.jsonl"
    lines = corpus(n=400, seed=5)
    path.write_text("\n".join(lines) + "\n")
    return path, lines


def test_the_whole_input_gives_the_jobs_entries(small):
    path, lines = small
    e, _ = _plan(path, "--threshold", "0.3")
    run = jobs_helpers.run(["--measure", "cosine", "--threshold", "0.3"], lines,
                           strategy="prefix")
    sent = run.counters[WORK][PREFIX_ENTRIES_SENT]
    # (no weight negative: the copies carry no earlier features)
    assert e["prefix_repeats"] and repeats("cosine", True)
    planned = e["prefix_entries"]
    # the plan counts copies to features one vector alone holds, which the job skips
    assert sent <= planned <= 1.5 * sent


def test_the_cheaper_strategy_is_named(small):
    path, _ = small
    _, text = _plan(path, "--threshold", "0.3", "-r", "local")
    assert "strategy: " in text and "is the cheaper here" in text
    _, text = _plan(path, "--threshold", "0.3", "--measure", "dot", strategy="blocks")
    assert "is the cheaper here" not in text  # prefix takes no dot: nothing to weigh


def test_the_planner_refuses_what_the_job_refuses(small, capsys):
    from mrjobs.plan.__main__ import main
    path, _ = small
    with pytest.raises(SystemExit):
        main([str(path), "--measure", "cosine", "--strategy", "prefix", "--top-k", "3"])
    assert "prefix needs --threshold" in capsys.readouterr().err


def test_a_straggler_group_is_warned_of():
    _, low = _plan(SAMPLE, "--threshold", "0.05", "-r", "hadoop", "--reducers", "100")
    assert "is the straggler" in low
    _, few = _plan(SAMPLE, "--threshold", "0.05", "-r", "hadoop", "--reducers", "1")
    assert "is the straggler" not in few
