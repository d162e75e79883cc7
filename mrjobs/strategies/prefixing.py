"""Prefix filtering for the prefix strategy (:mod:`mrjobs.strategies.prefix`):
each vector's *prefix*, the records that send it to its prefix features, and
the test that scores each pair at one feature only.

The order
    Features are ordered globally by ``(df, UUID)``: the rarest first.  A
    vector's entries, put in that order, have a *prefix* (its first ``p``
    entries) and a *suffix* (the rest), with ``p`` the smallest such that the
    suffix alone cannot reach ``--threshold`` with any vector:
    ``bound(D(suffix)) < threshold``, ``D`` an upper bound on the dot product
    of the suffix with any vector (:func:`suffix_dot_bounds`) and ``bound``
    the measure's score bound (:func:`mrjobs.pairs.cellbounds.score_bounds`).
The proof
    Let ``x`` and ``y`` score at least the threshold, and ``f`` be the first
    feature they share in the global order.  If ``f`` were in ``x``'s suffix,
    every shared feature would be (they come after ``f``), so
    ``x.y <= D(suffix of x)`` and the score would be below the threshold.  So
    ``f`` is in the prefixes of both: the reducer of ``f``, which gets every
    vector whose prefix holds ``f``, meets the pair.  It scores it there and
    nowhere else: a reducer of a later shared prefix feature ``g`` sees that
    ``x`` and ``y`` share a prefix feature before ``g`` (``f``) and drops the
    pair (:func:`shared_earlier`).  Each pair that can reach the threshold is
    scored once, over the whole of both vectors, in the feature order of the
    blocks strategy: the same dot products, bit for bit.
The bound ``D``
    The measures whose prepared vectors have unit norm (``cosine``,
    ``pearson``, ``tanimoto``, ``euclidean``): ``|x_S| |y| <= |x_S|``
    (Cauchy-Schwarz).  The binary ones (``jaccard``, ``overlap``,
    ``cooccurrence``, ``cityblock``): ``|S|``, the suffix's entries.  Sums of
    squares are taken in fixed point (each square rounded up to a multiple of
    ``2**-40``, summed exactly in int64), so the bound is never below the
    exact one; it is then raised as :func:`mrjobs.pairs.cellbounds.dot_bounds`
    raises its bounds, against the rounding of the job's own dot product.
    ``dot``, ``correlation`` and ``loglikelihood`` have no bound that holds
    for any partner (:data:`SUPPORTED`).
Without earlier features
    Where no prepared weight is negative (binary weights; or the df run saw
    no negative weight in the input: the launcher's ``--nonnegative``) and
    the measure is one of :data:`REPEATABLE`, a copy carries no earlier
    prefix features, and a pair is scored at every prefix feature its
    vectors share.  At a later one ``g`` the copies hold their vectors from
    ``g`` on: the sum is over some of the whole's terms, in the same order,
    each term at least 0, so it is never above the whole's sum in floating
    point either (a rounded sum never falls as a term of at least 0 is
    added, and never rises as the sum it adds to falls), and neither is its
    score.  The rows step keeps each pair's best score
    (:class:`mrjobs.scoring.RowMerger`, ``repeats``): the one of its first
    shared feature, the whole's.  Under ``--top-k`` too: a pair ``(x, y)``
    of ``x``'s top k is among ``x``'s k best at its first shared feature
    (were k others better there, their whole scores, at least as high,
    would put it out of the top k), and a neighbour's best is never above
    its whole score, so none takes a place that is not its own.  What that
    costs: the pairs met again whose part reaches the threshold (and makes
    a vector's k best there) go through the rows step's shuffle twice or
    more; what it saves: each copy's earlier features (a record of them a
    key and map task), about a fifth of the pair step's bytes on short text,
    and under ``--top-k`` the copies' entries before their feature.
"""
import hashlib
import struct
import zlib

import numpy as np

from mrcodecs.jobwire import Block
from mrjobs.pairs.cellbounds import DOT_SLACK, DOT_TINY, score_bounds
from mrjobs import measures

__all__ = ["SUPPORTED", "HOT_VECTORS", "supports", "global_order", "prefix_lengths",
           "suffix_dot_bounds", "REPEATABLE", "repeats", "PrefixBuffer", "shared_earlier", "entry_vectors", "split_of",
           "parts_of", "sub_blocks", "feature_hash", "split_feature"]

