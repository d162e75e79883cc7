"""Deterministic generator of synthetic Zipfian sparse-vector corpora.

Usage::

    python -m mrjobs.generate --vectors 20000 --features-per-vector 50 \\
        --vocabulary 100000 --zipf 1.1 --seed 1 -o corpus.jsonl

Feature ranks follow a Zipf law truncated to the vocabulary
(P(rank r) proportional to r^-s); each vector has a Poisson number of
distinct features (mean ``--features-per-vector``), drawn from that law,
with log-normal weights (rounded to 6 decimals).  Vector and feature ids are random
version-4 UUIDs drawn from the same seeded generator, so a given set of
options always yields the same bytes.  ``--edge-cases`` appends the
vectors that tend to break jobs: empty, one-feature, duplicated vectors,
a feature present in every vector, and UUIDs whose bytes include TAB, LF,
CR, the escape byte 0x0B and trailing NULs.

``--queries N --queries-output PATH`` also writes N query vectors over the
corpus's feature ids (the id of each rank depends on ``--seed`` and
``--vectors``: give the corpus's options), drawn
as the corpus's vectors are (same Poisson sizes, Zipf law and weights) from
a generator of their own: the corpus is the same bytes with or without them,
and the queries are the same for the same options.  There is no edge case
among them; a query shares no feature with the corpus only when its draws
give none (an empty query, or only features no corpus vector drew).

The generator streams: it draws 2,000 vectors at a time, each kind of
draw from its own copy of the seeded generator, moved ahead to where that
kind starts, so its memory does not grow with ``--vectors`` (the feature ids
of ``--vocabulary`` are held, about 100 bytes each).

A progress bar (``tqdm``, one of mrsparse's dependencies) is shown on stderr
for large corpora where stderr is a terminal (``--progress`` shows it
anyway, ``--no-progress`` never); where tqdm cannot be imported the
generator runs silently.
"""
import argparse
import sys

import numpy as np

__all__ = ["generate_arrays", "generate_lines", "generate_query_lines", "write_corpus",
           "write_queries", "main"]

_CHUNK = 2000


def _uuid4_bytes(rng, n):
    b = np.frombuffer(rng.bytes(16 * n), np.uint8).reshape(n, 16).copy()
    b[:, 6] = (b[:, 6] & 0x0F) | 0x40
    b[:, 8] = (b[:, 8] & 0x3F) | 0x80
    return b


def _uuid_strings(b):
    h = b.tobytes().hex()
    return ["%s-%s-%s-%s-%s" % (h[p:p + 8], h[p + 8:p + 12], h[p + 12:p + 16],
                                h[p + 16:p + 20], h[p + 20:p + 32])
            for p in range(0, len(h), 32)]


def _clone(rng):
    """A generator in ``rng``'s state (both then draw the same numbers)."""
    twin = np.random.Generator(type(rng.bit_generator)())
    twin.bit_generator.state = rng.bit_generator.state
    return twin


def _skip_ids(rng, n):
    """Move ``rng`` past ``n`` ids, as :func:`_uuid4_bytes` would."""
    if n:
        rng.bit_generator.advance(2 * n)                 # 16 bytes: two 64-bit draws
    else:
        rng.bytes(0)                                     # which draws 32 bits


def _draws(rng, vectors, features_per_vector, features):
    """The vectors' draws from ``rng``, ``_CHUNK`` vectors at a time.

    The draws, in the order the generator takes them: the vector ids (16
    bytes each), ``features`` feature ids (16 bytes each), the vectors'
    Poisson sizes, three uniform numbers per feature plus eight per vector
    (for the Zipfian ranks), a log-normal weight per feature kept.  Each kind
    is read from its own copy of the generator, moved to where that kind
    starts, so no kind is ever held whole: PCG64 takes one 64-bit draw per
    uniform number and per 8 bytes of ids, which ``advance`` skips; the sizes
    are drawn twice (first to count the uniform numbers).

    Returns
    -------
    (feature_rng, chunks)
        The generator placed at the feature ids (None without
        ``features``) and an iterator of ``(ids, sizes, uniform, weight)``:
        each chunk's vector ids (``m`` x 16 uint8), its Poisson sizes, and
        functions drawing ``n`` uniform numbers and ``n`` weights.
    """
    ids_rng = _clone(rng)
    _skip_ids(rng, vectors)
    feature_rng = None
    if features:
        feature_rng = _clone(rng)
        rng.bit_generator.advance(2 * features)
    size_rng = _clone(rng)
    chunk = _CHUNK                                       # (the bytes do not depend on it)
    draws = 0                                            # the uniform numbers, in all
    for start in range(0, vectors, chunk):
        draws += int((3 * rng.poisson(features_per_vector, min(chunk, vectors - start))
                      + 8).sum())
    uniform_rng = rng                                    # after the last size
    weight_rng = _clone(rng)
    weight_rng.bit_generator.advance(draws)

    def chunks():
        for start in range(0, vectors, chunk):
            m = min(chunk, vectors - start)
            yield (_uuid4_bytes(ids_rng, m), size_rng.poisson(features_per_vector, m),
                   uniform_rng.random, lambda n: np.round(weight_rng.lognormal(0.0, 0.5, n), 6))

    return feature_rng, chunks()


