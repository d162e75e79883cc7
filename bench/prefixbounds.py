"""What prefix filtering could save on a corpus, computed offline with scipy:
the numbers behind the "Scale out" section's reading of its misses.

For each vector (cosine: rows scaled to unit length), its features ordered
rarest first (``(df, UUID)``, the prefix strategy's order), its prefix at a
threshold ``t`` under three bounds on the dot product of its suffix with any
vector: the suffix's norm (the job's), the smaller of that and the sum of
the suffix's weights times each feature's largest weight in the corpus
(All-Pairs' maxweight bound), and the latter with the features one vector
alone holds weighing nothing.  Copies: the prefix features another vector
holds (df >= 2), as the job sends them; entries sent: each copy the whole
vector, or (``truncated``) only its entries from the copy's feature on.
With ``--kth K``: the percentiles of each vector's K-th best cosine over the
corpus (the floor a top-K threshold join would start from; minutes on the
WordNet corpus).

``python -m bench.prefixbounds [CORPUS] [--thresholds 0.5,0.8] [--kth 10]``
(default corpus: :mod:`bench.wordnet`'s glosses); prints, writes nothing.
"""
import argparse
import json

import numpy as np


def unit_rows(path):
    """The corpus's JSON lines as a unit-row CSR matrix, and its feature ids."""
    import scipy.sparse as sp
    fid, rows, cols, vals = {}, [], [], []
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f):
            for k, v in json.loads(line)["features"].items():
                rows.append(i)
                cols.append(fid.setdefault(k, len(fid)))
                vals.append(v)
    m = sp.csr_matrix((vals, (rows, cols)), shape=(i + 1, len(fid)))
    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    return (sp.diags(1 / np.where(norms > 0, norms, 1)) @ m).tocsr(), list(fid)


def copies(m, names, threshold):
    """``{bound: (copies, entries sent, entries sent truncated)}`` at ``threshold``."""
    df = np.diff(m.tocsc().indptr)
    maxw = np.asarray(abs(m).max(axis=0).todense()).ravel()
    rank = np.empty(len(names), np.int64)
    rank[np.lexsort((np.array(names), df))] = np.arange(len(names))
    out = {}
    for bound in ("norm", "maxweight", "maxweight, hapax 0"):
        n_copies = sent = truncated = 0
        for i in range(m.shape[0]):
            c, w = m.indices[m.indptr[i]:m.indptr[i + 1]], m.data[m.indptr[i]:m.indptr[i + 1]]
            o = np.argsort(rank[c])
            c, w = c[o], w[o]
            d = np.sqrt(np.cumsum((w ** 2)[::-1])[::-1])
            if bound != "norm":
                mw = np.where(df[c] > 1, maxw[c], 0.0) if "hapax" in bound else maxw[c]
                d = np.minimum(d, np.cumsum((w * mw)[::-1])[::-1])
            live = np.flatnonzero(d >= threshold)
            p = live[-1] + 1 if live.shape[0] else 0
            at = [j for j in range(p) if df[c[j]] >= 2]
            n_copies += len(at)
            sent += len(at) * c.shape[0]
            truncated += sum(c.shape[0] - j for j in at)
        out[bound] = (n_copies, sent, truncated)
    return out


def kth_best(m, k, chunk=5000):
    """Each row's ``k``-th best cosine with another row (0 with fewer than ``k``)."""
    out = np.zeros(m.shape[0])
    t = m.T.tocsr()
    for s in range(0, m.shape[0], chunk):
        c = (m[s:s + chunk] @ t).tocsr()
        for i in range(c.shape[0]):
            lo, hi = c.indptr[i], c.indptr[i + 1]
            r = c.data[lo:hi][c.indices[lo:hi] != s + i]
            out[s + i] = np.partition(r, -k)[-k] if r.shape[0] >= k else 0.0
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m bench.prefixbounds", description=__doc__)
    ap.add_argument("corpus", nargs="?", help="JSON lines (default: the WordNet glosses)")
    ap.add_argument("--thresholds", default="0.5,0.8")
    ap.add_argument("--kth", type=int, default=None, metavar="K")
    o = ap.parse_args(argv)
    if o.corpus is None:
        from bench import wordnet
        o.corpus = wordnet.build()
    m, names = unit_rows(o.corpus)
    print("%s: %d vectors, %d entries" % (o.corpus, m.shape[0], m.nnz))
    for t in (float(x) for x in o.thresholds.split(",")):
        for bound, (n, sent, trunc) in copies(m, names, t).items():
            print("t=%g %-20s copies %9d  entries sent %10d (%.2fx the entries; "
                  "from the copy's feature on %.2fx)" % (t, bound, n, sent, sent / m.nnz,
                                                         trunc / m.nnz))
    if o.kth:
        kth = kth_best(m, o.kth)
        print("the %d-th best cosine: percentiles 1, 5, 25, 50, 75, 90: %s" % (
            o.kth, ", ".join("%.3f" % p for p in np.percentile(kth, [1, 5, 25, 50, 75, 90]))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
