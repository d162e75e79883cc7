"""The peers: sparse_dot_topn and sp_matmul_rs against the job, end to end and
kernel against kernel.

``python -m bench.peers [--quick] [--only C1,C2] [--kernel-only]``: the end
to end table on the corpora :data:`E2E_CORPORA` names (``bench.jobs``'s;
full: the dense 20,000-vector Zipf corpus and the 4,000-document text
corpus; quick: their 1,000- and 400-vector versions, about a minute in all)
and the kernel table; writes ``peers.json``.  ``make bench`` runs the end to
end part within ``python -m bench.jobs`` (every corpus) and this module with
``--kernel-only``.

*End to end*: :mod:`bench.peer_runs` (run on every corpus of ``python -m
bench.jobs``).

*The kernel alone* (:func:`kernel_rows`; ``python -m bench.peers``): one
diagonal block of the Zipf corpus, as the job's reducer of the block pair
``(b, b)`` builds it (the vectors whose UUID's CRC-32 modulo B is ``b``, rows
in UUID order, features in UUID order, weights prepared for cosine by
:func:`mrjobs.measures.prepare_rows`), and each side's top-10 of every row
over the block, on one thread:

``mrsparse pair_best (C)``
    :func:`mrjobs.pairs.kernel.pair_best` with the job's spec (``k=10``, the
    default ``--buffer-entries``, the diagonal block, both directions): the
    upper triangle's products, scored (cosine), each row's and each column's
    10 best selected.  *Products*: its ``products computed`` counter, the
    pairs above the diagonal that share a feature (each unordered pair once);
    *multiply-adds*: Σ df(df-1)/2 over the block's features (df: rows holding
    the feature).
``mrsparse dots() (C)``
    The C product alone (``_mrjobs_speedups.dots`` in the chunks ``pair_best``
    uses), no scoring or selection: the same products and multiply-adds.
``sp_matmul_rs`` / ``sparse_dot_topn``
    ``sp_matmul_topn(A, A.T, top_n=11, n_threads=1, sort=True)`` (``A.T`` as a
    CSR matrix made before the clock starts): the whole product, each pair
    twice and each row with itself.  *Products*: the nonzero cells of
    ``A @ A.T`` (scipy's count, the diagonal included); *multiply-adds*:
    Σ df² over the features.  Each row's 11 best hold its 10 best neighbours
    (checked against ``pair_best``'s scores).

Rates are per CPU second (``time.process_time``; one thread, so per core),
best of ``passes``; the machine's load average is printed beside them.  The
target row (:func:`bench.checks.kernel_check`): ``pair_best``'s products per
CPU second at least 0.8x ``sp_matmul_rs``'s, each counted as above.
``--quick``: a block of the 1,000-vector Zipf corpus (B = 1).
"""
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as ``python bench/peers.py``
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from bench import common  # noqa: E402
from bench.peer_runs import PEERS, installed  # noqa: E402

TOP_K = 10
#: the kernel's block: the dense Zipf corpus of bench.jobs, the job's B on it
KERNEL_CORPUS = {"full": dict(vectors=20000, features_per_vector=50, vocabulary=100000,
                              zipf=1.1, seed=2),
                 "quick": dict(vectors=1000, features_per_vector=50, vocabulary=20000,
                               zipf=1.1, seed=2)}
KERNEL_BLOCKS = {"full": 4, "quick": 1}
#: the corpora (of bench.jobs) of the end-to-end table
E2E_CORPORA = {"full": ("dense", "text-4k"), "quick": ("dense-quick", "text-q400")}


# -- the kernel alone ------------------------------------------------------------------