def _vector_chunks(rng, vectors, features_per_vector, vocabulary, zipf, with_features=True):
    """``(feature_ids, chunks)``: the vocabulary's ids (vocabulary x 16 uint8,
    None without ``with_features``) and an iterator of CSR chunks ``(doc_ids,
    indptr, indices, weights)`` of at most ``_CHUNK`` vectors each."""
    feature_rng, chunks = _draws(rng, vectors, features_per_vector,
                                 vocabulary if with_features else 0)
    feature_ids = _uuid4_bytes(feature_rng, vocabulary) if with_features else None
    p = np.arange(1, vocabulary + 1, dtype=np.float64) ** -zipf
    cdf = np.cumsum(p)
    cdf /= cdf[-1]

    def csr():
        for doc_ids, counts, uniform, weight in chunks:
            m = counts.shape[0]
            # Draw three times as many ranks as needed and keep each vector's
            # first ``count`` distinct ones, so a vector has ``count`` distinct
            # features (a popular feature would otherwise be drawn twice and
            # collapse).
            draws = 3 * counts + 8
            ranks = np.minimum(np.searchsorted(cdf, uniform(int(draws.sum())), side="right"),
                               vocabulary - 1)
            rows = np.repeat(np.arange(m, dtype=np.int64), draws)
            keys, first = np.unique(rows * vocabulary + ranks, return_index=True)
            keys = keys[np.argsort(first, kind="stable")]    # distinct keys in draw order
            krow = keys // vocabulary
            start = np.zeros(m + 1, np.int64)
            np.cumsum(np.bincount(krow, minlength=m), out=start[1:])
            nth = np.arange(keys.shape[0]) - start[krow]     # position within its vector
            keys = np.sort(keys[nth < counts[krow]])
            rows, indices = np.divmod(keys, vocabulary)
            indptr = np.zeros(m + 1, np.int64)
            np.cumsum(np.bincount(rows, minlength=m), out=indptr[1:])
            yield doc_ids, indptr, indices, weight(keys.shape[0])

    return feature_ids, csr()


def generate_arrays(vectors, features_per_vector=50, vocabulary=100000, zipf=1.1, seed=1):
    """The corpus as arrays (the whole corpus in memory: :func:`generate_lines`
    streams).

    Returns
    -------
    dict
        ``doc_ids`` (vectors x 16 uint8), ``feature_ids`` (vocabulary x 16
        uint8), ``indptr`` (vectors + 1), ``indices`` (feature ranks,
        sorted within each vector), ``weights`` (float64): a CSR matrix.

    Examples
    --------
    >>> a = generate_arrays(3, 4, 10, seed=7)
    >>> a["indptr"].shape, a["doc_ids"].shape
    ((4,), (3, 16))
    """
    feature_ids, chunks = _vector_chunks(np.random.default_rng(seed), vectors,
                                         features_per_vector, vocabulary, zipf)
    return _concatenate(feature_ids, list(chunks))


def _concatenate(feature_ids, chunks):
    indptr = [np.zeros(1, np.int64)]
    for _, ptr, _, _ in chunks:
        indptr.append(ptr[1:] + indptr[-1][-1])
    return dict(doc_ids=np.concatenate([c[0] for c in chunks] or [np.zeros((0, 16), np.uint8)]),
                feature_ids=feature_ids, indptr=np.concatenate(indptr),
                indices=np.concatenate([c[2] for c in chunks] or [np.zeros(0, np.int64)]),
                weights=np.concatenate([c[3] for c in chunks] or [np.zeros(0)]))


