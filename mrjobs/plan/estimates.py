"""The plan's estimates from a sample: features and the df-cut, products,
pairs and neighbours, the block count, memory and time (see
:mod:`mrjobs.plan`, "Estimators")."""
import logging

import numpy as np

from mrjobs.measures import get as get_measure, prepare_rows, score
from mrjobs.pairs.kernel import LIVE_SHARE_MAX
from mrjobs.plan import resources
from mrjobs.plan.sample import PlanError
from mrjobs.plan.prefixplan import prefix_estimates
from mrjobs.plan.wirecost import Wire, job_steps, vectors_step
from mrjobs.runtime.localsettings import task_count
from mrjobs.strategies.containers import block_entries_for
from mrjobs.strategies.sizing import (DEFAULT_BLOCK_ENTRIES, INPUT_BYTES_PER_ENTRY, MAX_BLOCKS,
                                      bytes_per_entry, cores, data_first_line, default_blocks,
                                      df_cut_form, estimate_blocks, input_data_bytes,
                                      local_split_bytes, one_block_pays, pair_memory_bytes,
                                      pair_threads, reducers, vector_entries, whole_rows)

__all__ = ["POSTING_ENTRY_BYTES", "MAX_TASKS", "estimate", "job_args"]

#: bytes of a decoded entry held by a stripes reducer (posting list: id, weight, stat)
POSTING_ENTRY_BYTES = 40
#: the largest --reducers and --num-cores (the job's default block count
#: grows with the cores of the local runner)
MAX_TASKS = 1_000_000


# -- estimates -----------------------------------------------------------------

class _Family:
    """One family's sample, scaled to ``N`` vectors, with prepared weights
    (:meth:`prepare`)."""

    def __init__(self, sample, n_target):
        self.s = sample
        self.N = float(n_target) if n_target else sample.vectors()
        self.scale = self.N / sample.n
        self.row = np.repeat(np.arange(sample.n), sample.lengths)
        self.prepared = self.stats = None

    def prepare(self, measure, n_features):
        """The sample's weights and statistics, prepared for ``measure``."""
        self.prepared, self.stats = prepare_rows(measure, self.s.weights, self.s.lengths,
                                                 n_features=n_features)


def _features(fams, max_df):
    """Per family: the sample's df of each feature (one shared index), and
    which features the df-cut keeps (estimated corpus df <= ``max_df``)."""
    uniq, inv = np.unique(np.concatenate([f.s.feats for f in fams]), return_inverse=True)
    bounds = np.cumsum([0] + [f.s.feats.shape[0] for f in fams])
    for f, a, b in zip(fams, bounds[:-1], bounds[1:]):
        f.col = inv[a:b]
        f.df = np.bincount(f.col, minlength=uniq.shape[0])
    df_hat = sum(f.df * f.scale for f in fams)
    kept = np.ones(uniq.shape[0], bool) if max_df is None else df_hat <= max_df
    for f in fams:
        f.kept = kept[f.col]
        f.kept_len = np.bincount(f.row[f.kept], minlength=f.s.n)
    return uniq.shape[0], df_hat, kept


def _products(fams, kept, include_self):
    """Σ_f df_f(df_f-1)/2 over the kept features (the unbiased U-statistic;
    under --queries Σ_f dq_f·dc_f)."""
    if len(fams) == 2:
        c, q = fams
        return float((q.df[kept] * c.df[kept]).sum()) * q.scale * c.scale
    f = fams[0]
    d = f.df[kept].astype(np.float64)
    n, N = f.s.n, f.N
    u = (d * (d - 1) / 2).sum() * (N * (N - 1) / (n * (n - 1)) if n > 1 else 0.0)
    return float(u + (d.sum() * f.scale if include_self else 0.0))


def _subsample(f, m, n_cols):
    """CSR matrices (prepared weights and ones) over the kept features of an
    evenly spaced sub-sample of at most ``m`` vectors, and its rows' indices."""
    import scipy.sparse as sp
    idx = np.unique(np.linspace(0, f.s.n - 1, min(m, f.s.n)).astype(np.int64))
    pick = np.isin(f.row, idx) & f.kept
    rows = np.searchsorted(idx, f.row[pick])
    X = sp.csr_matrix((f.prepared[pick], (rows, f.col[pick])), shape=(idx.shape[0], n_cols))
    Xb = sp.csr_matrix((np.ones(rows.shape[0]), (rows, f.col[pick])),
                       shape=(idx.shape[0], n_cols))
    return idx, X, Xb


