"""What a small job starts: one block, as many local tasks as the work needs, light
task processes."""
import io
import json
import os
import sys

import pytest

from mrjobs.runtime import localrunner, localsettings
from mrjobs.runtime.epilogue import write_output
from mrjobs.strategies.sizing import (DEFAULT_BLOCK_ENTRIES, INPUT_BYTES_PER_ENTRY, SMALL_ENTRIES,
                                      WHOLE_ROWS_MAX_ENTRIES, default_blocks, reducers)
from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.runtime.tasks import check_task_python, probe_task_python
from mrjobs.runtime.localsettings import BALANCE_BYTES, SPLIT_BYTES, task_count
from mrjobs.runtime.shipping import package_zip
from mrjobs.testing import run_job
from tests.jobs_helpers import bare_python, corpus


def _job(*args):
    return MRSparseDotProducts(["--no-conf", *args])


def _small(tmp_path):
    path = tmp_path / "small.jsonl"
    path.write_text("\n".join(corpus(n=50)) + "\n")
    return str(path)


def _large(tmp_path):
    path = tmp_path / "large.jsonl"
    with open(path, "wb") as f:  # only its size is read
        f.truncate((SMALL_ENTRIES + 1) * INPUT_BYTES_PER_ENTRY)
    return str(path)


def test_tasks_run_without_setuptools_distutils_hook_and_blas_threads(tmp_path):
    path = _small(tmp_path)
    for runner in ("local", "hadoop"):
        env = _job("-r", runner, path)._runner_kwargs()["cmdenv"]
        assert env["SETUPTOOLS_USE_DISTUTILS"] == "stdlib"
        assert env["OPENBLAS_NUM_THREADS"] == env["OMP_NUM_THREADS"] == "1"
    env = _job("-r", "local", "--cmdenv", "SETUPTOOLS_USE_DISTUTILS=local", "--cmdenv",
               "OPENBLAS_NUM_THREADS=4", path)._runner_kwargs()["cmdenv"]
    assert env["SETUPTOOLS_USE_DISTUTILS"] == "local"  # the user's choice wins
    assert env["OPENBLAS_NUM_THREADS"] == "4"


def test_a_small_input_gets_one_block(tmp_path):
    path = _small(tmp_path)
    job = _job("-r", "local", path)
    assert job._default_blocks() == 1
    kwargs = job._runner_kwargs()
    assert not kwargs.get("num_cores")  # -r local keeps its cores: the runner sizes the tasks
    assert kwargs["split_bytes"] == SPLIT_BYTES
    assert _job("-r", "local", "--num-cores", "2", path)._default_blocks() == 1
    # stripes' sums follow the partitioning: it keeps mrjob's two tasks per core
    assert _job("-r", "local", "--strategy", "stripes", path)._runner_kwargs()["split_bytes"] is None


def test_a_larger_input_keeps_the_cores_busy(tmp_path):
    job = _job("-r", "local", "--num-cores", "2", _large(tmp_path))
    assert job._default_blocks() == 3  # 6 block pairs for 2 cores


def test_task_count():
    mb = 2**20
    assert task_count(0, 2, SPLIT_BYTES) == 1
    assert task_count(SPLIT_BYTES, 2, SPLIT_BYTES) == 1
    assert task_count(SPLIT_BYTES + 1, 2, SPLIT_BYTES) == 2
    assert task_count(2 * BALANCE_BYTES, 2, SPLIT_BYTES) == 2  # at most one a core
    assert task_count(2 * BALANCE_BYTES + 1, 2, SPLIT_BYTES) == 4  # then mrjob's two a core
    assert task_count(100 * mb, 1, SPLIT_BYTES) == 2
    assert task_count(10, 2, None) == 4  # mrjob's
    assert task_count(10, 2, SPLIT_BYTES, given=3) == 3
    assert task_count(100 * mb, 2, None, given=1) == 1


# -- what the local runner starts -------------------------------------------------