def zipf_block(gen, blocks, block=0):
    """``(ids, A)``: the diagonal block ``block`` of ``blocks`` of the generated
    corpus ``gen`` as the job's reducer builds it (see the module's docstring)."""
    import scipy.sparse as sp

    from examples.generate import generate_arrays
    from mrjobs.measures import prepare_rows
    from mrjobs.strategies.scheme import block_of

    a = generate_arrays(**gen)
    ids = np.ascontiguousarray(a["doc_ids"]).view("S16").ravel()
    mine = np.flatnonzero([block_of(x.ljust(16, b"\0"), blocks) == block for x in ids.tolist()])
    mine = mine[np.argsort(ids[mine], kind="stable")]
    lengths = np.diff(a["indptr"])[mine]
    take = np.concatenate([np.arange(a["indptr"][i], a["indptr"][i + 1]) for i in mine])
    fids = np.ascontiguousarray(a["feature_ids"]).view("S16").ravel()
    feats = fids[a["indices"][take]]
    weights, _ = prepare_rows("cosine", a["weights"][take], lengths)
    local = np.unique(feats)
    cols = np.searchsorted(local, feats).astype(np.int32)
    indptr = np.concatenate(([0], np.cumsum(lengths)))
    A = sp.csr_matrix((weights, cols, indptr), shape=(mine.shape[0], local.shape[0]))
    A.sort_indices()  # a vector's features in UUID order, as the job's
    return ids[mine], A


