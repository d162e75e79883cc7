"""What a small job starts: one block, one local core, light task processes."""
from mrjobs.blocks import INPUT_BYTES_PER_ENTRY, SMALL_ENTRIES
from mrjobs.dot_products import MRSparseDotProducts
from tests.jobs_helpers import corpus


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


def test_tasks_run_without_setuptools_distutils_hook(tmp_path):
    path = _small(tmp_path)
    for runner in ("local", "hadoop"):
        env = _job("-r", runner, path)._runner_kwargs()["cmdenv"]
        assert env["SETUPTOOLS_USE_DISTUTILS"] == "stdlib"
    env = _job("-r", "local", "--cmdenv", "SETUPTOOLS_USE_DISTUTILS=local", path
               )._runner_kwargs()["cmdenv"]
    assert env["SETUPTOOLS_USE_DISTUTILS"] == "local"  # the user's choice wins


def test_a_small_input_gets_one_block_and_one_local_core(tmp_path):
    path = _small(tmp_path)
    job = _job("-r", "local", path)
    assert job._default_blocks() == 1
    assert job._runner_kwargs()["num_cores"] == 1
    job = _job("-r", "local", "--num-cores", "2", path)
    assert job._default_blocks() == 1
    assert job._runner_kwargs()["num_cores"] == 2  # given, kept
    # stripes' sums follow the partitioning: its cores are left as they are
    assert not _job("-r", "local", "--strategy", "stripes", path)._runner_kwargs().get("num_cores")


def test_a_larger_input_keeps_the_cores_busy(tmp_path):
    job = _job("-r", "local", "--num-cores", "2", _large(tmp_path))
    assert job._default_blocks() == 4  # 10 block pairs for 2 cores
    assert not _job("-r", "local", _large(tmp_path))._runner_kwargs().get("num_cores")
