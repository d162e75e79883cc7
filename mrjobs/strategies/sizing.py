"""How big the blocks strategy's blocks are: one home for the sizing rules
the job and the planner share.

* :func:`default_blocks` -- ``--blocks`` when it is not given: from the
  input's bytes and the runner's reduce tasks (:func:`reducers`).
* :func:`estimate_blocks`, :func:`pair_memory_bytes` -- the rule behind it,
  and the memory of one block-pair reducer.
* :func:`df_cut_form` -- which form the ``--max-df`` cut takes under blocks.
* :func:`input_data_bytes`, :func:`data_bytes`, :func:`open_data`,
  :func:`data_first_line` -- the bytes of data the input holds (a compressed
  file's uncompressed bytes, estimated), and its lines, as the job reads them:
  what the job and the planner size everything from.
"""
import logging
import os
import struct

__all__ = ["default_blocks", "reducers", "cores", "estimate_blocks", "pair_memory_bytes", "df_cut_form",
           "rows_outweigh", "vector_entries", "local_split_bytes", "ROWS_OVER_INPUT",
           "DF_CUT_FORMS", "DEFAULT_BLOCK_ENTRIES", "INPUT_BYTES_PER_ENTRY", "COMPACT_BYTES_PER_ENTRY",
           "bytes_per_entry", "MAX_BLOCKS", "TASK_BASE_BYTES", "PAIR_BYTES_PER_ENTRY",
           "CHUNK_BYTES_PER_ENTRY", "WHOLE_ROWS_MAX_ENTRIES", "TRIANGLE_MAX_ENTRIES",
           "one_block_pays",
           "whole_rows", "COMPRESSED", "open_data", "data_bytes", "input_data_bytes",
           "data_first_line"]

log = logging.getLogger(__name__)

#: the largest --blocks: each vector crosses the shuffle --blocks times, so
#: 10,000 blocks is a shuffle 10,000 times the input -- far past any corpus
#: the blocks strategy suits (docs/reference/options.md, "Checks")
MAX_BLOCKS = 10000

#: the forms of the --max-df cut under blocks (see :func:`df_cut_form`)
DF_CUT_FORMS = ("counts", "join")
#: runners whose count tables stay small: one machine, a few reduce tasks
COUNTS_RUNNERS = ("inline", "local")
#: block pairs up to which the count-table form is chosen (B <= 4 without
#: --queries, B <= 3 with)
COUNTS_MAX_PAIRS = 10


def df_cut_form(runner, blocks, queries=False):
    """The form of the ``--max-df`` cut under blocks for a job: ``"counts"``
    (three steps: count tables sent to every block pair) or ``"join"`` (five
    steps: a df step and a regroup step before the pairs).

    The count tables cost R·F·P shuffle entries (R vectors-step reduce tasks,
    F features a task saw, P block pairs), the join a fixed two passes over
    the entries.  On one machine with a few block pairs the tables are small
    and the two steps' process starts are what counts: on 20,000 vectors
    (B=4, R=2, local runner) the count tables took about 12% less CPU.  On a
    cluster they dominate: ``python -m mrjobs.plan`` puts them at 84 GB
    against the join's 19 GB for 10^6 vectors on 100 reducers, and 21.8 TB
    against 25.8 GB for 10^7.  So: counts on the inline and local runners
    with at most :data:`COUNTS_MAX_PAIRS` block pairs, join everywhere else.

    Parameters
    ----------
    runner : str or None
        The runner's alias (None: mrjob's default, inline).
    blocks : int
        The job's block count (each family under ``--queries``).
    queries : bool
        Whether ``--queries`` is given (then B² block pairs, else B(B+1)/2).

    Examples
    --------
    >>> df_cut_form("local", 4), df_cut_form("local", 5), df_cut_form("hadoop", 1)
    ('counts', 'join', 'join')
    >>> df_cut_form(None, 3, queries=True), df_cut_form("inline", 4, queries=True)
    ('counts', 'join')
    """
    pairs = blocks * blocks if queries else blocks * (blocks + 1) // 2
    if (runner or "inline") in COUNTS_RUNNERS and pairs <= COUNTS_MAX_PAIRS:
        return "counts"
    return "join"