def _edge_cases(rng, vocab):
    """The awkward vectors (see the module docstring): ``(extra feature ids,
    extra vector ids, rows(first), common)``, ``rows(first)`` giving the
    appended vectors' ``(indices, weights)`` from the first generated vector's
    (None without one), ``common`` the index of the feature added to every
    non-empty vector."""
    tricky = np.zeros((6, 16), np.uint8)
    tricky[0, :] = 0x09                                  # all TAB
    tricky[1, :] = [0x0A, 0x0D, 0x0B, 0x09] * 4          # LF CR ESC TAB
    tricky[2, :15] = 0x0B                                # escape bytes, trailing NUL
    tricky[3, 0] = 0x0D                                  # CR then NULs
    tricky[4, 15] = 0x0D                                 # trailing CR
    tricky[5, :] = 0x0C
    feats = np.concatenate([tricky[[0, 1, 2, 3]], _uuid4_bytes(rng, 1)])  # some tricky features
    common = vocab + 4                                   # in every vector
    docs = np.concatenate([tricky[5:6], tricky[0:1], tricky[1:2], tricky[2:3], tricky[3:4],
                           tricky[4:5], _uuid4_bytes(rng, 3)])

    def rows(first):
        first = first if first is not None else (np.array([2]), np.array([1.0]))
        return [
            (np.array([], np.int64), np.array([])),                       # empty
            (np.array([0]), np.array([1.5])),                             # one feature
            (np.array([vocab]), np.array([2.0])),                         # tricky feature
            (np.array([1, vocab + 1, vocab + 2]), np.array([0.5, 1.0, 3.0])),
            first,                                                        # duplicate of 0
            first,                                                        # and again
            (np.array([vocab + 3]), np.array([0.25])),                    # tricky feature
            (np.array([], np.int64), np.array([])),                       # empty
            (np.array([3]), np.array([4.0])),                             # one feature
        ]

    return feats, docs, rows, common


def _with_common(chunk, common):
    """A CSR chunk with feature ``common`` (weight 1.0) added to each non-empty
    vector (the last feature: ``common`` is above every other index)."""
    doc_ids, indptr, indices, weights = chunk
    sizes = np.diff(indptr)
    grown = sizes + (sizes > 0)
    new_ptr = np.zeros(indptr.shape[0], np.int64)
    np.cumsum(grown, out=new_ptr[1:])
    old_pos = np.repeat(new_ptr[:-1] - indptr[:-1], sizes) + np.arange(indices.shape[0])
    ix = np.full(new_ptr[-1], common, np.int64)
    w = np.ones(new_ptr[-1])
    ix[old_pos] = indices
    w[old_pos] = weights
    return doc_ids, new_ptr, ix, w


def _edge_chunks(feature_ids, chunks, seed):
    """``(feature_ids, chunks)`` with the edge cases: the common feature in
    every non-empty vector, then the awkward vectors."""
    vocab = feature_ids.shape[0]
    feats, docs, rows, common = _edge_cases(np.random.default_rng([seed, 1]), vocab)

    def edged():
        first = None
        for chunk in chunks:
            _, indptr, indices, weights = chunk
            if first is None and indptr.shape[0] > 1:
                first = (indices[:indptr[1]], weights[:indptr[1]])
            yield _with_common(chunk, common)
        extra = rows(first)
        indptr = np.zeros(len(extra) + 1, np.int64)
        np.cumsum([len(ix) for ix, _ in extra], out=indptr[1:])
        yield _with_common((docs, indptr,
                            np.concatenate([ix for ix, _ in extra]).astype(np.int64),
                            np.concatenate([w for _, w in extra]).astype(np.float64)), common)

    return np.concatenate([feature_ids, feats]), edged()


def _lines(feature_ids, chunks, fmt, bar):
    feats = _uuid_strings(feature_ids)
    for doc_ids, indptr, indices, weights in chunks:
        docs = _uuid_strings(doc_ids)
        indptr, indices, weights = indptr.tolist(), indices.tolist(), weights.tolist()
        for i, doc in enumerate(docs):
            lo, hi = indptr[i], indptr[i + 1]
            if fmt == "json":
                body = ", ".join('"%s": %r' % (feats[j], w)
                                 for j, w in zip(indices[lo:hi], weights[lo:hi]))
                yield '{"id": "%s", "features": {%s}}' % (doc, body)
            else:
                yield "%s\t%s" % (doc, " ".join(
                    "%s:%r" % (feats[j], w) for j, w in zip(indices[lo:hi], weights[lo:hi])))
        if bar is not None:
            bar.update(len(docs))
        del docs, indptr, indices, weights                # before the next chunk is drawn
    if bar is not None:
        bar.close()


def generate_lines(vectors, features_per_vector=50, vocabulary=100000, zipf=1.1, seed=1,
                   fmt="json", edge_cases=False, progress=None):
    """Yield the corpus as input lines (str, without newline), generated
    ``_CHUNK`` vectors at a time: memory does not grow with ``vectors``."""
    feature_ids, chunks = _vector_chunks(np.random.default_rng(seed), vectors,
                                         features_per_vector, vocabulary, zipf)
    if edge_cases:
        feature_ids, chunks = _edge_chunks(feature_ids, chunks, seed)
    yield from _lines(feature_ids, chunks, fmt,
                      _progress(vectors + (9 if edge_cases else 0), progress))