def _output(runner):
    """The run's output in part order, as the launcher writes it to stdout."""
    out = io.BytesIO()
    write_output(runner, out)
    return out.getvalue()


def _run_local(tmp_path, name, args):
    """(output bytes in part order, {step: (map tasks, reduce tasks)})."""
    tmp = tmp_path / name
    job = _job("-r", "local", "--local-tmp-dir", str(tmp), "--cleanup", "NONE", *args)
    with job.make_runner() as runner:
        runner.run()
        output = _output(runner)
        steps = os.path.join(runner._get_local_tmp_dir(), "step")
        tasks = {int(s): tuple(len([t for t in os.listdir(os.path.join(steps, s, kind))
                                    if t.isdigit()]) for kind in ("mapper", "reducer"))
                 for s in sorted(os.listdir(steps))}
    return output, tasks


@pytest.mark.slow
def test_a_small_input_runs_one_task_a_step(tmp_path):
    path = _small(tmp_path)
    output, tasks = _run_local(tmp_path, "small", ["--num-cores", "2", path])
    assert tasks == {0: (1, 1), 1: (1, 1)}  # the block pairs (mappers: the input), the rows
    inline = run_job(MRSparseDotProducts, None, [path])
    assert output.splitlines() == inline.lines


@pytest.mark.slow
def test_tasks_follow_the_input_size_and_the_jobconf(tmp_path, monkeypatch):
    path = _small(tmp_path)  # 50 vectors, ~25 KB
    one, _ = _run_local(tmp_path, "one", ["--num-cores", "2", "--blocks", "2", path])
    monkeypatch.setattr(localsettings, "SPLIT_BYTES", 1024)
    two, tasks = _run_local(tmp_path, "two", ["--num-cores", "2", "--blocks", "2", path])
    assert tasks[0] == (2, 2)  # one a core
    monkeypatch.setattr(localsettings, "BALANCE_BYTES", 1024)
    many, tasks = _run_local(tmp_path, "many", ["--num-cores", "2", "--blocks", "2", path])
    # two a core, as mrjob's: the mappers, the rows step's reducers; the
    # pair step's 3 block pairs, each whole in one task
    assert tasks[0][0] == 4 and 2 <= tasks[0][1] <= 3 and tasks[1][1] == 4
    assert many == one and two == one
    given, tasks = _run_local(tmp_path, "given", [
        "--num-cores", "2", "--blocks", "2", "--jobconf", "mapreduce.job.maps=3",
        "--jobconf", "mapreduce.job.reduces=3", path])
    assert tasks[0][0] == 3 and 2 <= tasks[0][1] <= 3 and tasks[1][1] == 3
    assert given == one


@pytest.mark.slow
def test_the_local_runner_removes_each_temp_file_once_read(tmp_path, monkeypatch):
    """With mrjob's default cleanup, when the run ends (before the temp dir
    goes) only the task logs and the job's output are left: every task's
    input, map output, sorted input and intermediate step output went as soon
    as the step after it had read it; the output is the same as keeping them."""
    path = _small(tmp_path)
    monkeypatch.setattr(localsettings, "SPLIT_BYTES", 1024)  # several tasks a step
    args = ["--num-cores", "2", "--blocks", "2", "--max-df", "40", path]
    kept, _ = _run_local(tmp_path, "kept", args)
    report = tmp_path / "report.json"
    monkeypatch.setenv(localsettings.REPORT_ENV, str(report))
    job = _job("-r", "local", "--local-tmp-dir", str(tmp_path / "freed"), *args)
    with job.make_runner() as runner:
        runner.run()
        output = _output(runner)
        tmp = runner._get_local_tmp_dir()
        left = sorted(os.path.relpath(os.path.join(d, f), tmp) for d, _, files in os.walk(tmp)
                      for f in files if "/wd" not in d and "/cache" not in d)
        final = os.path.relpath(runner.get_output_dir(), tmp)
    assert output == kept and output
    assert [f for f in left if not f.startswith(final)
            and os.path.basename(f) != "stderr"] == []
    assert any(f.endswith("stderr") for f in left)
    # the runner's report: each step's shuffle, as the kept run's sorted inputs
    noted = json.loads(report.read_text())
    kept_sorted = {p.parent.parent.name.lstrip("0") or "0": p.stat().st_size for p in
                   (tmp_path / "kept").glob("*/step/*/reducer/sorted-input")}
    assert noted["shuffle_bytes"] == kept_sorted and len(kept_sorted) >= 3
    assert noted["temp_peak_bytes"] >= max(kept_sorted.values())


