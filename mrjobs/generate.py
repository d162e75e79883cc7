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

A progress bar is shown on stderr for large corpora when ``tqdm`` is
installed (``pip install mrsparse[examples]``); without it the generator
runs silently.
"""
import argparse
import sys

import numpy as np

__all__ = ["generate_arrays", "generate_lines", "write_corpus", "main"]

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


def generate_arrays(vectors, features_per_vector=50, vocabulary=100000, zipf=1.1, seed=1):
    """The corpus as arrays.

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
    rng = np.random.default_rng(seed)
    doc_ids = _uuid4_bytes(rng, vectors)
    feature_ids = _uuid4_bytes(rng, vocabulary)
    p = np.arange(1, vocabulary + 1, dtype=np.float64) ** -zipf
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    counts = rng.poisson(features_per_vector, vectors)
    # Draw three times as many ranks as needed and keep each vector's first
    # ``count`` distinct ones, so a vector has ``count`` distinct features
    # (a popular feature would otherwise be drawn twice and collapse).
    draws = 3 * counts + 8
    total = int(draws.sum())
    ranks = np.minimum(np.searchsorted(cdf, rng.random(total), side="right"), vocabulary - 1)
    rows = np.repeat(np.arange(vectors, dtype=np.int64), draws)
    keys, first = np.unique(rows * vocabulary + ranks, return_index=True)
    by_draw = np.argsort(first, kind="stable")          # distinct keys in draw order
    keys = keys[by_draw]
    krow = keys // vocabulary
    start = np.zeros(vectors + 1, np.int64)
    np.cumsum(np.bincount(krow, minlength=vectors), out=start[1:])
    nth = np.arange(keys.shape[0]) - start[krow]         # position within its vector
    keys = np.sort(keys[nth < counts[krow]])
    rows, indices = np.divmod(keys, vocabulary)
    indptr = np.zeros(vectors + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=vectors), out=indptr[1:])
    weights = np.round(rng.lognormal(0.0, 0.5, keys.shape[0]), 6)
    return dict(doc_ids=doc_ids, feature_ids=feature_ids, indptr=indptr,
                indices=indices, weights=weights)


def _edge_cases(a, rng):
    """Append the awkward vectors (see the module docstring) to the arrays."""
    tricky = np.zeros((6, 16), np.uint8)
    tricky[0, :] = 0x09                                  # all TAB
    tricky[1, :] = [0x0A, 0x0D, 0x0B, 0x09] * 4          # LF CR ESC TAB
    tricky[2, :15] = 0x0B                                # escape bytes, trailing NUL
    tricky[3, 0] = 0x0D                                  # CR then NULs
    tricky[4, 15] = 0x0D                                 # trailing CR
    tricky[5, :] = 0x0C
    docs = [a["doc_ids"]]
    feats = [a["feature_ids"], tricky[[0, 1, 2, 3]]]     # some tricky features too
    vocab = a["feature_ids"].shape[0]
    rows = [(a["indices"][a["indptr"][i]:a["indptr"][i + 1]],
             a["weights"][a["indptr"][i]:a["indptr"][i + 1]])
            for i in range(a["doc_ids"].shape[0])]
    common = vocab + 4                                   # in every vector
    feats.append(_uuid4_bytes(rng, 1))
    new_docs = [tricky[5:6], tricky[0:1], tricky[1:2], tricky[2:3], tricky[3:4],
                tricky[4:5], _uuid4_bytes(rng, 3)]
    extra = [
        (np.array([], np.int64), np.array([])),                       # empty
        (np.array([0]), np.array([1.5])),                             # one feature
        (np.array([vocab]), np.array([2.0])),                         # tricky feature
        (np.array([1, vocab + 1, vocab + 2]), np.array([0.5, 1.0, 3.0])),
        rows[0] if rows else (np.array([2]), np.array([1.0])),        # duplicate of 0
        rows[0] if rows else (np.array([2]), np.array([1.0])),        # and again
        (np.array([vocab + 3]), np.array([0.25])),                    # tricky feature
        (np.array([], np.int64), np.array([])),                       # empty
        (np.array([3]), np.array([4.0])),                             # one feature
    ]
    rows.extend(extra)
    rows = [(np.append(ix, common), np.append(w, 1.0)) if len(ix) else (ix, w)
            for ix, w in rows]
    docs.extend(new_docs)
    indptr = np.zeros(len(rows) + 1, np.int64)
    np.cumsum([len(ix) for ix, _ in rows], out=indptr[1:])
    return dict(doc_ids=np.concatenate(docs), feature_ids=np.concatenate(feats),
                indptr=indptr, indices=np.concatenate([ix for ix, _ in rows]).astype(np.int64),
                weights=np.concatenate([w for _, w in rows]).astype(np.float64))


def generate_lines(vectors, features_per_vector=50, vocabulary=100000, zipf=1.1, seed=1,
                   fmt="json", edge_cases=False, progress=None):
    """Yield the corpus as input lines (str, without newline)."""
    a = generate_arrays(vectors, features_per_vector, vocabulary, zipf, seed)
    if edge_cases:
        a = _edge_cases(a, np.random.default_rng([seed, 1]))
    docs = _uuid_strings(a["doc_ids"])
    feats = _uuid_strings(a["feature_ids"])
    indptr, indices = a["indptr"].tolist(), a["indices"].tolist()
    weights = a["weights"].tolist()
    n = len(docs)
    bar = _progress(n, progress)
    for start in range(0, n, _CHUNK):
        for i in range(start, min(n, start + _CHUNK)):
            lo, hi = indptr[i], indptr[i + 1]
            if fmt == "json":
                body = ", ".join('"%s": %r' % (feats[j], w)
                                 for j, w in zip(indices[lo:hi], weights[lo:hi]))
                yield '{"id": "%s", "features": {%s}}' % (docs[i], body)
            else:
                yield "%s\t%s" % (docs[i], " ".join(
                    "%s:%r" % (feats[j], w) for j, w in zip(indices[lo:hi], weights[lo:hi])))
        if bar is not None:
            bar.update(min(n, start + _CHUNK) - start)
    if bar is not None:
        bar.close()


def _progress(total, progress):
    if progress is False or (progress is None and total < 50000):
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="vec", file=sys.stderr, desc="generating")


def write_corpus(path, **kwargs):
    """Write :func:`generate_lines` to ``path`` ("-" for stdout); return the count."""
    out = sys.stdout if path == "-" else open(path, "w", encoding="utf-8")
    n = 0
    try:
        for line in generate_lines(**kwargs):
            out.write(line)
            out.write("\n")
            n += 1
    finally:
        if out is not sys.stdout:
            out.close()
    return n


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m mrjobs.generate", description=__doc__.split("\n\n")[0])
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
                    help="show a progress bar (default: for 50000 vectors or more, if tqdm "
                         "is installed)")
    ap.add_argument("-o", "--output", default="-", help="output file (default stdout)")
    o = ap.parse_args(argv)
    if o.vectors < 0 or o.vocabulary < 1 or o.features_per_vector < 0:
        ap.error("--vectors >= 0, --vocabulary >= 1 and --features-per-vector >= 0 please")
    write_corpus(o.output, vectors=o.vectors, features_per_vector=o.features_per_vector,
                 vocabulary=o.vocabulary, zipf=o.zipf, seed=o.seed, fmt=o.fmt,
                 edge_cases=o.edge_cases, progress=o.progress)


if __name__ == "__main__":
    main()