#: entries one block should hold by default (about 50 MB as scipy matrices)
DEFAULT_BLOCK_ENTRIES = 2_000_000
#: bytes of input per vector entry, for estimating entries from input sizes
INPUT_BYTES_PER_ENTRY = 45
#: the same for compact records (vectors or posting lists): 16 id and 8
#: weight bytes an entry, the escapes and each record's own bytes (25.1 on
#: the generated corpus as vectors, 29.3 on the text corpus as postings)
COMPACT_BYTES_PER_ENTRY = 25


def bytes_per_entry(input_format, first_line=None):
    """Input bytes per vector entry, for :func:`default_blocks`: compact
    records (``compact``, ``postings``, or ``auto`` whose ``first_line`` of
    the input is one) take about :data:`COMPACT_BYTES_PER_ENTRY`, text lines
    :data:`INPUT_BYTES_PER_ENTRY`.

    >>> bytes_per_entry("json"), bytes_per_entry("postings")
    (45, 25)
    >>> bytes_per_entry("auto", b'{"id": "..."}'), bytes_per_entry("auto", b"k\\t\\x01\\x00")
    (45, 25)
    """
    from mrjobs.parsing import COMPACT_FORMATS, is_compact
    if input_format in COMPACT_FORMATS or (
            input_format == "auto" and first_line is not None and is_compact(first_line)):
        return COMPACT_BYTES_PER_ENTRY
    return INPUT_BYTES_PER_ENTRY
#: entries up to which a job is small: one block (one block-pair reducer),
#: since more tasks would cost more in process starts than they share out
SMALL_ENTRIES = 100_000


#: block pairs a reducer gets at least, with several reducers: each vector
#: travels B times and gets up to B partial rows, so fewer blocks move fewer
#: bytes, while too few pairs leave a reducer idle (a diagonal pair computes
#: half a product).  Measured on 2 cores, 20,000 Zipf vectors, cosine: B = 3
#: (6 pairs) 9.3 s wall at top-10 and 28.6 s at top-1000, B = 4 (10 pairs)
#: 12.3 s and 38.5 s, B = 2 (3 pairs, one reducer holding twice the work)
#: 12.5 s at top-10; 50,000 vectors: B = 3 41.7 s, B = 4 44.4 s.
PAIRS_PER_REDUCER = 3

#: --top-k, in entries of a vector, past which the partial rows outweigh
#: what more block pairs share out: each block adds a partial row of up to K
#: entries to each vector (n·K entries, against the n·L of the vectors), and
#: the pair step writes, the local runner sorts and copies, and the rows step
#: reads them all.  Measured on 2 cores, 20,000 Zipf vectors of ~50 entries,
#: cosine, wall (B = 1 / 2 / 3): top-10 5.9 / 4.5 / 4.3 s, top-100 6.8 / 7.2 /
#: 6.5 s, top-1000 16.0 / 20.8 / 22.3 s.
ROWS_OVER_INPUT = 4


def rows_outweigh(top_k, entries_per_vector):
    """Whether ``--top-k`` is past :data:`ROWS_OVER_INPUT` times a vector's
    entries (an estimate; None: not known, False).

    >>> rows_outweigh(1000, 50), rows_outweigh(100, 50), rows_outweigh(1000, None)
    (True, False, False)
    """
    return bool(top_k and entries_per_vector and top_k > ROWS_OVER_INPUT * entries_per_vector)


def vector_entries(input_format, first_line=None):
    """A vector's entries estimated from the input's ``first_line`` (at
    :func:`bytes_per_entry` bytes an entry); None without a line, or for
    posting lists (a line is a feature's, not a vector's).

    >>> vector_entries("json", b"x" * 450), vector_entries("postings", b"x"), vector_entries("json")
    (10.0, None, None)
    """
    from mrjobs.parsing import POSTINGS
    if not first_line or input_format == POSTINGS:
        return None
    return max(len(first_line) / bytes_per_entry(input_format, first_line), 1.0)