def _pairs(fams, n_cols, o):
    """Pairs sharing a kept feature and each row vector's neighbours, from a
    sub-sample, scaled to the whole.

    Returns a dict: ``pairs`` (sharing a kept feature), ``kept_pairs`` (with a
    finite score >= --threshold), ``deg``, ``deg_up``, ``deg_down`` (scaled
    neighbour counts of the sub-sample's row vectors, as arrays), ``shared``
    (kept feature counts of the sub-sample's pairs, for the stripes' combining)
    and ``pair_scale``.
    """
    rows_f = fams[-1]  # the queries under --queries, else the corpus
    ir, Xr, Br = _subsample(rows_f, o.pair_sample, n_cols)
    if len(fams) == 2:
        ic, Xc, Bc = _subsample(fams[0], o.pair_sample, n_cols)
        pair_scale = rows_f.N * fams[0].N / (ir.shape[0] * ic.shape[0])
        deg_scale = fams[0].N / ic.shape[0]
    else:
        ic, Xc, Bc = ir, Xr, Br
        m = ir.shape[0]
        pair_scale = rows_f.N * (rows_f.N - 1) / (m * (m - 1)) if m > 1 else 0.0
        deg_scale = (rows_f.N - 1) / (m - 1) if m > 1 else 0.0
    C = (Br @ Bc.T).toarray()
    D = (Xr @ Xc.T).toarray()
    share = C > 0
    if len(fams) == 1:
        share &= ~np.eye(share.shape[0], dtype=bool)
    r, c = np.nonzero(share)
    st_r = None if rows_f.stats is None else rows_f.stats[ir][r]
    st_c = None if fams[0].stats is None else fams[0].stats[ic][c]
    with np.errstate(all="ignore"):
        try:
            sc = score(o.measure, D[r, c], st_r, st_c, n_features=o.num_features)
        except ValueError as err:
            raise PlanError("--measure %s: %s" % (o.measure, err)) from None
    ok = np.isfinite(sc)
    if o.threshold is not None:
        ok &= sc >= o.threshold
    keep = np.zeros_like(share)
    keep[r[ok], c[ok]] = True
    deg = keep.sum(axis=1) * deg_scale
    out = {"pair_scale": pair_scale, "deg": deg, "score_chars": _score_chars(sc[ok], o)}
    if len(fams) == 1:
        rank = np.argsort(np.argsort(rows_f.s.docs[ir], kind="stable"))
        up = rank[None, :] > rank[:, None]
        out["deg_up"] = (keep & up).sum(axis=1) * deg_scale
        out["deg_down"] = deg - out["deg_up"]
        out["rank"] = (rank + 0.5) / rank.shape[0]
        upper = np.triu(share, 1)
        out["pairs"] = upper.sum() * pair_scale
        out["kept_pairs"] = np.triu(keep, 1).sum() * pair_scale
        out["shared"] = C[upper]
    else:
        out["pairs"] = share.sum() * pair_scale
        out["kept_pairs"] = keep.sum() * pair_scale
        out["shared"] = C[share]
    return out