def test_reduce_splits_are_whole_keys_near_even_cuts(tmp_path):
    """The local runner cuts a step's sorted input at key changes near
    k/n of its bytes, reading only near the cuts: every key whole in one
    split, splits in order, at most n of them, all of them together the file."""
    import random
    rng = random.Random(3)
    keys = sorted(rng.choice("abcdefghij") * rng.randint(1, 3) for _ in range(400))
    lines = [b"%s\t%s\n" % (k.encode(), b"x" * rng.randint(0, 300)) for k in keys]
    path = tmp_path / "sorted-input"
    path.write_bytes(b"".join(lines))
    for n in (1, 2, 3, 5, 40):
        with open(path, "rb") as f:
            bounds = localrunner.split_bounds(f, path.stat().st_size, n)
        parts = [path.read_bytes()[a:b] for a, b in zip(bounds, bounds[1:])]
        assert b"".join(parts) == path.read_bytes() and len(parts) <= n
        part_keys = [{line.split(b"\t")[0] for line in p.splitlines()} for p in parts]
        for i, ks in enumerate(part_keys):
            assert not ks & set().union(*part_keys[:i], *part_keys[i + 1:])
        if n <= 3:  # keys small beside the splits: each cut found, near k/n
            assert len(parts) == n
            assert max(map(len, parts)) <= path.stat().st_size / n * 1.5


def test_map_splits_are_mrjobs(tmp_path):
    """The local runner cuts the input where mrjob's runner cuts it (a split
    takes lines until it holds the split size), reading only near the cuts."""
    import random
    from mrjob.sim import _group_records_for_split
    rng = random.Random(5)
    for case in range(60):
        lines = [b"x" * rng.choice([0, 1, 5, 40, 300]) + b"\n" for _ in range(rng.randint(0, 30))]
        if lines and rng.random() < 0.3:
            lines[-1] = lines[-1][:-1] or b"y"  # no newline at the end
        data = b"".join(lines)
        split_size = rng.choice([1, 2, 7, 50, 400, 10 ** 6])
        groups = {}
        for g, line in _group_records_for_split(iter(lines), split_size):
            groups[g] = groups.get(g, 0) + len(line)
        want = [0]
        for g in sorted(groups):
            want.append(want[-1] + groups[g])
        path = tmp_path / ("in%d" % case)
        path.write_bytes(data)
        with open(path, "rb") as f:
            got = localrunner.input_cuts(f, len(data), split_size)
        assert got == (want if lines else [0, 0]), (lines, split_size)


@pytest.mark.slow
def test_stripes_keeps_mrjobs_splits(tmp_path):
    path = _small(tmp_path)
    _, tasks = _run_local(tmp_path, "stripes", ["--num-cores", "1", "--strategy", "stripes",
                                                "--jobconf", "mapreduce.job.maps=3", path])
    assert tasks[0] == (2, 2)  # two a core, the jobconf unread, as before


# -- what the tasks are given --------------------------------------------------------

def test_own_python_gets_no_zips(tmp_path):
    path = _small(tmp_path)
    kwargs = _job("-r", "local", path)._runner_kwargs()
    assert kwargs["bootstrap_mrjob"] is False
    assert package_zip() not in kwargs["py_files"]
    # the user's word wins
    kwargs = _job("-r", "local", "--bootstrap-mrjob", path)._runner_kwargs()
    assert kwargs["bootstrap_mrjob"] is True and package_zip() in kwargs["py_files"]