#: prepared weights -> (bound on any vector's norm, on any entry's magnitude)
_WEIGHT_BOUNDS = {"unit": (1.0, 1.0), "centred_unit": (1.0, 1.0), "binary": (None, 1.0)}
#: statistic -> its smallest and largest value over any vector of a job
_STAT_RANGE = {"count": (1.0, np.inf)}
#: measures the prefix strategy can take: a bound on any partner's weights and a score bound
SUPPORTED = frozenset(m.name for m in measures.REGISTRY.values()
                      if m.bound is not None and m.weights in _WEIGHT_BOUNDS)
#: measures whose score never falls as the dot product rises, in floating
#: point too (each step of :mod:`mrjobs.measures.scores` rounds monotonically:
#: products, sums and quotients of values of one sign): a pair met again at
#: a later prefix feature, from part of its vectors, scores at most its
#: whole's score where no weight is negative.  Not ``euclidean`` (its score
#: goes through ``exp`` and ``log``, whose rounding numpy does not promise to
#: be monotone) nor ``pearson`` (centred weights are negative)
REPEATABLE = frozenset({"cosine", "tanimoto", "jaccard", "overlap", "cityblock",
                        "cooccurrence"})
_FIXED = 2.0 ** 40
#: a prefix feature held by more vectors than this is split: its vectors go to
#: ``s = ceil(df / HOT_VECTORS)`` parts by their id, and each pair of parts
#: (``s (s + 1) / 2`` keys) to a reducer of its own, so that no feature's
#: reducer scores more than about ``2 HOT_VECTORS^2`` products (2·10^10, a few
#: minutes of one core; splitting smaller groups costs more copies than it
#: saves: for 10^8 WordNet-like documents at 0.5 the planner put 10,000 at
#: 4.6 TB and 29 h, 100,000 at 1.6 TB and 14 h)
HOT_VECTORS = 100_000
#: byte 9 of a split feature's keys: 9 bytes of the feature's BLAKE2b hash
#: (:func:`feature_hash`), this, then the parts ``s``, ``a <= b`` as
#: big-endian uint16; a feature whose own byte 9 is this is sent as a split of
#: one part, so that no feature's own key reads as a split key
_SPLIT = 0xFE
_MAX_PARTS = 65535
#: vectors a buffer holds at most: their fixed-point sums of squares (each at
#: most about 2**40) stay within int64
_MAX_VECTORS = 1 << 22


def supports(measure):
    """True if the prefix strategy can take ``measure``.

    >>> supports("cosine"), supports("jaccard"), supports("dot")
    (True, True, False)
    """
    return measure in SUPPORTED


def repeats(measure, nonnegative):
    """True if the copies carry no earlier prefix features, and the rows
    step keeps each pair's best score (see the module doc): a measure of
    :data:`REPEATABLE`, and no prepared weight negative (the input's none,
    ``nonnegative``, or binary weights, each 1).

    >>> repeats("cosine", True), repeats("cosine", False), repeats("jaccard", False)
    (True, False, True)
    """
    return measure in REPEATABLE and (bool(nonnegative)
                                      or measures.get(measure).weights == "binary")


def entry_vectors(lengths):
    """The vector of each entry (int64), for vectors of ``lengths`` entries.

    >>> entry_vectors(np.array([2, 0, 1])).tolist()
    [0, 0, 2]
    """
    return np.repeat(np.arange(lengths.shape[0]), lengths)


