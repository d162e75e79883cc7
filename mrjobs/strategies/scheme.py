"""The blocking scheme of the blocks strategy, in one place.

*Assignment*: a vector belongs to block :func:`block_of` its UUID bytes.
*Routing*: :func:`routes` names the block pairs a block is sent to and on
which side.  *Key layout*: a block pair travels under the raw 16-byte key
:func:`block_pair_key` (bytes in ``codecs/SPEC.md``, next to the
:class:`~mrcodecs.jobwire.Block` record it keys), read back by
:func:`block_pair_of`.  :class:`BlockBuffer` combines whole vectors into
block fragments (in the vectors step's reducers, or in the mappers where
they feed the block pairs).
"""
import zlib

import numpy as np

from mrcodecs import ID_DTYPE
from mrcodecs.jobwire import Block, block_pair_key, block_pair_of

from mrjobs.counters import BLOCK_ENTRIES_SENT, WORK

__all__ = ["block_of", "routes", "all_pairs", "block_pair_key", "block_pair_of", "without",
           "BlockBuffer", "pairs_write_rows"]


def block_of(doc, blocks):
    """The block of a vector: a stable function of its 16 UUID bytes (CRC-32,
    so that sequential and random UUIDs both spread evenly).

    >>> block_of(bytes(16), 4), block_of(bytes(range(16)), 4)
    (1, 0)
    """
    return zlib.crc32(doc) % blocks


def routes(family, block, blocks, query_blocks=None):
    """The block pairs ``(i, j, side)`` that a block of vectors goes to.

    For a self-join (``query_blocks`` None), block ``b`` goes to the pairs
    ``(min(b, c), max(b, c))`` for every block ``c``, as side 1 when ``b`` is
    the pair's second block; under ``--queries``, query block ``q`` (family 0)
    goes to ``(q, c)`` for every corpus block ``c`` as side 0, and corpus
    block ``c`` (family 1) to every ``(q, c)`` as side 1.

    >>> routes(0, 1, 3)
    [(0, 1, 1), (1, 1, 0), (1, 2, 0)]
    >>> routes(1, 1, 3, query_blocks=2)
    [(0, 1, 1), (1, 1, 1)]
    """
    b = block
    if query_blocks is None:
        pairs = [(min(b, c), max(b, c)) for c in range(blocks)]
    elif family == 0:
        pairs = [(b, c) for c in range(blocks)]
    else:
        pairs = [(q, b) for q in range(query_blocks)]
    return [(i, j, 1 if (family == 1 or (b == j and i != j)) else 0) for i, j in pairs]


def all_pairs(blocks, query_blocks=None):
    """Every block pair ``(i, j)`` of the job, in key order (the pairs that
    :func:`routes` sends blocks to).

    >>> all_pairs(3)
    [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]
    >>> all_pairs(2, query_blocks=2)
    [(0, 0), (0, 1), (1, 0), (1, 1)]
    """
    if query_blocks is None:
        return [(i, j) for i in range(blocks) for j in range(i, blocks)]
    return [(q, c) for q in range(query_blocks) for c in range(blocks)]


def pairs_write_rows(blocks, top_k, queries):
    """Whether the block pairs give each vector its whole row, so that the
    pair step writes the output lines itself (no rows step): one block and
    ``--top-k`` in a self-join, where the one diagonal pair gives each vector
    its ``k`` best over the corpus in one result.

    >>> pairs_write_rows(1, 10, False), pairs_write_rows(2, 10, False)
    (True, False)
    >>> pairs_write_rows(1, None, False), pairs_write_rows(1, 10, True)
    (False, False)
    """
    return blocks == 1 and top_k is not None and not queries


def without(cut, ids, lengths, feats, weights, stats):
    """Vectors (ids, lengths, their features, weights, stats or None) without
    the features of ``cut`` (sorted ``S16`` ids), and without the vectors
    left empty (an empty vector has no product with any other).

    >>> import numpy as np
    >>> f = np.array([b"a", b"b", b"b"], "S16")
    >>> out = without(np.array([b"b"], "S16"), np.array([b"x", b"y"], "S16"),
    ...               np.array([2, 1]), f, np.array([1., 2., 3.]), None)
    >>> [a.tolist() for a in out[:4]]
    [[b'x'], [1], [b'a'], [1.0]]
    """
    if cut.shape[0] and feats.shape[0]:
        at = np.minimum(np.searchsorted(cut, feats), cut.shape[0] - 1)
        keep = cut[at] != feats
        if not keep.all():
            vector = np.repeat(np.arange(ids.shape[0]), lengths)
            lengths = np.bincount(vector[keep], minlength=ids.shape[0])
            feats, weights = feats[keep], weights[keep]
    live = lengths > 0
    if not live.all():
        ids, lengths = ids[live], lengths[live]
        stats = None if stats is None else stats[live]
    return ids, lengths, feats, weights, stats


class BlockBuffer:
    """Combining of whole vectors into block fragments (blocks strategy).

    Vectors are added whole, with their family (0: the rows of a pair --
    every vector of a self-join, or the queries; 1: the corpus under
    ``--queries``).  A flush groups them by block and emits one
    :class:`~mrcodecs.jobwire.Block` per block and block pair it belongs to
    (:func:`routes`).  Memory: at most ``limit`` entries plus one vector (each fragment
    is encoded once per pair it is sent to, not copied).
    """

    def __init__(self, limit, dtype, blocks, query_blocks=None):
        self.limit = limit
        self.dtype = dtype
        self.blocks = blocks
        self.query_blocks = query_blocks  # None: self-join
        self.clear()

    def clear(self):
        self.vectors = {}  # (family, block) -> [docs, lengths, feats, weights, stats]
        self.n = 0

    def add(self, doc, family, ids, weights, stat):
        """Add one vector; True when the buffer should be flushed."""
        nb = self.blocks if family or self.query_blocks is None else self.query_blocks
        key = (family, block_of(doc, nb))
        parts = self.vectors.get(key)
        if parts is None:
            parts = self.vectors[key] = ([], [], [], [], [])
        parts[0].append(doc)
        parts[1].append(ids.shape[0])
        parts[2].append(ids)
        parts[3].append(weights)
        parts[4].append(stat)
        self.n += max(ids.shape[0], 1)  # (an empty vector too: the direct form sends it)
        return self.n >= self.limit

    def flush(self, counts, drop=None):
        """Yield the buffered vectors as block records, one per block and
        block pair; with ``drop`` (sorted feature ids), without those features
        and the vectors they leave empty."""
        vectors = self.vectors
        self.clear()
        sent = 0
        for (family, b), (docs, lengths, feats, weights, stats) in sorted(vectors.items()):
            ids = np.frombuffer(b"".join(docs), ID_DTYPE)
            lengths = np.array(lengths, np.uint32)
            feats = np.concatenate(feats)
            weights = np.concatenate(weights).astype(self.dtype, copy=False)
            stats = None if stats[0] is None else np.array(stats, np.float64)
            if drop is not None:
                ids, lengths, feats, weights, stats = without(
                    drop, ids, lengths, feats, weights, stats)
                if not ids.shape[0]:
                    continue
            pairs = routes(family, b, self.blocks, self.query_blocks)
            for i, j, side in pairs:
                yield block_pair_key(i, j), Block(ids, lengths, feats, weights, stats, side)
            sent += feats.shape[0] * len(pairs)
        counts.add(WORK, BLOCK_ENTRIES_SENT, sent)
