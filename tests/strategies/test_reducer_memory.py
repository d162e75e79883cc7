"""Blocks sized by the reducers' memory: ``--reducer-memory``, or a cluster
runner's ``-D mapreduce.reduce.memory.mb``, sets how many entries a block
holds, and so the default ``--blocks``; the planner follows the same rule."""
import pytest

from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.strategies.containers import MEMORY_SHARE, block_entries_for
from mrjobs.strategies.sizing import (DEFAULT_BLOCK_ENTRIES, INPUT_BYTES_PER_ENTRY,
                                      default_blocks, pair_memory_bytes)

GB = 1024


def _job(*args):
    return MRSparseDotProducts(["--no-conf", *args])


def _sized(tmp_path, entries):
    path = tmp_path / "big.jsonl"
    with open(path, "wb") as f:  # only its size is read
        f.truncate(entries * INPUT_BYTES_PER_ENTRY)
    return str(path)


@pytest.mark.parametrize("mb", [512, 1024, 4096, 16384])
def test_a_pair_of_blocks_fits_its_share_of_the_reducer(mb):
    n = block_entries_for(mb)
    assert pair_memory_bytes(2 * n, 2, 1000000) <= MEMORY_SHARE * mb * 2 ** 20
    # and no more than a little over it: the blocks are as large as it lets them be
    assert pair_memory_bytes(2 * n + 20000, 2, 1000000) > MEMORY_SHARE * mb * 2 ** 20


def test_more_memory_fewer_blocks():
    size = 400_000_000 * INPUT_BYTES_PER_ENTRY  # 4e8 entries
    counts = [default_blocks(size, 1, size=block_entries_for(mb))
              for mb in (1 * GB, 4 * GB, 16 * GB)]
    assert counts[0] > counts[1] > counts[2]
    assert default_blocks(size, 1) == -(-400_000_000 // DEFAULT_BLOCK_ENTRIES)


def test_the_job_takes_the_option_or_the_clusters_setting(tmp_path):
    path = _sized(tmp_path, 40_000_000)
    default = _job("-r", "hadoop", path)._default_blocks()
    assert _job("-r", "hadoop", "--reducer-memory", "8192", path)._default_blocks() < default
    assert _job("-r", "hadoop", "-D", "mapreduce.reduce.memory.mb=8192",
                path)._default_blocks() < default
    assert _job("-r", "hadoop", "-D", "mapreduce.reduce.memory.mb=256",
                path)._default_blocks() > default
    # the local runner's processes have no container: -D does not size them
    assert _job("-r", "local", "-D", "mapreduce.reduce.memory.mb=8192",
                path)._default_blocks() == _job("-r", "local", path)._default_blocks()


@pytest.mark.parametrize("args, words", [
    (["--blocks", "4"], "has no effect with --blocks"),
    (["--strategy", "stripes"], "has no effect with --strategy stripes"),
])
def test_where_it_sizes_nothing_it_is_refused(args, words):
    with pytest.raises(ValueError, match=words):
        _job("--reducer-memory", "4096", *args)


def test_the_planner_plans_the_same_blocks(tmp_path):
    from mrjobs.plan.cli import parser, plan
    path = tmp_path / "c.jsonl"
    from tests.jobs_helpers import corpus
    path.write_text("\n".join(corpus(n=200)) + "\n")
    blocks = {}
    for mb in (512, 4096):
        o = parser().parse_args([str(path), "--vectors", "10000000", "-r", "hadoop",
                                 "--reducer-memory", str(mb), "--measure", "cosine",
                                 "--top-k", "10"])
        blocks[mb] = plan(o)["blocks"]
    assert blocks[512] > blocks[4096] > 1