def block_counts(A):
    """Products and multiply-adds of the block, counted both ways."""
    df = np.bincount(A.indices, minlength=A.shape[1]).astype(np.int64)
    Ab = A.copy()
    Ab.data = np.ones_like(Ab.data)
    cells = int((Ab @ Ab.T).nnz)
    nonempty = int((np.diff(A.indptr) > 0).sum())
    return {"rows": A.shape[0], "nnz": int(A.nnz), "features": int((df > 0).sum()),
            "upper_pairs": (cells - nonempty) // 2, "full_cells": cells,
            "upper_madds": int((df * (df - 1) // 2).sum()), "full_madds": int((df * df).sum())}


def _timed(run, passes):
    """``(best CPU s, best wall s, last result)`` of ``passes`` calls."""
    cpus, walls, result = [], [], None
    for _ in range(passes):
        result = None
        common.seconds_per_pass(lambda: None)  # collects young garbage
        c0, t0 = time.process_time(), time.perf_counter()
        result = run()
        cpus.append(time.process_time() - c0)
        walls.append(time.perf_counter() - t0)
    return min(cpus), min(walls), result


def _ours(A, k):
    from mrjobs.counters import Counters
    from mrjobs.pairs.kernel import PairSpec, pair_best
    from mrjobs.scoring import Scorer

    def run():
        # (the results as the kernel gives them; read into a dict after the timing)
        gen = pair_best(A, A, Scorer("cosine", Counters()), PairSpec(k, diagonal=True,
                                                                     kernel="c"))
        parts = []
        while True:
            try:
                parts.append(next(gen)[1:])
            except StopIteration as done:
                return done.value.products, parts
    return run


def _best_of(parts):
    """``{row: [(score, other), ...]}`` of :func:`_ours`' results."""
    best = {}
    for groups, others, scores in parts:
        for g, o, s in zip(groups.tolist(), others.tolist(), scores.tolist()):
            best.setdefault(g, []).append((s, o))
    return best


def _dots_only(A):
    from mrjobs import _c
    from mrjobs.pairs.chunks import chunk_ends, product_bounds
    from mrjobs.pairs.fused import C_CHUNK, csr_arrays

    a = csr_arrays(A)
    Bt = A.T.tocsr()
    Bt.sort_indices()
    b = csr_arrays(Bt)
    bound = product_bounds(A, A)
    ends = chunk_ends(bound, C_CHUNK)
    cap = int(np.add.reduceat(bound, np.array([0] + ends[:-1], np.intp)).max())
    out = np.empty(cap, np.int64), np.empty(cap, np.int64), np.empty(cap)

    def run():
        n, start = 0, 0
        for end in ends:
            n += _c.C.dots(*a, *b, A.shape[0], start, end, 1, *out)
            start = end
        return n
    return run


def _peer(A, k, module):
    import importlib

    sp_matmul_topn = importlib.import_module(module).sp_matmul_topn
    At = A.T.tocsr()
    return lambda: sp_matmul_topn(A, At, top_n=k + 1, n_threads=1, sort=True)


def _same_best(P, best, k):
    """True if each row's ``k`` best off-diagonal scores of the peer's
    product ``P`` equal ``pair_best``'s (to 1e-12 relative)."""
    P = P.tocsr()
    for r in range(P.shape[0]):
        s, e = P.indptr[r], P.indptr[r + 1]
        theirs = sorted((x for c, x in zip(P.indices[s:e], P.data[s:e]) if c != r),
                        reverse=True)[:k]
        ours = sorted((x for x, _ in best.get(r, [])), reverse=True)[:k]
        if len(theirs) != len(ours) or not np.allclose(theirs, ours, rtol=1e-12, atol=0):
            return False
    return True


def kernel_rows(ids, A, k=TOP_K, passes=3):
    """The rows of the kernel table (see the module's docstring)."""
    from mrjobs import _c

    c = block_counts(A)
    rows = []
    if _c.C is not None:
        cpu, wall, (products, parts) = _timed(_ours(A, k), passes)
        best = _best_of(parts)
        rows.append({"kernel": "mrsparse pair_best (C)", "threads": 1, "cpu_s": cpu,
                     "wall_s": wall, "products": products, "products_counted_as":
                     "products computed counter: pairs above the diagonal",
                     "madds": c["upper_madds"], "madds_counted_as": "sum df(df-1)/2",
                     "same_top_k": None})
        c["pair_best_products_match"] = products == c["upper_pairs"]
        cpu, wall, products = _timed(_dots_only(A), passes)
        rows.append({"kernel": "mrsparse dots() alone (C)", "threads": 1, "cpu_s": cpu,
                     "wall_s": wall, "products": products,
                     "products_counted_as": "pairs above the diagonal (returned)",
                     "madds": c["upper_madds"], "madds_counted_as": "sum df(df-1)/2",
                     "same_top_k": None})
    else:
        best = None
    for peer, (module, _) in PEERS.items():
        if not installed(peer):
            continue
        cpu, wall, P = _timed(_peer(A, k, module), passes)
        rows.append({"kernel": peer, "threads": 1, "cpu_s": cpu, "wall_s": wall,
                     "products": c["full_cells"],
                     "products_counted_as": "nonzero cells of A A^T (diagonal included)",
                     "madds": c["full_madds"], "madds_counted_as": "sum df^2",
                     "same_top_k": None if best is None else _same_best(P, best, k)})
    for r in rows:
        r["products_per_cpu_s"] = r["products"] / r["cpu_s"]
        r["madds_per_cpu_s"] = r["madds"] / r["cpu_s"]
        # the question itself: each row's k best over the block
        r["vs_ours_cpu"] = r["cpu_s"] / rows[0]["cpu_s"] if _c.C is not None else None
    return c, rows


KERNEL_TABLE = [
    ("kernel", "kernel (1 thread)"), ("cpu_s", "CPU s", "{:.3f}"), ("wall_s", "wall s", "{:.3f}"),
    ("vs_ours_cpu", "CPU/pair_best", "{:.2f}"),
    ("products", "products", "{:,}"), ("products_per_cpu_s", "products/CPU s", "{:,.0f}"),
    ("madds", "multiply-adds", "{:,}"), ("madds_per_cpu_s", "madds/CPU s", "{:,.0f}"),
    ("same_top_k", "top-10=ours"), ("products_counted_as", "products counted as"),
]


def kernel_title(counts, gen, blocks):
    return ("The kernel alone: one diagonal block (block 0 of B=%d) of the Zipf corpus "
            "(%s vectors, %g features a vector, vocabulary %s, exponent %g, seed %d): "
            "%s rows, %s entries, %s pairs above the diagonal; cosine top-%d of every row; "
            "one thread, best of the passes; load average %s (2 cores: timings are noisy)"
            % (blocks, "{:,}".format(gen["vectors"]), gen["features_per_vector"],
               "{:,}".format(gen["vocabulary"]), gen["zipf"], gen["seed"],
               "{:,}".format(counts["rows"]), "{:,}".format(counts["nnz"]),
               "{:,}".format(counts["upper_pairs"]), TOP_K,
               " ".join("%.1f" % x for x in common.machine_info()["loadavg"] or ())))


def parse_args(argv=None):
    ap = common.arg_parser("python -m bench.peers", __doc__.split("\n\n")[0].replace("``", ""),
                           "peers.json")
    ap.add_argument("--passes", type=int, default=3, help="timings of each kernel, best kept")
    ap.add_argument("--kernel-only", action="store_true", help="the kernel table alone")
    ap.add_argument("--only", type=lambda s: tuple(s.split(",")),
                    help="comma-separated corpora of bench.jobs for the end-to-end table "
                         "(default: %s; quick: %s)" % tuple(",".join(E2E_CORPORA[m])
                                                           for m in ("full", "quick")))
    ap.add_argument("--peer-passes", type=int, default=2,
                    help="runs of each peer's script per corpus, best kept")
    ap.add_argument("--floor-passes", type=int, default=2,
                    help="timings of each product on the parsed matrix, best kept")
    ap.add_argument("--workdir", type=Path, help="where corpora and outputs go (default: a "
                    "new temporary directory, removed at the end)")
    ap.add_argument("--keep", action="store_true", help="keep the workdir's files")
    return common.parse(ap, argv)


def end_to_end(mode, names, args, log):
    """``(rows, corpora stats)`` of the end-to-end table: on each corpus the job
    (blocks, top-10, bench.jobs's runner of ``mode``), the references on the
    parsed matrix (bench.floor) and each peer's script (bench.jobs.run_peers)."""
    import shutil
    import tempfile

    from bench import jobs

    corpora = {c.name: c for c in (jobs.QUICK_CORPORA if mode == "quick"
                                   else jobs.FULL_CORPORA)}
    unknown = set(names) - set(corpora)
    if unknown:
        sys.exit("unknown corpora %s; choose from %s" % (sorted(unknown), sorted(corpora)))
    runner = jobs.PREFERRED_RUNNER[mode]
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="mrsparse-bench-peers-"))
    workdir.mkdir(parents=True, exist_ok=True)
    rows, stats = [], {}
    try:
        for name in names:
            c = corpora[name]
            path, spec = jobs.make_corpus(c, workdir)
            st = stats[name] = dict(jobs.run_references(c, spec, args, workdir, log),
                                    name=name, family=c.family, vectors=c.vectors)
            run = (name, "blocks", runner, "")
            job = jobs.run_job(c, path, *run[1:], args, workdir, log, keep=True)
            jobs.add_ratios([job], stats)
            rows += jobs.run_peers(c, path, run, [job], st, args, workdir, log)
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    return rows, stats


def main(argv=None):
    args = parse_args(argv)
    mode, log = "quick" if args.quick else "full", common.logger()
    e2e, stats = [], {}
    if not args.kernel_only:
        from bench import jobs

        e2e, stats = end_to_end(mode, args.only or E2E_CORPORA[mode], args, log)
        common.print_table(e2e, jobs.PEER_TABLE, title=jobs.peer_table_title(e2e))
    gen, blocks = KERNEL_CORPUS[mode], KERNEL_BLOCKS[mode]
    ids, A = zipf_block(gen, blocks)
    log("block 0 of %d of the Zipf corpus: %d rows, %d entries" % (blocks, A.shape[0], A.nnz))
    counts, rows = kernel_rows(ids, A, TOP_K, args.passes)
    common.print_table(rows, KERNEL_TABLE, title=kernel_title(counts, gen, blocks))
    from bench.checks import kernel_check

    targets = kernel_check(rows)
    common.print_checks(targets)
    common.finish("peers", {"settings": {"quick": args.quick, "top_k": TOP_K,
                                         "passes": args.passes, "peer_passes": args.peer_passes,
                                         "corpus": gen, "blocks": blocks, "block": 0,
                                         "method": __doc__},
                            "end_to_end": e2e, "corpora": stats, "block": counts,
                            "kernel": rows, "checks": targets}, args, log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