def generate_query_lines(queries, vectors, features_per_vector=50, vocabulary=100000, zipf=1.1,
                         seed=1, fmt="json", progress=None):
    """Yield ``queries`` query vectors over the vocabulary of the corpus that
    :func:`generate_lines` makes with the same arguments (the same feature
    ids), drawn as its vectors are (Poisson sizes, Zipfian ranks, log-normal
    weights) from a generator of their own, seeded with ``[seed, 2]``: the
    corpus is the same with or without queries.  A query shares no feature
    with the corpus only when its draws give none (an empty query, or only
    features no corpus vector drew).

    >>> q = list(generate_query_lines(2, 3, 4, 10, seed=7))
    >>> len(q), q[0].startswith('{"id": ')
    (2, True)
    """
    rng = np.random.default_rng(seed)
    _skip_ids(rng, vectors)                              # the corpus's vector ids
    feature_ids = _uuid4_bytes(rng, vocabulary)
    chunks = _vector_chunks(np.random.default_rng([seed, 2]), queries, features_per_vector,
                            vocabulary, zipf, with_features=False)[1]
    yield from _lines(feature_ids, chunks, fmt, _progress(queries, progress))


def _progress(total, progress):
    if progress is False:
        return None
    if progress is None and (total < 50000 or not _is_terminal(sys.stderr)):
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="vec", file=sys.stderr, desc="generating")


def _is_terminal(stream):
    """True where ``stream`` is a terminal (a log file would keep every ``\\r``
    update of a bar)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _write(path, lines):
    out = sys.stdout if path == "-" else open(path, "w", encoding="utf-8")
    n = 0
    try:
        for line in lines:
            out.write(line)
            out.write("\n")
            n += 1
    finally:
        if out is not sys.stdout:
            out.close()
    return n


def write_corpus(path, **kwargs):
    """Write :func:`generate_lines` to ``path`` ("-" for stdout); return the count."""
    return _write(path, generate_lines(**kwargs))


def write_queries(path, queries, **kwargs):
    """Write :func:`generate_query_lines` to ``path`` ("-" for stdout); return
    the count."""
    return _write(path, generate_query_lines(queries, **kwargs))


def main(argv=None):
    from mrjobs import options  # (its name under the mrsparse command)
    ap = argparse.ArgumentParser(prog=options.PROGRAM or "python -m mrjobs.generate",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--vectors", type=int, default=1000, help="number of vectors (default 1000)")
    ap.add_argument("--features-per-vector", type=float, default=50,
                    help="mean number of distinct features per vector (default 50)")
    ap.add_argument("--vocabulary", type=int, default=100000,
                    help="number of distinct feature UUIDs (default 100000)")
    ap.add_argument("--zipf", type=float, default=1.1, help="Zipf exponent s (default 1.1)")
    ap.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    ap.add_argument("--format", choices=("json", "tsv"), default="json", dest="fmt",
                    help="line format (default json)")
    ap.add_argument("--edge-cases", action="store_true",
                    help="append empty, one-feature and duplicated vectors, a feature in "
                         "every vector and UUIDs with TAB/LF/CR/0x0B bytes")
    ap.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="show a progress bar (default: for 50000 vectors or more, on a "
                         "terminal, if tqdm is installed)")
    ap.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    ap.add_argument("--queries", type=int, metavar="N",
                    help="also write N query vectors over the corpus's feature ids, drawn as "
                         "its vectors are, to --queries-output (the corpus is unchanged)")
    ap.add_argument("--queries-output", metavar="PATH",
                    help="the file of the --queries vectors (\"-\" for stdout)")
    o = ap.parse_args(argv)
    if o.vectors < 0 or o.vocabulary < 1 or o.features_per_vector < 0:
        ap.error("--vectors >= 0, --vocabulary >= 1 and --features-per-vector >= 0 please")
    if (o.queries is None) != (o.queries_output is None):
        ap.error("--queries N and --queries-output PATH go together")
    if o.queries is not None and (o.queries < 0 or o.queries_output == o.output):
        ap.error("--queries >= 0 please, and a --queries-output other than --output")
    kwargs = dict(vectors=o.vectors, features_per_vector=o.features_per_vector,
                  vocabulary=o.vocabulary, zipf=o.zipf, seed=o.seed, fmt=o.fmt,
                  progress=o.progress)
    write_corpus(o.output, edge_cases=o.edge_cases, **kwargs)
    if o.queries is not None:
        write_queries(o.queries_output, o.queries, **kwargs)


if __name__ == "__main__":
    main()
