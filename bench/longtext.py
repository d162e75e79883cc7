"""Long documents: the job against both peers on a real corpus of long
documents (:mod:`bench.textcorpus`, 4,000 manual pages, documentation files
and standard-library docstrings of this machine, about 200 distinct terms
each, tf-idf), cosine ``--top-k 10``, end to end from the same JSON file; the
job from its compact records too; and ``--threshold 0.5`` pruned against
``--no-prune``.

The runs and their comparisons are :mod:`bench.shorttext`'s (the job on the
local runner, 2 cores, the whole process tree's CPU; each peer's script on 2
threads), best of ``--passes`` (default 3: a run takes a second or two).  Rows
of issue "Real text" with PASS/FAIL:

* the job's wall at most each peer's (top-10 from JSON);
* from the compact records at most 0.8x the job's own time from JSON;
* ``--threshold 0.5``: pruned at least 2x faster than ``--no-prune``, the same bytes.

``python -m bench.longtext`` prints the table and writes
``bench/results/longtext.json``; ``--quick`` (or ``BENCH_QUICK=1``): 400
documents.
"""
import sys
import tempfile

from bench import common, shorttext, textcorpus
from bench.peer_runs import PEERS

#: documents of the corpus (quick: QUICK_DOCUMENTS)
DOCUMENTS, QUICK_DOCUMENTS = 4000, 400


def checks(rows):
    """The targets' rows (:func:`bench.shorttext.checks`): the job's wall
    against both peers'."""
    return shorttext.checks(rows, "long", PEERS, cpu=False)


def main(argv=None):
    ap = common.arg_parser("python -m bench.longtext", __doc__, "longtext.json")
    ap.add_argument("--passes", type=int, default=3, help="best of N runs of each")
    o = common.parse(ap, argv)
    log = common.logger()
    corpus, _ = textcorpus.build(QUICK_DOCUMENTS if o.quick else DOCUMENTS)
    with tempfile.TemporaryDirectory(prefix="mrsparse-bench-longtext-") as tmp:
        rows = shorttext.rows_for(corpus, tmp, log, o.passes)
    return shorttext.report("longtext", rows, checks(rows), o.out, "Long documents (%s, "
                            "cosine top-%d)" % (corpus.name, shorttext.TOP_K), "{:.2f}")


if __name__ == "__main__":
    sys.exit(main())
