"""A real corpus of short documents: the glosses of WordNet 3.0 (Princeton
University), from Debian's ``wordnet-base`` package.

One document per synset of ``data.noun``, ``data.verb``, ``data.adj`` and
``data.adv``: its words (lemmas) and its gloss (definition and examples),
terms as :mod:`bench.textcorpus` finds them; synsets with fewer than two
distinct terms, or the term counts of an earlier one, are skipped (117,659
documents, 12.3 distinct terms each on average).  Ids ``uuid5(NAMESPACE,
"<pos>:<offset>")``, features and tf-idf weights as :mod:`bench.textcorpus`
makes them.  The package is fetched with ``apt-get download`` and unpacked
with ``dpkg-deb -x`` under ``.cache/bench/`` (no root needed); the corpus is
written there as JSON lines: ``python -m bench.wordnet``.
"""
import hashlib
import re
import subprocess
import sys
import uuid
from pathlib import Path

from bench import textcorpus

PACKAGE = "wordnet-base"
CACHE = textcorpus.CACHE
NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/mrsparse/bench/wordnet")
PARTS = ("noun", "verb", "adj", "adv")
MIN_TERMS = 2
_SYNSET = re.compile(r"^(\d{8}) ")


def data_dir(cache=CACHE):
    """The unpacked package's ``usr/share/wordnet``, fetched once."""
    root = Path(cache) / PACKAGE
    data = root / "usr" / "share" / "wordnet"
    if not (data / "data.noun").exists():
        root.mkdir(parents=True, exist_ok=True)
        subprocess.run(["apt-get", "download", PACKAGE], cwd=root, check=True,
                       capture_output=True)
        deb = sorted(root.glob(PACKAGE + "_*.deb"))[-1]
        subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    return data


def synsets(data):
    """``[(doc uuid, Counter of terms)]`` of every synset, in file order."""
    out, seen = [], set()
    for part in PARTS:
        with open(data / ("data." + part), encoding="latin-1") as f:
            for line in f:
                m = _SYNSET.match(line)
                if not m:
                    continue  # the license's lines
                head, _, gloss = line.partition("|")
                fields = head.split()
                words = [fields[4 + 2 * i].replace("_", " ")
                         for i in range(int(fields[3], 16))]
                counts = textcorpus.term_counter(" ".join(words) + " " + gloss)
                digest = hashlib.sha256(repr(sorted(counts.items())).encode()).digest()
                if len(counts) < MIN_TERMS or digest in seen:
                    continue
                seen.add(digest)
                out.append((uuid.uuid5(NAMESPACE, "%s:%s" % (part, m.group(1))), counts))
    return out


def build(cache=CACHE):
    """Path of the corpus's JSON lines, built once and cached."""
    path = Path(cache) / "wordnet-glosses.jsonl"
    if not path.exists():
        arrays = textcorpus.tfidf_arrays(synsets(data_dir(cache)))
        textcorpus.write_jsonl(arrays, path.with_suffix(".tmp"))
        path.with_suffix(".tmp").replace(path)
    return path


#: documents of the benchmarks' ``--quick`` runs on this corpus
QUICK_DOCUMENTS = 20000


def first_documents(corpus, directory, n=QUICK_DOCUMENTS):
    """A file in ``directory`` holding the first ``n`` lines of ``corpus``."""
    part = Path(directory) / ("wordnet-%dk.jsonl" % (n // 1000))
    with open(corpus, "rb") as f, open(part, "wb") as g:
        g.writelines(line for _, line in zip(range(n), f))
    return part


if __name__ == "__main__":
    print(build(*sys.argv[1:2]))