def _score_chars(scores, o):
    """Mean length of a score in the output's JSON (``repr`` of the float64,
    as the job writes it), over at most 20,000 of the sample's kept scores;
    17 where none was kept."""
    if not scores.shape[0]:
        return 17.0
    picked = scores[::max(1, scores.shape[0] // 20000)]
    if o.float32:  # scored in float32, written as the float64 it converts to
        picked = picked.astype(np.float32).astype(np.float64)
    return float(np.mean([len(repr(x)) for x in picked.tolist()]))


#: bytes of an output line beside its neighbours: ``"<uuid>"``, TAB, the
#: braces and the newline, less the ", " the last neighbour goes without
LINE_BYTES = 38 + 1 + 2 + 1 - 2
#: bytes of a neighbour beside its score: ``"<uuid>": `` and ``, ``
NEIGHBOUR_BYTES = 38 + 2 + 2


def output_bytes(e, wire, o):
    """Bytes of the job's output: a line for each row vector with at least
    one neighbour, its ``min(K, kept neighbours)`` neighbours (under
    ``--include-self``, itself too), each as its JSON writes it (or its
    compact records under ``--output-format compact``), from the
    sub-sample's rows' neighbour counts and scores."""
    f, deg = e["fams"][-1], e["pairs"]["deg"]
    if o.include_self and len(e["fams"]) == 1:
        deg = deg + 1.0
    shown = np.minimum(deg, o.top_k) if o.top_k else deg
    lines = float((shown >= 0.5).mean()) * f.N if shown.shape[0] else 0.0
    neighbours = float(shown.mean()) * f.N if shown.shape[0] else 0.0
    if getattr(o, "output_format", "json") == "compact":
        return wire.stripe(lines, neighbours, wire.doc_key)
    return lines * LINE_BYTES + neighbours * (NEIGHBOUR_BYTES + e["pairs"]["score_chars"])


# -- blocks, memory, time ----------------------------------------------------------

def job_args(o, inputs=None):
    """The dot-products job's command line for the plan's options."""
    args = list(inputs if inputs is not None else o.inputs)
    for flag, value in (("--queries", o.queries), ("--strategy", o.strategy),
                        ("--blocks", o.blocks),
                        ("--pair-threads", o.pair_threads),
                        ("--buffer-entries", o.buffer_entries),
                        ("--max-df", o.max_df), ("--top-k", o.top_k),
                        ("--threshold", o.threshold), ("--measure", o.measure),
                        ("--num-features", o.num_features), ("--input-format", o.input_format),
                        ("--reducer-memory", o.reducer_memory
                         if o.strategy == "blocks" and o.blocks is None else None),
                        ("--runner", o.runner), ("--num-cores", o.num_cores),
                        ("--output-format", None if getattr(o, "output_format", "json") == "json"
                         else o.output_format)):
        if value is not None:  # one word: a negative value is no option (-1e-3)
            args.append("%s=%s" % (flag, value))
    for flag, on in (("--float32", o.float32), ("--include-self", o.include_self)):
        if on:
            args.append(flag)
    return args


def _job_blocks(o, input_bytes, mean_length):
    """The block count the job would choose: ``--blocks``, else the job's own
    default for this input (or, with --vectors, for an input of
    ``input_bytes`` of vectors of ``mean_length`` entries, by the same rule);
    and the default's rule before the job's limit of
    :data:`~mrjobs.strategies.sizing.MAX_BLOCKS` (None when within it)."""
    if o.blocks is not None:
        return o.blocks, None
    if o.vectors is None:
        paths = (list(o.inputs) or ["-"]) + ([o.queries] if o.queries else [])
        logging.getLogger("mrjobs.strategies.sizing").disabled = True
        try:
            line = data_first_line(o.inputs or ["-"])
            b = default_blocks(input_data_bytes(paths), reducers(o.runner, o.num_cores),
                               input_bytes_per_entry=bytes_per_entry(o.input_format, line),
                               top_k=o.top_k,
                               entries_per_vector=vector_entries(o.input_format, line),
                               whole=whole_rows(o), size=DEFAULT_BLOCK_ENTRIES
                               if o.reducer_memory is None else
                               block_entries_for(o.reducer_memory, o.buffer_entries))
        finally:
            logging.getLogger("mrjobs.strategies.sizing").disabled = False
    else:
        b = estimate_blocks(int(input_bytes) // INPUT_BYTES_PER_ENTRY, reducers(o.runner, o.num_cores),
                            DEFAULT_BLOCK_ENTRIES if o.reducer_memory is None else
                            block_entries_for(o.reducer_memory, o.buffer_entries),
                            top_k=o.top_k, entries_per_vector=mean_length)
    return (b, None) if b <= MAX_BLOCKS else (MAX_BLOCKS, b)


def _suggest_blocks(entries, o, R, mean_length):
    """The smallest B with at least 4 block pairs a reduce task (one block for
    a small input, and no more than memory asks for past --top-k 4x
    ``mean_length``, as the job's default), blocks of at most
    DEFAULT_BLOCK_ENTRIES and a pair reducer within --reducer-memory."""
    top = MAX_BLOCKS
    b = min(estimate_blocks(entries, min(R, MAX_TASKS), DEFAULT_BLOCK_ENTRIES, top_k=o.top_k,
                            entries_per_vector=mean_length), top)
    if b > 1 and whole_rows(o) and one_block_pays(entries, o.top_k, mean_length):
        b = 1  # as the job's default: one block, its pairs on the cores
    if o.reducer_memory:
        limit = o.reducer_memory * 2 ** 20
        while pair_memory_bytes(entries, b, o.buffer_entries) > limit and b < top:
            b = min(max(b + 1, int(b * 1.1)), top)
    return b


def _resources(e, fams, n_feat, o, cal):
    """Time, memory by kind of process, temp disk and pruning (see
    :mod:`mrjobs.plan.resources`) into the plan ``e``."""
    c = resources.constants(cal)
    slots = e["reducers"] if o.reducers else cores(o.num_cores) if o.runner in (
        None, "inline", "local") else e["reducers"]
    if o.runner == "inline":
        slots = 1
    e["wall_s"], e["cpu_s"] = resources.times(
        e, c, slots, o.runner if o.runner in resources.CLUSTER_RUNNERS else None) if cal \
        else (None, None)
    e["seconds"] = e["wall_s"]
    share = None
    if o.strategy == "blocks" and o.threshold is not None:
        rows = _subsample(fams[-1], o.pair_sample, n_feat)
        cols = _subsample(fams[0], o.pair_sample, n_feat) if len(fams) == 2 else rows
        st = [None if f.stats is None else f.stats[i[0]] for f, i in
              zip((fams[-1], fams[0]), (rows, cols))]
        share = resources.prune_estimate((rows[1], st[0]), (cols[1], st[1]), o, o.measure,
                                         len(fams) == 1)
    e["prune_live_share"] = share
    e["prune_pays"] = None if share is None else bool(share <= LIVE_SHARE_MAX)
    e["memory_by_kind"] = resources.memory_by_kind(e, o, c)
    e["peak_rss_bytes"] = max(e["memory_by_kind"].values())
    e["temp_disk_bytes"] = (resources.temp_disk_bytes(e["steps"], e["input_bytes"],
                                                      e["staged_output_bytes"])
                            if o.runner in (None, "local") else None)


def _reducers(o):
    """Reduce tasks a step: --reducers, else what mrjob's local and inline
    runners start (they split each step's input in about two per core)."""
    if o.reducers:
        return o.reducers
    if o.runner in (None, "inline", "local"):
        return 2 * cores(o.num_cores)
    return 1


def _map_tasks(input_bytes, o):
    """Map tasks of the first step: the job's local runner's (a task per
    ``SPLIT_BYTES`` of input, at most one a core up to ``BALANCE_BYTES`` a
    core: :func:`~mrjobs.runtime.localsettings.task_count`; stripes: mrjob's
    two a core), mrjob's inline runner's two, a cluster's one an HDFS block
    (128 MB)."""
    if o.runner == "local":
        return task_count(int(input_bytes), cores(o.num_cores), local_split_bytes(o.strategy))
    if o.runner in (None, "inline"):
        return 2
    return max(1, -(-int(input_bytes) // 2**27))


def _products_computed(e, o):
    """Entries of the block pairs' sparse products (the job's counter
    ``products computed``): every pair sharing a kept feature, once (a
    diagonal pair computes only its upper triangle), and under
    ``--include-self`` each vector with itself."""
    p, f = e["pairs"], e["fams"][-1]
    if len(e["fams"]) == 2 or not o.include_self:
        return p["pairs"]
    return p["pairs"] + (f.kept_len > 0).sum() * f.scale


def _blocks_estimates(e, fams, o, R, has_queries):
    """The blocks strategy's part of the plan ``e``: its blocks, block pairs,
    --max-df form, a pair's entries and memory, and the blocks to suggest."""
    lengths = fams[-1].s.lengths
    mean_length = float(lengths.mean()) if lengths.shape[0] else None
    B, e["blocks_over_limit"] = _job_blocks(o, e["input_bytes"], mean_length)
    e["blocks"] = B
    e["block_pairs"] = B * B if has_queries else B * (B + 1) // 2
    # one block's pair on the cores (the threads' triangle, sizing.whole_rows)
    e["pair_threads"] = (pair_threads(o.runner or "inline", B, o.num_cores)
                         if B == 1 and whole_rows(o) else 1)
    # --max-df: the form the job would choose for this runner and B
    e["df_cut_form"] = None if o.max_df is None else df_cut_form(o.runner, B, has_queries)
    # a pair decodes its blocks whole: in the counts form it applies the
    # cut itself, in the join form its blocks hold the kept entries
    entries = (e["kept_entries"] if e["df_cut_form"] == "join" else
               sum(f.s.lengths.sum() * f.scale for f in fams)) / (2 if has_queries else 1)
    e["pair_entries"] = entries
    e["memory"] = pair_memory_bytes(entries, B, o.buffer_entries)
    e["suggested_blocks"] = _suggest_blocks(entries, o, R, mean_length)
    e["products_computed"] = _products_computed(e, o)


def estimate(corpus, queries, o, calibration=None):
    """The plan: a dict of estimates for the options ``o`` (see :func:`main`)."""
    fams = [_Family(corpus, o.vectors)]
    if queries is not None:
        fams.append(_Family(queries, None))
    n_feat, df_hat, kept = _features(fams, o.max_df)
    if get_measure(o.measure).needs_n_features and o.num_features < n_feat:
        raise PlanError("--num-features %d is fewer than the %d distinct features of the "
                        "sample: it must count the distinct features of the whole corpus "
                        "(the line count of the inverted index job's output)"
                        % (o.num_features, n_feat))
    for f in fams:
        f.prepare(o.measure, o.num_features)
    e = {"fams": fams, "features_seen": n_feat, "features_cut": int((~kept).sum()),
         "df_hat": df_hat,
         "products": _products(fams, kept, o.include_self)}
    e["pairs"] = _pairs(fams, n_feat, o)
    e["kept_entries"] = sum(f.kept_len.sum() * f.scale for f in fams)
    e["input_bytes"] = sum(f.s.total_bytes * f.N / f.s.vectors() for f in fams)
    e["max_df_kept"] = float(df_hat[kept].max()) if kept.any() else 0.0
    R = _reducers(o)
    e["reducers"] = R
    if o.strategy == "blocks":
        _blocks_estimates(e, fams, o, R, queries is not None)
    elif o.strategy == "prefix":
        prefix_estimates(e, fams, o)
    else:
        e["memory"] = e["max_df_kept"] * POSTING_ENTRY_BYTES + o.buffer_entries * 48
    wire = Wire(fams, o)
    if o.runner == "local" and not o.reducers:
        # the job's local runner starts a task per SPLIT_BYTES of a step's
        # input, at most one a core up to BALANCE_BYTES a core: size R by the
        # vectors step (its reducers send the --max-df count tables), whose
        # bytes do not depend on R
        R = e["reducers"] = task_count(int(vectors_step(e, wire)["bytes"]),
                                       cores(o.num_cores), local_split_bytes(o.strategy))
    e["map_tasks"] = _map_tasks(e["input_bytes"], o)
    e["steps"] = job_steps(e, wire, o, R)
    if o.runner == "local" and not o.reducers:
        # and each step's own count, as the local runner takes it from the
        # bytes shuffled into that step, a split holding whole keys (a block
        # pair step has no more tasks than block pairs): what a run uses
        for step in e["steps"]:
            n = task_count(int(step["bytes"]), cores(o.num_cores), local_split_bytes(o.strategy))
            step["reducers"] = min(n, e["block_pairs"]) if step["step"] == "pairs" else n
    e["output_bytes"] = output_bytes(e, wire, o)
    # without --output-dir the last step writes the output into the temp
    # dir, whence it is copied to stdout at the end (runtime.epilogue.write_output)
    e["staged_output_bytes"] = 0.0 if getattr(o, "output_dir", None) else e["output_bytes"]
    e["calibration"] = calibration
    _resources(e, fams, n_feat, o, calibration)
    if o.max_df is not None:
        smallest = min(f.s.n / f.N for f in fams) * o.max_df
        e["cut_resolution"] = smallest   # the cut's df, in sample counts
    return e
