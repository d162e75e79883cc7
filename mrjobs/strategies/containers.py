"""The reduce containers' memory and the blocks it holds: ``--reducer-memory``
(or, on a cluster runner, ``-D mapreduce.reduce.memory.mb``) sizes the blocks
strategy's default block count (:func:`mrjobs.strategies.sizing.default_blocks`)."""
from mrjobs.strategies.sizing import CHUNK_BYTES_PER_ENTRY, PAIR_BYTES_PER_ENTRY, TASK_BASE_BYTES

__all__ = ["MEMORY_SHARE", "MIN_BLOCK_ENTRIES", "block_entries_for", "reducer_memory_mb"]

#: the share of a reduce container a block-pair reducer's estimate may take
#: (the rest: the JVM of Hadoop Streaming's task, the sort's buffers)
MEMORY_SHARE = 0.7
#: the fewest entries a block is made of, whatever the memory
MIN_BLOCK_ENTRIES = 100_000


def block_entries_for(memory_mb, buffer_entries=1000000):
    """Entries a block may hold for block-pair reducers of ``memory_mb``
    megabytes: the most whose pair (two blocks, :func:`pair_memory_bytes`)
    takes at most :data:`MEMORY_SHARE` of it; at least :data:`MIN_BLOCK_ENTRIES`.

    >>> block_entries_for(4096), block_entries_for(1024), block_entries_for(128)
    (14577000, 3303000, 100000)
    """
    room = MEMORY_SHARE * memory_mb * 2 ** 20 - TASK_BASE_BYTES - (
        CHUNK_BYTES_PER_ENTRY * buffer_entries)
    return max(MIN_BLOCK_ENTRIES, int(room / (2 * PAIR_BYTES_PER_ENTRY)) // 1000 * 1000)


def reducer_memory_mb(option, runner, jobconf):
    """The reduce containers' megabytes: ``--reducer-memory`` (``option``),
    else on a cluster runner the ``-D mapreduce.reduce.memory.mb`` of
    ``jobconf``; None where neither says (the local runner's tasks are
    processes, not containers).

    >>> reducer_memory_mb(None, "hadoop", {"mapreduce.reduce.memory.mb": "4096"})
    4096
    >>> reducer_memory_mb(None, "local", {"mapreduce.reduce.memory.mb": "4096"}) is None
    True
    """
    if option is not None:
        return option
    if (runner or "inline") in ("inline", "local"):
        return None
    given = str((jobconf or {}).get("mapreduce.reduce.memory.mb", "")).strip()
    return int(given) if given.isdigit() and int(given) > 0 else None