def test_a_python_without_our_packages_gets_the_zips(tmp_path):
    path = _small(tmp_path)
    python = bare_python(tmp_path)
    kwargs = _job("-r", "local", "--python-bin", python, path)._runner_kwargs()
    assert not kwargs.get("bootstrap_mrjob")  # None: mrjob's default, which ships it
    assert package_zip() in kwargs["py_files"]


def test_probe_finds_modules_without_importing_them(tmp_path):
    pkg = tmp_path / "site" / "explodes"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise SystemExit('imported')\n")
    (pkg / "sub" / "__init__.py").write_text("")
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "site"))
    found, missing = probe_task_python([sys.executable], [
        "numpy", "explodes", "explodes.sub", "explodes.nope", "nope.sub", "nope"], env)
    assert found["explodes.sub"] == str((pkg / "sub" / "__init__.py").resolve())
    assert set(found) == {"numpy", "explodes", "explodes.sub"}
    assert missing == {"explodes.nope": "ModuleNotFoundError: No module named 'explodes.nope'",
                       "nope.sub": "ModuleNotFoundError: No module named 'nope'",
                       "nope": "ModuleNotFoundError: No module named 'nope'"}
    assert check_task_python([sys.executable], ["numpy", "nope.sub"], env) == (
        "the task Python %s cannot import numpy, nope.sub (ModuleNotFoundError: No module "
        "named 'nope'): install nope and numpy in the task Python (--python-bin / "
        "--task-python-bin)" % sys.executable)
    assert check_task_python([str(tmp_path / "no-python")], ["numpy"]).startswith(
        "the task Python %s does not run" % (tmp_path / "no-python"))


def test_one_block_of_up_to_twice_the_entries_where_partial_rows_outweigh():
    # past --top-k 4x a vector's entries, whole rows on the cores take one block
    # of up to WHOLE_ROWS_MAX_ENTRIES where memory alone would ask for more
    # blocks (and as many partial rows a vector); not without whole rows (a
    # cluster, one core), nor at a --top-k short of it, nor beyond the bound
    past, short = dict(top_k=1000, entries_per_vector=50), dict(top_k=100, entries_per_vector=50)
    nbytes = (DEFAULT_BLOCK_ENTRIES + WHOLE_ROWS_MAX_ENTRIES) // 2 * INPUT_BYTES_PER_ENTRY
    assert default_blocks(nbytes, reducers("local", 2), whole=True, **past) == 1
    assert default_blocks(nbytes, reducers("local", 2), whole=False, **past) == 2
    assert default_blocks(nbytes, reducers("local", 2), whole=True, **short) == 3
    over = WHOLE_ROWS_MAX_ENTRIES + DEFAULT_BLOCK_ENTRIES // 2
    assert default_blocks(over * INPUT_BYTES_PER_ENTRY, reducers("local", 2), whole=True, **past) == (
        -(-over // DEFAULT_BLOCK_ENTRIES))


def test_one_block_where_whole_rows_on_the_cores_pay(tmp_path):
    # one block where its pair reducer scores on the cores and writes the
    # rows (no rows step): up to TRIANGLE_MAX_K wherever the input fits one
    # block, above it under ONE_BLOCK_VECTORS_PER_K vectors a unit of --top-k
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(corpus(n=3000, fpv=50, vocab=5000)) + "\n")
    base = ["-r", "local", "--num-cores", "2", str(path), "--measure", "cosine"]
    for k in ("1", "10", "30"):  # (3000 < 800 x 30)
        assert _job(*base, "--top-k", k)._default_blocks() == 1, k
    assert _job(*base, "--top-k", "10", "--include-self")._default_blocks() == 1
    for other in (["--measure", "tanimoto"], ["--pair-threads", "1"],
                  ["--threshold", "0.5"], ["--include-self", "--top-k", "30"]):
        assert _job(*base, "--top-k", "10", *other)._default_blocks() > 1, other
    assert _job(*base, "--top-k", "10", "--threshold", "0.5", "--no-prune")._default_blocks() == 1