def estimate_blocks(entries, reducers=1, block_entries=DEFAULT_BLOCK_ENTRIES, top_k=None,
                    entries_per_vector=None):
    """A block count for about ``entries`` vector entries.

    Enough blocks that one holds at most ``block_entries`` entries, and, with
    several reducers, enough block pairs (:data:`PAIRS_PER_REDUCER` a
    reducer) that uneven pairs still keep them all busy; but one block for a
    small input (at most :data:`SMALL_ENTRIES`), whose product costs less
    than starting more tasks, and no more blocks than memory asks for when
    ``top_k`` is past :data:`ROWS_OVER_INPUT` times ``entries_per_vector``
    (:func:`rows_outweigh`).

    >>> estimate_blocks(10_000), estimate_blocks(10_000, reducers=2)
    (1, 1)
    >>> estimate_blocks(200_000, reducers=2), estimate_blocks(100_000_000)
    (3, 50)
    >>> estimate_blocks(1_000_000, 2, top_k=1000, entries_per_vector=50)
    1
    """
    b = max(1, -(-int(entries) // block_entries))
    if (reducers > 1 and int(entries) > SMALL_ENTRIES
            and not rows_outweigh(top_k, entries_per_vector)):
        while b * (b + 1) // 2 < PAIRS_PER_REDUCER * reducers:
            b += 1
    return b


#: a block-pair reducer's peak: a task process's own memory (Python, numpy,
#: scipy, the job), bytes per entry of the blocks it holds (the decoded
#: records, the CSR matrices, the kernel's work), bytes per
#: ``--buffer-entries`` of a chunk of products -- ``python -m mrjobs.plan``'s
#: defaults (``rss_base``, ``rss_entry``, ``rss_chunk`` of
#: :data:`mrjobs.plan.resources.DEFAULTS`), measured on this project's
#: machine.  Against the bench's runs (2 cores, local runner; 10**6 bytes):
#: 205 MB for 20,000 Zipf vectors in one block (220 MB measured; 347 MB at
#: --top-k 1000, whose threads hold more chunks of output), 375 MB for
#: 50,000 (465 MB), 434 MB for 20,000 text documents in 3 blocks (441 MB).
TASK_BASE_BYTES = 43e6
PAIR_BYTES_PER_ENTRY = 100.0
CHUNK_BYTES_PER_ENTRY = 48.0


def pair_memory_bytes(entries, blocks, buffer_entries):
    """Estimated peak bytes of one block-pair reducer: :data:`TASK_BASE_BYTES`,
    :data:`PAIR_BYTES_PER_ENTRY` an entry of the two blocks of a pair (of
    ``entries`` over ``blocks`` blocks; one block holds them all once) and
    :data:`CHUNK_BYTES_PER_ENTRY` a ``buffer_entries`` of a chunk.

    >>> pair_memory_bytes(1_000_000, 1, 1_000_000) // 10**6
    191
    >>> pair_memory_bytes(3_000_000, 3, 1_000_000) // 10**6
    291
    """
    held = entries * (2.0 / blocks if blocks > 1 else 1.0)
    return int(TASK_BASE_BYTES + PAIR_BYTES_PER_ENTRY * held
               + CHUNK_BYTES_PER_ENTRY * buffer_entries)


#: the most threads ``--pair-threads`` takes by default (each holds a chunk's
#: work: its sums, its dense rows of up to 32 MB, its results)
MAX_PAIR_THREADS = 8


def pair_threads(runner, blocks, num_cores=None):
    """``--pair-threads`` when it is not given: with one block (one block
    pair, one reduce task, the other cores idle) the inline and local
    runners' cores, at most :data:`MAX_PAIR_THREADS`; else 1 (a cluster's
    task gets one core).

    >>> pair_threads("local", 1, 2), pair_threads("local", 3, 2), pair_threads("hadoop", 1)
    (2, 1, 1)
    """
    if blocks == 1 and runner in ("inline", "local"):
        return min(cores(num_cores), MAX_PAIR_THREADS)
    return 1


def local_split_bytes(strategy):
    """The local runner's bytes a task (its ``split_bytes``) for a
    ``--strategy``: blocks gives the same bytes for every partitioning;
    stripes' sums follow it in the last bit, so it keeps mrjob's splits
    (None).  The job passes it to its runner, the planner counts tasks by it."""
    from mrjobs.runtime.localsettings import SPLIT_BYTES  # the launcher's: not in tasks
    return SPLIT_BYTES if strategy == "blocks" else None


def cores(num_cores=None):
    """The cores a local run uses: ``--num-cores``, else this machine's."""
    return num_cores or os.cpu_count() or 1


def reducers(runner, num_cores=None):
    """The reduce tasks a run of the job gets for its default block count:
    the local runner's cores (``--num-cores``, else this machine's), else 1
    (the inline runner runs one task at a time; a cluster's count is not
    known at launch)."""
    return cores(num_cores) if (runner or "inline") == "local" else 1


#: with whole rows on the cores (:func:`whole_rows`), vectors a unit of
#: ``--top-k`` below which one block pays: it computes every pair twice (each
#: row against every column) but writes each vector's row once, where B
#: blocks write up to B partial rows of K and a rows step merges them.
#: Measured on 2 cores, cosine, Zipf vectors of ~57 entries, wall, one block /
#: the default B = 3: 20,000 vectors, top-10 4.4-4.7 / 4.3-4.7 s, top-30 4.6 /
#: 5.6 s, top-60 5.1 / 6.2 s, top-100 4.3 / 6.5 s; 50,000 vectors, top-10
#: 22.1 / 16.2 s, top-100 22.2 / 23.8 s.  Up to
#: :data:`~mrjobs.pairs.fused.TRIANGLE_MAX_K` the threads compute each pair
#: once, and one block pays up to :data:`TRIANGLE_MAX_ENTRIES` (20,000
#: vectors, top-10: 3.2 / 3.8 s)
ONE_BLOCK_VECTORS_PER_K = 800


def whole_rows(o):
    """Whether one block's pair reducer would score its pairs on the cores
    (:class:`mrjobs.pairs.kernel.PairSpec` ``threads``): the inline or local
    runner with more than one core (``--pair-threads``' default), a
    self-join with ``--top-k``, a measure the C kernel scores (dot, cosine,
    pearson), no pruning ``--threshold``, no ``--include-self`` above
    :data:`~mrjobs.pairs.fused.TRIANGLE_MAX_K`.  ``o``: the job's options (or
    the planner's)."""
    from mrjobs import _c
    from mrjobs.pairs.fused import TRIANGLE_MAX_K
    from mrjobs.scoring import Scorer
    runner = getattr(o, "runner", None) or "inline"
    threads = getattr(o, "pair_threads", None) or min(cores(o.num_cores), MAX_PAIR_THREADS)
    return (runner in ("inline", "local") and threads > 1 and _c.C is not None
            and o.top_k is not None and not o.queries
            and (not o.include_self or o.top_k <= TRIANGLE_MAX_K)
            and (o.threshold is None or getattr(o, "no_prune", False))
            and Scorer(o.measure, None).fused() is not None)


#: with whole rows on the cores (:func:`whole_rows`) and a ``--top-k`` past
#: :data:`ROWS_OVER_INPUT` times a vector's entries (:func:`rows_outweigh`),
#: the entries up to which one block beats the few that memory asks for: the
#: blocks' partial rows (n·K entries each) cost more than computing every
#: pair twice, and the one block's reducer grows slowly with its entries.
#: Measured on 2 cores, cosine, top-1000, local runner, wall / temporary disk
#: / largest process: 50,000 Zipf vectors (2.5 M entries), one block 19.2 s /
#: 62 MB / 520 MB, two blocks 42.8 s / 4.84 GB / 2.39 GB (the sort of 2.45 GB
#: of partial rows), the same bytes; 70,000 (3.5 M), one block 34.7 s / 585
#: MB; 100,000 (5.0 M, estimated 5.7 M from the input's size), one block
#: 62.0 s / 638 MB, three blocks 106.3 s / 14.2 GB / 7.18 GB.  (Top-100 on
#: 50,000, not past: one block 11.09 s, three 11.14 s.)
WHOLE_ROWS_MAX_ENTRIES = 3 * DEFAULT_BLOCK_ENTRIES

#: with the threads' triangle (:func:`whole_rows`, ``--top-k`` up to
#: :data:`~mrjobs.pairs.fused.TRIANGLE_MAX_K`), the entries up to which one
#: block beats the few that memory asks for: B blocks send each vector B
#: times through the sort (B times the temporary disk) and add a rows step,
#: while one block's column buffers and accumulators outgrow the caches as
#: it grows.  Measured on 2 cores, cosine, top-10, local runner, one block /
#: the default three: 50,000 Zipf vectors (2.5 M entries, 2.8 M estimated
#: from the input's size) 5.8-6.0 / 6.35-6.8 s (455 / 292 MB the largest
#: process), with ``--max-df 1000`` 2.9-3.3 / 4.1 s; 70,000 (3.5 M) 10.9-11.1 /
#: 10.95-11.0 s; 100,000 (5.0 M) 26.0 / 22.5 s.  The same bytes.
TRIANGLE_MAX_ENTRIES = 3_000_000


def one_block_pays(entries, top_k, entries_per_vector):
    """With :func:`whole_rows`: whether one block beats more: up to
    :data:`~mrjobs.pairs.fused.TRIANGLE_MAX_K`, where it holds at most
    :data:`TRIANGLE_MAX_ENTRIES`; else where it holds at most
    :data:`DEFAULT_BLOCK_ENTRIES` below :data:`ONE_BLOCK_VECTORS_PER_K`; past
    :func:`rows_outweigh`, up to :data:`WHOLE_ROWS_MAX_ENTRIES`.

    >>> one_block_pays(1_100_000, 100, 55), one_block_pays(2_800_000, 10, 55)
    (True, True)
    >>> one_block_pays(1_100_000, 21, 55), one_block_pays(3_500_000, 10, 55)
    (False, False)
    >>> one_block_pays(5_000_000, 1000, 55), one_block_pays(6_500_000, 1000, 55)
    (True, False)
    """
    from mrjobs.pairs.fused import TRIANGLE_MAX_K
    if not (top_k and entries_per_vector):
        return False
    if rows_outweigh(top_k, entries_per_vector) and entries <= WHOLE_ROWS_MAX_ENTRIES:
        return True
    if top_k <= TRIANGLE_MAX_K:
        return entries <= TRIANGLE_MAX_ENTRIES
    return (entries <= DEFAULT_BLOCK_ENTRIES
            and entries / entries_per_vector < ONE_BLOCK_VECTORS_PER_K * top_k)


def default_blocks(input_bytes, n, buffer_entries=1000000,
                   input_bytes_per_entry=INPUT_BYTES_PER_ENTRY, top_k=None,
                   entries_per_vector=None, whole=False, size=DEFAULT_BLOCK_ENTRIES):
    """``--blocks`` when it is not given: from the input's bytes (None: not
    local files; ``input_bytes_per_entry``: :func:`bytes_per_entry`), the
    runner's ``n`` reduce tasks (:func:`reducers`), ``--top-k`` against a
    vector's entries (:func:`estimate_blocks`; ``whole``: see
    :func:`one_block_pays`) and blocks of at most ``size`` entries (see
    :mod:`mrjobs.strategies.containers`), at most :data:`MAX_BLOCKS`; logged.

    >>> default_blocks(10_000, reducers("local", 2)), default_blocks(None, reducers("inline"))
    (1, 8)
    """
    if input_bytes is None:
        blocks = max(estimate_blocks(0, n), 8)
        log.info("blocks strategy: %d blocks (input size unknown: not local files; "
                 "set --blocks N for your corpus)", blocks)
        return blocks
    entries = input_bytes // input_bytes_per_entry
    blocks = estimate_blocks(entries, n, size, top_k=top_k,
                             entries_per_vector=entries_per_vector)
    if blocks > 1 and whole and one_block_pays(entries, top_k, entries_per_vector):
        log.info("blocks strategy: --top-k %d for ~%.0f vectors: one block, its pairs on "
                 "the cores, each vector's row written once (no rows step)", top_k,
                 entries / entries_per_vector)
        blocks = 1
    elif blocks < estimate_blocks(entries, n, size):
        log.info("blocks strategy: --top-k %d is more than %d times a vector's ~%.0f "
                 "entries: fewer blocks, fewer partial rows", top_k, ROWS_OVER_INPUT,
                 entries_per_vector)
    if blocks > MAX_BLOCKS:  # an input over ~900 GB: the job's own limit
        log.warning("blocks strategy: %d blocks would suit this input, more than the "
                    "job takes (%d): using %d; each block-pair reducer then holds more "
                    "(plan with python -m mrjobs.plan)", blocks, MAX_BLOCKS, MAX_BLOCKS)
        blocks = MAX_BLOCKS
    log.info("blocks strategy: %d block(s) of up to %d entries, %d block pair(s), for ~%d "
             "entries (%d input bytes); each block-pair reducer needs about %d MB (--blocks "
             "N to change)", blocks, size, blocks * (blocks + 1) // 2, entries, input_bytes,
             pair_memory_bytes(entries, blocks, buffer_entries) // 2**20)
    return blocks


# -- the input's bytes of data ------------------------------------------------------

#: the names mrjob reads decompressed (``mrjob.cat.decompress``: by the name's end)
COMPRESSED = (".gz", ".bz2")
#: compressed bytes a file's uncompressed size is estimated from (a file up to
#: this size is decompressed whole: its size is then exact)
HEAD_BYTES = 1 << 20
#: how near the head's ratio a gzip trailer's size must be to be taken as the
#: file's (see :func:`data_bytes`)
ISIZE_AGREES = 0.1


def _members(path):
    """A reader of every member (gzip) or stream (bz2) of ``path``, as the
    job's runners read it (:mod:`mrjobs.runtime.compressed`)."""
    from mrjobs.runtime.compressed import Members
    return Members("gzip" if path.endswith(".gz") else "bz2", path)


def open_data(path, chunk=1 << 20):
    """The bytes of data of the local file ``path``, in chunks, as the job
    reads it: a ``.gz`` or ``.bz2`` file decompressed (every member or
    stream), any other as it is.  A corrupt or truncated compressed file
    raises :class:`OSError` (one line naming the file)."""
    with open(path, "rb") as f:
        chunks = iter(lambda: f.read(chunk), b"")
        yield from _members(path).pieces(chunks) if path.endswith(COMPRESSED) else chunks


def data_bytes(path):
    """Bytes of data of the local file ``path``: its size, or for a
    compressed file (:data:`COMPRESSED`) its uncompressed size, estimated.

    A compressed file of at most :data:`HEAD_BYTES` is decompressed whole
    (exact; a corrupt one is sized by its bytes: the job says what is wrong
    with it).  Of a larger one, its first :data:`HEAD_BYTES` are
    decompressed, every member they hold, and their ratio scales the file's
    size: a fair estimate for a corpus of like lines.  A gzip file's trailer
    holds the size (mod 2^32, ISIZE) of its *last* member only: the file's
    exact size where it has one member, a fraction of it where it has more.
    So it is taken (the one of ``ISIZE + m 2^32`` nearest the ratio's
    estimate) only where the head saw no member end and it agrees with the
    ratio within :data:`ISIZE_AGREES`; a file of several members (``cat
    a.gz b.gz``, bgzip, ``pigz --independent``) gets the ratio's estimate,
    unless its last member holds nearly all of its data (then ISIZE is within
    about that much of the truth)."""
    size = os.path.getsize(path)
    if not path.endswith(COMPRESSED):
        return size
    m = _members(path)
    with open(path, "rb") as f:
        try:
            for _ in m.pieces(_head(f, HEAD_BYTES), whole=size <= HEAD_BYTES):
                pass
        except OSError:
            return size
        read = f.tell()
    if read >= size:
        return m.out_bytes
    estimate = m.out_bytes * size / max(read, 1)
    if path.endswith(".gz") and m.members == 1:
        exact = _gzip_isize_near(path, estimate)
        if exact is not None and abs(exact - estimate) <= ISIZE_AGREES * estimate:
            return exact
    return int(estimate)


def _head(f, limit, chunk=1 << 16):
    """The first ``limit`` bytes of the file object ``f``, in chunks."""
    while f.tell() < limit:
        raw = f.read(min(chunk, limit - f.tell()))
        if not raw:
            return
        yield raw


def _gzip_isize_near(path, estimate):
    """Of the sizes a gzip file's trailer allows (``ISIZE + m 2^32``), the
    one nearest ``estimate``; None where the trailer cannot be read."""
    with open(path, "rb") as f:
        f.seek(-4, os.SEEK_END)
        tail = f.read(4)
    if len(tail) < 4:
        return None
    isize = struct.unpack("<I", tail)[0]
    m = max(0, round((estimate - isize) / 2.0 ** 32))
    return isize + m * 2 ** 32


def input_data_bytes(paths):
    """Bytes of data of the local input ``paths`` (files, directories,
    globs): :func:`data_bytes` summed; None where one is not a local path,
    is stdin or is no regular file.  What the job's default block count and
    the temp-disk check are sized from (mrjob's runners read a compressed
    file decompressed, and copy it so into the first step's splits)."""
    from mrjobs.runtime.paths import local_input_files
    files = local_input_files(paths)
    if files is None:
        return None
    return sum(data_bytes(f) for f in files)


def data_first_line(paths, limit=1 << 16):
    """The first line (at most ``limit`` bytes) of the data of the first of
    the local input files in name order (decompressed as the job reads it);
    None where that is not known (a path not local, stdin, no regular file,
    a file that cannot be read or decompressed)."""
    from mrjobs.runtime.paths import local_input_files
    files = local_input_files(paths)
    if not files:
        return None
    head = b""
    try:
        for chunk in open_data(files[0], 1 << 16):
            head += chunk
            if b"\n" in head or len(head) >= limit:
                break
    except OSError:
        return None
    return head[:limit].split(b"\n", 1)[0]
