"""Shared helpers of the job tests: running the job, an independent reader of
the input formats and a scipy oracle for every measure."""
import json
import os
import sys
import uuid

import numpy as np
import scipy.sparse as sp

from examples.generate import generate_lines


def run(args=(), lines=(), strategy=None, job=None, **kw):
    """:func:`mrjobs.testing.run_job` of the dot-products job (or ``job``) on
    ``lines``, with ``--strategy strategy`` unless ``args`` name one."""
    from mrjobs.dot_products import MRSparseDotProducts
    from mrjobs.testing import run_job
    args = list(args)
    if strategy is not None and "--strategy" not in args:
        args += ["--strategy", strategy]
    return run_job(job or MRSparseDotProducts, lines, args, **kw)


def as_dict(result):
    """A job run's output as ``{key: value}``."""
    return dict(result.output)


def corpus(n=300, fpv=8, vocab=1500, seed=3, fmt="json", edge_cases=True):
    return list(generate_lines(n, fpv, vocab, 1.1, seed, fmt=fmt, edge_cases=edge_cases,
                               progress=False))


def read_corpus(lines):
    """(doc UUIDs, CSR matrix, feature UUIDs) from JSON or TSV lines, read with
    the standard library only (duplicates summed, zeros eliminated)."""
    docs, rows = [], []
    for line in lines:
        line = line.strip()
        if not line:
            continue
        if line.startswith("{"):
            obj = json.loads(line, object_pairs_hook=list)
            obj = dict(obj)
            pairs = [(uuid.UUID(k), float(v)) for k, v in obj["features"]]
            doc = uuid.UUID(obj["id"])
        else:
            d, _, rest = line.partition("\t")
            doc = uuid.UUID(d)
            pairs = [(uuid.UUID(t.rsplit(":", 1)[0]), float(t.rsplit(":", 1)[1]))
                     for t in rest.split()]
        docs.append(doc)
        rows.append(pairs)
    feats = sorted({f for pairs in rows for f, _ in pairs})
    col = {f: j for j, f in enumerate(feats)}
    r = [i for i, pairs in enumerate(rows) for _ in pairs]
    c = [col[f] for pairs in rows for f, _ in pairs]
    v = [w for pairs in rows for _, w in pairs]
    X = sp.csr_matrix((v, (r, c)), shape=(len(docs), len(feats)))
    X.sum_duplicates()
    X.eliminate_zeros()
    return docs, X, feats


def oracle(lines, measure="dot", include_self=False, threshold=None, max_df=None,
           queries=None):
    """{doc: {neighbour: score}} computed with scipy (X @ X.T and the formula)."""
    docs, X, feats = read_corpus(list(lines) + list(queries or []))
    nq = 0
    if queries is not None:
        nq = len(read_corpus(queries)[0])
    B = X.copy()
    B.data[:] = 1.0
    nnz = np.asarray(B.sum(axis=1)).ravel()
    sq = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    norms = np.sqrt(sq)
    Xc, Bc = X, B
    if max_df is not None:
        df = np.asarray(B.sum(axis=0)).ravel()
        keep = sp.diags((df <= max_df).astype(float))
        Xc, Bc = X @ keep, B @ keep
    if queries is not None:
        nc = len(docs) - nq
        rows_, cols_ = slice(nc, None), slice(0, nc)
    else:
        rows_ = cols_ = slice(None)
    D = (Xc[rows_] @ Xc[cols_].T).toarray()
    C = (Bc[rows_] @ Bc[cols_].T).toarray()
    ri = np.arange(X.shape[0])[rows_]
    ci = np.arange(X.shape[0])[cols_]
    with np.errstate(divide="ignore", invalid="ignore"):
        if measure == "dot":
            S = D
        elif measure == "cosine":
            S = D / np.outer(norms[ri], norms[ci])
        elif measure == "jaccard":
            S = C / (nnz[ri][:, None] + nnz[ci][None, :] - C)
        elif measure == "overlap":
            S = C / np.minimum(nnz[ri][:, None], nnz[ci][None, :])
        elif measure == "tanimoto":
            S = D / (sq[ri][:, None] + sq[ci][None, :] - D)
    out = {}
    for a, i in enumerate(ri):
        row = {}
        for b in np.flatnonzero(C[a] > 0):
            j = ci[b]
            if queries is None and i == j and not include_self:
                continue
            if queries is not None and docs[i] == docs[j]:
                continue  # a query is never its own neighbour
            if threshold is not None and S[a, b] < threshold:
                continue
            row[docs[j]] = float(S[a, b])
        if row:
            out[docs[i]] = row
    return out


def assert_scores_close(actual, expected, rtol=1e-9, atol=1e-12):
    """Same keys, same neighbours, scores within ``rtol`` relative."""
    assert set(actual) == set(expected), (
        "vectors only in output: %s; only in oracle: %s"
        % (sorted(set(actual) - set(expected))[:5], sorted(set(expected) - set(actual))[:5]))
    for k, row in expected.items():
        got = actual[k]
        assert set(got) == set(row), "neighbours of %s differ" % k
        a = np.array([got[n] for n in row])
        e = np.array([row[n] for n in row])
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg=str(k))


def top_k(expected, k):
    """The oracle's top-k per vector: score descending, ties by UUID bytes."""
    return {d: dict(sorted(row.items(), key=lambda kv: (-kv[1], kv[0].bytes))[:k])
            for d, row in expected.items()}


def bare_python(tmp_path, packages=("numpy", "scipy")):
    """This interpreter without site-packages, plus ``packages`` alone: a
    cluster node with those, without mrjob, mrsparse, setuptools or
    standard-pipes (the tasks must get them from the shipped zips)."""
    import numpy
    site = os.path.dirname(os.path.dirname(numpy.__file__))
    only = tmp_path / ("%s-only" % "-".join(packages))
    only.mkdir()
    for name in packages:
        for entry in (name, name + ".libs"):
            if os.path.exists(os.path.join(site, entry)):
                os.symlink(os.path.join(site, entry), only / entry)
    exe = tmp_path / "bare-python"
    exe.write_text('#!/bin/sh\nPYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}%s" exec %s -S "$@"\n'
                   % (only, os.path.realpath(sys.executable)))
    exe.chmod(0o755)
    return str(exe)