def parts_of(df):
    """The parts a prefix feature held by ``df`` vectors is split into (1: not
    split).

    >>> parts_of(np.array([2, HOT_VECTORS, HOT_VECTORS + 1])).tolist()
    [1, 1, 2]
    """
    return np.minimum(np.maximum(1, -(-np.asarray(df, np.int64) // HOT_VECTORS)), _MAX_PARTS)


def sub_blocks(ids, parts):
    """The part of each vector (``S16`` ids) of a feature split into ``parts``."""
    raw = ids.tobytes()
    return np.array([zlib.crc32(raw[i:i + 16]) for i in range(0, len(raw), 16)],
                    np.int64) % parts


def feature_hash(feature):
    """The 9 bytes of a feature's key that name it in its split keys.

    >>> len(feature_hash(bytes(16)))
    9
    """
    return hashlib.blake2b(feature, digest_size=9).digest()


def split_of(key):
    """``(s, a, b)`` of a split feature's key, or None for a feature's own.

    >>> split_of(bytes(9) + bytes([254, 0, 3, 0, 1, 0, 2])), split_of(bytes(16))
    ((3, 1, 2), None)
    """
    return struct.unpack(">HHH", key[10:16]) if key[9] == _SPLIT else None


def _split_copies(keys, owner, ids, df):
    """The copies to split features replicated to their keys: ``(copy index,
    key)`` of each, in copy order."""
    n = keys.shape[0]
    kb = np.frombuffer(keys.tobytes(), np.uint8).reshape(n, 16)
    parts = parts_of(df)
    split = (parts > 1) | (kb[:, 9] == _SPLIT)
    if not split.any():
        return np.arange(n), keys
    rep = np.where(split, parts, 1)
    idx = np.repeat(np.arange(n), rep)
    b = np.arange(idx.shape[0]) - np.repeat(np.cumsum(rep) - rep, rep)
    out = kb[idx].copy()
    sel = split[idx]
    s = parts[idx][sel]
    a = np.zeros(n, np.int64)
    a[split] = sub_blocks(ids[owner[split]], parts[split])
    lo, hi = np.minimum(a[idx][sel], b[sel]), np.maximum(a[idx][sel], b[sel])
    raw = keys.tobytes()
    hashes = {i: feature_hash(raw[16 * i:16 * i + 16]) for i in np.flatnonzero(split).tolist()}
    out[sel, :9] = np.frombuffer(b"".join(hashes[i] for i in idx[sel].tolist()),
                                 np.uint8).reshape(-1, 9)
    out[sel, 9] = _SPLIT
    for col, v in ((10, s), (12, lo), (14, hi)):
        out[sel, col:col + 2] = v.astype(">u2").view(np.uint8).reshape(-1, 2)
    return idx, out.view("S16").ravel()


def global_order(lengths, feats, df):
    """Entry indices that put each vector's entries in the global order
    ``(df, UUID)``, vectors kept in their order."""
    return np.lexsort((feats, df, entry_vectors(lengths)))


def suffix_dot_bounds(measure, lengths, weights):
    """For each entry (entries in the global order), an upper bound on the
    dot product of its vector's suffix starting at it with any vector of
    the job (see the module doc)."""
    norm, _ = _WEIGHT_BOUNDS[measures.get(measure).weights]
    vec = entry_vectors(lengths)
    if norm is None:  # binary: the suffix's entries
        ends = np.cumsum(lengths)
        d = (ends[vec] - np.arange(vec.shape[0])).astype(np.float64)
    else:
        q = np.ceil(np.square(weights.astype(np.float64)) * _FIXED).astype(np.int64)
        total = np.cumsum(q[::-1])[::-1]  # from each entry to the end of the buffer
        ends = np.cumsum(lengths)
        after = np.append(total, 0)[ends][vec]  # what comes after the entry's vector
        with np.errstate(invalid="ignore"):
            d = np.nextafter(np.sqrt((total - after) / _FIXED), np.inf) * norm
    n = lengths[vec].astype(np.float64)
    return d * (1.0 + n * DOT_SLACK) + n * DOT_TINY


def prefix_lengths(measure, threshold, lengths, weights, stats):
    """Each vector's prefix length ``p`` (entries in the global order): the
    entries whose suffix, from them on, can still reach ``threshold``."""
    d = suffix_dot_bounds(measure, lengths, weights)
    vec = entry_vectors(lengths)
    stat = measures.get(measure).stat
    lo, hi = _STAT_RANGE.get(stat, (-np.inf, np.inf))
    row_stats = None if stats is None else stats[vec]
    s = score_bounds(measure, d[:, None], row_stats, np.array([lo]), np.array([hi]))[:, 0]
    # the last entry whose suffix can still reach it, and every entry before
    # (the bounds fall along a vector; this holds even where rounding breaks a tie)
    live = np.flatnonzero(s >= threshold)
    p = np.zeros(lengths.shape[0], np.int64)
    if live.shape[0]:
        starts = np.cumsum(lengths) - lengths
        np.maximum.at(p, vec[live], live - starts[vec[live]] + 1)
    return p


class PrefixBuffer:
    """Whole prepared vectors in, their copies to their prefix features out:
    per feature, one :class:`~mrcodecs.jobwire.Block` of the vectors (side 0)
    and one of their prefix features before it (side 1; weights 0, vectors
    with none left out), both keyed by the feature.  A vector goes only to
    the prefix features that another vector holds too (df >= 2: the first
    feature a pair shares always is one), and, under ``--include-self``, to
    its first prefix feature, where it meets itself; the features before a
    copy's are those of the vector's copies before it.

    A copy holds its vector's entries from its feature on, in the global
    order (``whole``: all of them).  That is enough: a pair is scored at the
    first prefix feature ``f`` its vectors share, and every feature they
    share comes at or after ``f`` (one before it would be in both prefixes,
    a shared prefix feature before ``f``), so the dot product of the two
    copies is that of the whole vectors, its terms in the same order.  The
    pairs dropped there (:func:`shared_earlier`) are scored from part of
    their vectors; their scores are never kept.  Under ``--top-k`` the copies
    are whole: a reducer keeps each vector's best before it drops, and a
    part's score may exceed the whole's where weights are negative.
    ``earlier`` False: no side records, and the copies hold their vectors
    from their feature on under ``--top-k`` too (see "Without earlier
    features" in the module doc).

    Memory: at most ``limit`` entries buffered, plus one vector."""

    def __init__(self, limit, dtype, measure, threshold, include_self=False, whole=False,
                 names=None, earlier=True):
        self.limit, self.dtype = limit, dtype
        self.measure, self.threshold = measure, threshold
        self.include_self = include_self
        self.whole, self.earlier = whole, earlier
        self.names = names
        self.clear()

    def clear(self):
        self.docs, self.lengths, self.feats, self.weights, self.df, self.stats = (
            [], [], [], [], [], [])
        self.n = 0

    def add(self, doc, ids, weights, df, stat):
        """Add one vector (its features by UUID, or by their places in
        ``names``, the df table's ids: then the copies are indexed block
        records; weights, each feature's df); True when the buffer should be
        flushed."""
        self.docs.append(doc)
        self.lengths.append(ids.shape[0])
        self.feats.append(ids)
        self.weights.append(weights)
        self.df.append(df)
        self.stats.append(stat)
        self.n += ids.shape[0]
        return self.n >= self.limit or len(self.docs) >= _MAX_VECTORS

    def flush(self):
        """Yield ``(feature, Block)`` records; return the entries sent and
        the vectors sent nowhere (no pair of theirs can reach the threshold)."""
        if not self.docs:
            return 0, 0
        ids = np.frombuffer(b"".join(self.docs), "S16")
        lengths = np.array(self.lengths, np.int64)
        feats = np.concatenate(self.feats)
        weights = np.concatenate(self.weights).astype(self.dtype, copy=False)
        df = np.concatenate(self.df)
        g = global_order(lengths, feats, df)
        stats = None if self.stats[0] is None else np.array(self.stats, np.float64)
        self.clear()
        p = prefix_lengths(self.measure, self.threshold, lengths, weights[g], stats)
        vec = entry_vectors(lengths)
        j = np.arange(g.shape[0]) - (np.cumsum(lengths) - lengths)[vec]
        # the copies: the prefix features another vector holds too (and,
        # under --include-self, each vector's first, where it meets itself)
        sent = np.flatnonzero((j < p[vec]) & ((df[g] >= 2) | (self.include_self & (j == 0))))
        owner = vec[sent]
        keys = feats[g[sent]] if self.names is None else self.names[feats[g[sent]]]
        # each copy's earlier prefix entries: its vector's copies before it
        # (none sent without earlier features: the rows step keeps a pair's best)
        k = np.arange(sent.shape[0]) - np.searchsorted(owner, owner)
        if not self.earlier:
            k[:] = 0
        copy = np.repeat(np.arange(sent.shape[0]), k)
        at = np.arange(copy.shape[0]) - np.repeat(np.cumsum(k) - k, k)
        earlier = g[sent[copy - k[copy] + at]]
        earlier = earlier[np.lexsort((earlier, copy))]
        e_ptr = np.concatenate(([0], np.cumsum(k)))
        nowhere = ids.shape[0] - np.unique(owner).shape[0]
        # each copy's first entry in the global order; each entry's place in it
        first = np.zeros(sent.shape[0], np.int64) if self.whole else j[sent]
        place = np.empty_like(j)
        place[g] = j
        # the copies to a feature held by many vectors: one to each pair of parts
        idx, keys = _split_copies(keys, owner, ids, df[g[sent]])
        owner, k, e_ptr, first = owner[idx], k[idx], e_ptr[idx], first[idx]
        by_key = np.lexsort((owner, keys))
        vectors = Block(ids, lengths.astype(np.uint32), feats, weights, stats)
        sent = yield from _copies(keys[by_key], owner[by_key], k[by_key], e_ptr[by_key],
                                  first[by_key], place, vectors, earlier)
        return sent, nowhere


def _copies(keys, owner, k, e_start, first, place, v, earlier):
    """The records of :meth:`PrefixBuffer.flush`, one key after the other
    (copy ``c``: its vector's entries whose ``place`` in the global order is
    ``first[c]`` or later, in UUID order; its earlier prefix entries are
    ``earlier[e_start[c]:][:k[c]]``)."""
    if not keys.shape[0]:
        return 0
    starts = np.cumsum(v.lengths, dtype=np.int64) - v.lengths
    bounds = np.flatnonzero(np.append(True, keys[1:] != keys[:-1])).tolist()
    bounds.append(keys.shape[0])
    sent = 0
    raw = keys.tobytes()
    for s, e in zip(bounds[:-1], bounds[1:]):
        vs = owner[s:e]
        n = v.lengths[vs].astype(np.int64)
        idx = np.repeat(starts[vs] - (np.cumsum(n) - n), n) + np.arange(int(n.sum()))
        cut = first[s:e]
        if cut.any():
            idx = idx[place[idx] >= np.repeat(cut, n)]
            n = n - cut
        key = raw[16 * s:16 * s + 16]
        yield key, Block(v.ids[vs], n.astype(np.uint32), v.features[idx], v.weights[idx],
                         None if v.stats is None else v.stats[vs])
        sent += idx.shape[0]
        some = np.flatnonzero(k[s:e]) + s
        if some.shape[0]:
            ks = k[some]
            ex = earlier[np.repeat(e_start[some] - (np.cumsum(ks) - ks), ks)
                         + np.arange(int(ks.sum()))]
            yield key, Block(v.ids[owner[some]], ks.astype(np.uint32), v.features[ex],
                             np.zeros(ex.shape[0], np.float32), side=1)
            sent += ex.shape[0]
    return sent


def shared_earlier(groups, others, earlier_ptr, earlier_cols, n_cols):
    """Mask of the pairs ``(groups[i], others[i])`` whose vectors share a
    prefix feature before the key's: vector ``v``'s such features are the
    columns ``earlier_cols[earlier_ptr[v]:earlier_ptr[v + 1]]``.

    >>> ptr, cols = np.array([0, 1, 2, 2]), np.array([5, 5])
    >>> shared_earlier(np.array([0, 0, 1]), np.array([1, 2, 2]), ptr, cols, 8).tolist()
    [True, False, False]
    """
    if not earlier_cols.shape[0] or not groups.shape[0]:
        return np.zeros(groups.shape[0], bool)
    owner = entry_vectors(np.diff(earlier_ptr))
    keyset = np.sort(owner * n_cols + earlier_cols)
    reps = (earlier_ptr[groups + 1] - earlier_ptr[groups]).astype(np.int64)
    pair = np.repeat(np.arange(groups.shape[0]), reps)
    at = np.arange(pair.shape[0]) - np.repeat(np.cumsum(reps) - reps, reps)
    probe = others[pair].astype(np.int64) * n_cols + earlier_cols[earlier_ptr[groups][pair] + at]
    i = np.minimum(np.searchsorted(keyset, probe), keyset.shape[0] - 1)
    hit = keyset[i] == probe
    return np.bincount(pair[hit], minlength=groups.shape[0]) > 0


def split_feature(key, feats):
    """The feature of a split key among a group's distinct features ``feats``
    (``S16``): the one whose :func:`feature_hash` the key holds.  Raises
    ValueError if none or more than one does (two features' hashes met: a
    chance of about 2^-72 a pair of split features), rather than score two
    features' vectors as one group."""
    raw = np.unique(feats).tobytes()
    found = [raw[i:i + 16] for i in range(0, len(raw), 16)
             if feature_hash(raw[i:i + 16]) == key[:9]]
    if len(found) != 1:
        raise ValueError("the prefix strategy's split key %s names %d features of its "
                         "group, not one: the keys of two split features met"
                         % (key.hex(), len(found)))
    return found[0]
