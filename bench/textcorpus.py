"""A real text corpus from what is on this machine: documents x terms, tf-idf.

Documents: the manual pages under ``/usr/share/man`` and the files under
``/usr/share/doc`` (one a file, gzip read as text), and the docstrings of the
running Python's standard library.  Files are taken in the order of their
path's UUID, so the first ``n`` documents mix all three; a document with fewer
than ``MIN_TERMS`` distinct terms, or the term counts of an earlier one, is
skipped.  Ids: ``uuid5(NAMESPACE, "<path>#<index>")`` for a document,
``uuid5(NAMESPACE, term)`` for a feature; weights ``(1 + ln tf) * (1 + ln((1
+ N) / (1 + df)))``.  Written in the job's JSON input format and as CSR arrays
(``.npz``), cached under ``.cache/bench/``: ``python -m bench.textcorpus N``.

With ``paragraphs=True`` (``python -m bench.textcorpus N --paragraphs``) a
document is one paragraph of those texts (split at blank lines): short
documents, a few dozen terms each, where the pruning bounds of
``mrjobs.pairs.pruning`` bite.
"""
import ast
import gzip
import hashlib
import json
import re
import sys
import sysconfig
import uuid
from collections import Counter
from pathlib import Path

import numpy as np

from bench import common

NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/mrsparse/bench/textcorpus")
MIN_TERMS = 5
ROOTS = ("/usr/share/man", "/usr/share/doc")
CACHE = common.REPO_ROOT / ".cache" / "bench"
_TERM = re.compile(r"[^\W\d_][\w']*[^\W_]|[^\W\d_]{2}")
_ROFF = re.compile(r"\\(?:f[A-Z0-9]|f\(..|f\[[^]]*\]|\(..|\[[^]]*\]|\*.|s[-+]?\d|.)")


def source_files(roots=ROOTS, stdlib=True):
    """``[(uuid, path)]`` of the source files, in the order documents are taken."""
    paths = [p for root in roots for p in Path(root).rglob("*")]
    if stdlib:
        paths += Path(sysconfig.get_paths()["stdlib"]).rglob("*.py")
    keyed = [(uuid.uuid5(NAMESPACE, str(p)), p) for p in paths
             if p.is_file() and "site-packages" not in p.parts]
    return sorted(keyed, key=lambda t: t[0].bytes)


def _read_text(path):
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    if b"\0" in raw[:4096]:
        return None  # binary
    return raw.decode("utf-8", "replace")


def documents(path):
    """The texts of one source file: its docstrings (``.py``), else the file."""
    try:
        text = _read_text(path)
    except (OSError, EOFError, gzip.BadGzipFile):
        return []
    if text is None:
        return []
    if path.suffix != ".py":
        return [_ROFF.sub(" ", text) if "/man/" in str(path) else text]
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return [d for node in ast.walk(tree) if isinstance(node, kinds)
            for d in [ast.get_docstring(node)] if d]


_PARAGRAPH = re.compile(r"\n[ \t]*\n")


def paragraphs_of(path):
    """The paragraphs (split at blank lines) of the texts of one source file."""
    return [p for text in documents(path) for p in _PARAGRAPH.split(text)]


def term_counter(text):
    """The terms of ``text`` (lower-cased) and their counts.

    >>> sorted(term_counter("The cat's cats, the CAT.").items())
    [('cat', 1), ("cat's", 1), ('cats', 1), ('the', 2)]
    """
    return Counter(_TERM.findall(text.lower()))


def term_counts(n, files, split=documents):
    """The first ``n`` documents: ``[(doc uuid, Counter of terms)]``."""
    out, seen = [], set()
    for _, path in files:
        for i, text in enumerate(split(path)):
            counts = term_counter(text)
            digest = hashlib.sha256(repr(sorted(counts.items())).encode()).digest()
            if len(counts) < MIN_TERMS or digest in seen:
                continue
            seen.add(digest)
            out.append((uuid.uuid5(NAMESPACE, "%s#%d" % (path, i)), counts))
            if len(out) == n:
                return out
    raise ValueError("only %d documents with %d terms or more on this machine, %d asked"
                     % (len(out), MIN_TERMS, n))


def tfidf_arrays(docs):
    """CSR arrays (``doc_ids``, ``feature_ids``, ``indptr``, ``indices``,
    ``weights``) of the documents; features in the order of their UUID."""
    terms = sorted({t for _, c in docs for t in c})
    fids = np.array([uuid.uuid5(NAMESPACE, t).bytes for t in terms], "S16")
    order = np.argsort(fids, kind="stable")
    rank = dict(zip((terms[i] for i in order), range(len(terms))))
    indptr = np.cumsum([0] + [len(c) for _, c in docs])
    indices = np.fromiter((rank[t] for _, c in docs for t in c), np.int64, indptr[-1])
    tf = np.fromiter((x for _, c in docs for x in c.values()), np.float64, indptr[-1])
    df = np.bincount(indices, minlength=len(terms))
    weights = (1 + np.log(tf)) * (1 + np.log((1 + len(docs)) / (1 + df[indices])))
    for s, e in zip(indptr[:-1], indptr[1:]):  # sorted within each vector
        o = np.argsort(indices[s:e])
        indices[s:e], weights[s:e] = indices[s:e][o], weights[s:e][o]
    doc_ids = np.frombuffer(b"".join(u.bytes for u, _ in docs), np.uint8).reshape(-1, 16)
    return {"doc_ids": doc_ids, "feature_ids": fids[order].view(np.uint8).reshape(-1, 16),
            "indptr": indptr, "indices": indices, "weights": weights}


def write_jsonl(arrays, path):
    """The corpus as the job's JSON input lines."""
    fids = [str(uuid.UUID(bytes=b.tobytes())) for b in arrays["feature_ids"]]
    ptr, idx, w = arrays["indptr"], arrays["indices"].tolist(), arrays["weights"].tolist()
    with open(path, "w", encoding="ascii") as f:
        for i, raw in enumerate(arrays["doc_ids"]):
            feats = {fids[j]: x for j, x in zip(idx[ptr[i]:ptr[i + 1]], w[ptr[i]:ptr[i + 1]])}
            f.write(json.dumps({"id": str(uuid.UUID(bytes=raw.tobytes())),
                                "features": feats}) + "\n")


def build(n, cache=CACHE, roots=ROOTS, stdlib=True, paragraphs=False):
    """Paths ``(jsonl, npz)`` of the ``n``-document corpus (of ``n`` paragraphs
    with ``paragraphs``), built once and cached."""
    files = source_files(roots, stdlib)
    key = hashlib.sha256("\n".join("%s %d" % (p, p.stat().st_size) for _, p in files)
                         .encode()).hexdigest()[:12]
    kind = "para" if paragraphs else "text"
    jsonl = Path(cache) / ("%s-%d-%s.jsonl" % (kind, n, key))
    npz = jsonl.with_suffix(".npz")
    if not (jsonl.exists() and npz.exists()):
        jsonl.parent.mkdir(parents=True, exist_ok=True)
        split = paragraphs_of if paragraphs else documents
        arrays = tfidf_arrays(term_counts(n, files, split))
        write_jsonl(arrays, jsonl.with_suffix(".tmp"))
        np.savez(npz.with_suffix(".tmp.npz"), **arrays)
        npz.with_suffix(".tmp.npz").replace(npz)
        jsonl.with_suffix(".tmp").replace(jsonl)
    return jsonl, npz


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--paragraphs"]
    print(*build(int(args[0]) if args else 20000, paragraphs="--paragraphs" in sys.argv[1:]),
          sep="\n")
