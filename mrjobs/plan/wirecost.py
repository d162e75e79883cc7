"""Bytes of each step of the job: its records built from the sample and
encoded by the job's own wire protocol (see :mod:`mrjobs.plan`, "Estimators"),
and the steps each strategy runs."""
import numpy as np

from mrcodecs.jobwire import Stripe
from mrjobs.measures import get as get_measure
from mrjobs.parsing import POSTINGS
from mrjobs.strategies.scheme import pairs_write_rows

__all__ = ["Wire", "vectors_step", "job_steps", "distinct_features", "heaps_beta"]


def distinct_features(df, n, m):
    """Expected distinct features among ``m`` vectors, from the sample's df
    (``n`` vectors); beyond ``n``, Heaps' law fitted on the sample
    (:func:`heaps_beta`)."""
    if m <= n:
        return _within(df, n, m)
    return _within(df, n, n) * (m / n) ** heaps_beta(df, n)


def heaps_beta(df, n):
    """Heaps' exponent of the sample (``df`` of its features over its ``n``
    vectors): the growth of its distinct features from half of it to all."""
    full, half = _within(df, n, n), _within(df, n, n / 2)
    return min(1.0, max(0.0, np.log2(full / half))) if half > 0 else 1.0


def _within(df, n, k):
    """Expected distinct features among ``k <= n`` of the sample's vectors."""
    return float((1.0 - (1.0 - min(k, n) / n) ** df[df > 0]).sum())


# -- bytes of each step ----------------------------------------------------------

class Wire:
    """Bytes of the job's records on the compact wire (mrcodecs.jobwire),
    from records built of sample data and encoded: ``rho`` is the escaping's
    growth of entry bytes, keys are measured on sample ids."""

    def __init__(self, fams, o):
        from mrcodecs.jobwire import encode_id_key, encode_stripe
        self.wsize = 4 if o.float32 else 8
        self.dtype = np.float32 if o.float32 else np.float64
        self.stats = get_measure(o.measure).stat is not None
        s = fams[0].s
        ids = s.feats[:4000]
        w = fams[0].prepared[:4000].astype(self.dtype)
        st = np.asarray(fams[0].s.weights[:4000], np.float64)
        raw = 6 + ids.shape[0] * (16 + self.wsize + 8)
        self.rho = len(encode_stripe(Stripe(ids, w, st))) / raw
        self.doc_key = np.mean([len(encode_id_key(k)) for k in _raw(s.docs[:1000])])
        self.feat_key = np.mean([len(encode_id_key(k)) for k in _raw(ids[:1000])])
        self.mapper = []
        for f, query in zip(fams, (False, True)):
            starts = np.concatenate(([0], np.cumsum(f.s.lengths)))
            total = sum(len(encode_id_key(k)) + len(encode_stripe(Stripe(
                f.s.feats[a:b], f.s.weights[a:b].astype(self.dtype), query=query))) + 2
                for k, a, b in zip(_raw(f.s.docs), starts[:-1], starts[1:]))
            self.mapper.append(total * f.scale)

    def block_key(self, blocks):
        """Mean length of an escaped block-pair key for ``blocks`` blocks."""
        b = np.arange(blocks, dtype=">u4").view(np.uint8).reshape(-1, 4)
        esc = ((b >= 9) & (b <= 13)).sum(axis=1).mean()
        return 16 + 2 * esc

    def stripe(self, records, entries, key, per_entry_stats=False, self_stat=False):
        per_entry = 16 + self.wsize + (8 if per_entry_stats else 0)
        return records * (key + 2 + self.rho * (6 + (8 if self_stat else 0))) + \
            entries * per_entry * self.rho

    def counts(self, records, entries, blocks):
        """A count table: a stripe of feature ids and float32 counts, keyed
        by a block pair."""
        return records * (self.block_key(blocks) + 2 + 6 * self.rho) + entries * 20 * self.rho

    def block(self, records, vectors, entries, blocks, stats=True):
        """Block records; ``stats``: with the measure's per-vector statistic
        (prepared vectors; the direct form's raw ones have none)."""
        return records * (self.block_key(blocks) + 2 + 10 * self.rho) + self.rho * (
            vectors * (20 + (8 if self.stats and stats else 0)) + entries * (16 + self.wsize))


def _raw(ids):
    """The 16-byte strings of an S16 array (numpy drops trailing NULs of items)."""
    b = ids.tobytes()
    return [b[i:i + 16] for i in range(0, len(b), 16)]


def _flushes(entries, reducers, limit):
    """Buffer flushes per reduce task."""
    return max(1.0, float(np.ceil(entries / reducers / limit)))


def _groups(counts, groups):
    """Expected groups (of ``groups``, equally likely) that ``counts`` items
    fall into, summed."""
    if groups <= 1:
        return float((np.asarray(counts) > 0).sum())
    return float((groups * (1.0 - (1.0 - 1.0 / groups) ** np.asarray(counts, float))).sum())


def _min_poisson(k, lam):
    """E[min(k, X)] for X ~ Poisson(lam), elementwise (k None: E[X])."""
    lam = np.asarray(lam, np.float64)
    if k is None:
        return lam
    if k > 2000:
        return np.minimum(k, lam)
    from scipy.stats import poisson
    out = np.zeros(lam.shape[0])
    for j0 in range(0, k, 256):
        j = np.arange(j0, min(k, j0 + 256))
        out += poisson.sf(j[None, :], lam[:, None]).sum(axis=1)
    return out


def _block_records(vectors, entries, blocks, reducers, limit):
    """Block records of a step whose reducers fill a BlockBuffer: one per
    block present in a flush and block pair it goes to."""
    flushes = _flushes(entries, reducers, limit)
    per_flush = vectors / (reducers * flushes)
    present = blocks * (1.0 - (1.0 - 1.0 / blocks) ** per_flush)
    return reducers * flushes * present * blocks


# -- the steps -------------------------------------------------------------------

def _step(name, records, entries, nbytes):
    return {"step": name, "records": float(records), "entries": float(entries),
            "bytes": float(nbytes)}


def vectors_step(e, wire):
    f = e["fams"]
    return _step("vectors", sum(x.N for x in f), sum(x.s.lengths.sum() * x.scale for x in f),
                 sum(wire.mapper))


def _postings_step(e, wire, name, o, R):
    """Posting fragments (feature -> documents) from the vectors reducers."""
    recs = 0.0
    for f in e["fams"]:
        nnz = f.s.lengths.sum() * f.scale
        flushes = _flushes(nnz, R, o.buffer_entries)
        recs += R * flushes * distinct_features(f.df, f.s.n, f.N / (R * flushes))
    nnz = sum(f.s.lengths.sum() * f.scale for f in e["fams"])
    return _step(name, recs, nnz, wire.stripe(recs, nnz, wire.feat_key, wire.stats))


def _regroup_step(e, wire, o, R):
    """Kept features regrouped by vector (--max-df under blocks, join form)."""
    kept = sum(f.kept_len.sum() * f.scale for f in e["fams"])
    groups = R * _flushes(kept, R, o.buffer_entries)
    recs = sum(_groups(f.kept_len, groups) * f.scale for f in e["fams"])
    return _step("regroup", recs, kept, wire.stripe(recs, kept, wire.doc_key, False, wire.stats))


def _pairs_step(e, wire, o, R):
    """Whole vectors to their block pairs: the kept entries after the join
    form's regroup step, or, in the counts form, the count tables and the
    entries a vectors-step task does not leave out (the pairs apply the cut;
    a task leaves out the features it alone counted over the cut)."""
    B = e["blocks"]
    counts = e["df_cut_form"] == "counts"
    sent = _sent_share(e, o, R) if counts else None
    recs = vecs = ents = 0.0
    for f in e["fams"]:
        if sent is None:
            v = (f.kept_len > 0).sum() * f.scale
            n = f.kept_len.sum() * f.scale
        else:
            t = sent[f.col]
            n = t.sum() * f.scale
            # a vector travels if one of its entries does
            none = np.bincount(f.row, np.log(np.maximum(1.0 - t, 1e-300)), f.s.n)
            v = (1.0 - np.exp(none)).sum() * f.scale
        recs += _block_records(v, n, B, R, o.buffer_entries)
        vecs += v * B
        ents += n * B
    nbytes = wire.block(recs, vecs, ents, B)
    if counts:
        c_recs, c_ents = _count_tables(e, R)
        recs, ents = recs + c_recs, ents + c_ents
        nbytes += wire.counts(c_recs, c_ents, B)
    return _step("pairs", recs, ents, nbytes)


def _direct_pairs_step(e, wire, o, M):
    """Blocks without --max-df (the direct form): every vector as read, empty
    or not, from the block buffers of the ``M`` map tasks to its block
    pairs, without statistics (the pairs prepare the vectors).  Its time
    model is ``direct`` (:func:`mrjobs.plan.resources.times`); ``parse``:
    the bytes the mappers would have written in a vectors step."""
    B, limit = e["blocks"], o.buffer_entries
    recs = vecs = ents = 0.0
    for f in e["fams"]:
        n = f.s.lengths.sum() * f.scale
        recs += _block_records(f.N, n, B, M, limit)
        vecs += f.N * B
        ents += n * B
    return dict(_step("pairs", recs, ents, wire.block(recs, vecs, ents, B, stats=False)),
                model="direct", parse=float(sum(wire.mapper)))


def _sent_share(e, o, R):
    """Per feature, the share of its entries that leave the vectors step
    under --max-df: a task flushes its blocks ``F`` times, and at its k-th
    flush leaves out a feature it has counted in more than --max-df vectors,
    its count then ~ Binomial(df, k/(F·R))."""
    from scipy.stats import binom
    df = np.rint(e["df_hat"])
    entries = sum(f.s.lengths.sum() * f.scale for f in e["fams"])
    flushes = int(_flushes(entries, R, o.buffer_entries))
    dropped = np.zeros(df.shape[0])
    max_df = float(o.max_df)
    over = df > max_df
    for k in range(1, min(flushes, 64) + 1):
        dropped[over] += binom.sf(max_df, df[over], k / (min(flushes, 64) * R))
    return 1.0 - dropped / min(flushes, 64)


def _count_tables(e, R):
    """Records and entries of the --max-df count tables: each of the R
    vectors-step reduce tasks sends, per family, one entry per feature it
    holds to every block pair."""
    P = e["block_pairs"]
    tables = sum(distinct_features(f.df, f.s.n, f.N / R) for f in e["fams"])
    return R * len(e["fams"]) * P, R * tables * P


def _rows_blocks(e, wire, o):
    """Partial rows of the block pairs: each row vector's neighbours in each
    block, cut to --top-k (a diagonal pair's two directions merged with
    --top-k, apart without it)."""
    B, k, p = e["blocks"], o.top_k, e["pairs"]
    d = p["deg"]
    lam = d / B
    if len(e["fams"]) == 2 or k is not None:
        recs_v = B * (1 - np.exp(-lam))
        ents_v = B * _min_poisson(k, lam)
    else:
        half = d / (2 * B)
        recs_v = (B - 1) * (1 - np.exp(-lam)) + 2 * (1 - np.exp(-half))
        ents_v = (B - 1) * _min_poisson(k, lam) + 2 * _min_poisson(k, half)
    n_rows = e["fams"][-1].N
    recs, ents = recs_v.mean() * n_rows, ents_v.mean() * n_rows
    return _step("rows", recs, ents, wire.stripe(recs, ents, wire.doc_key))


def _stripes_steps(e, wire, o, R):
    """The stripes and the rows of the stripes strategy."""
    p, f, k = e["pairs"], e["fams"][-1], o.top_k
    groups = R * _flushes(e["products"], R, o.buffer_entries)
    ents = _groups(p["shared"], groups) * p["pair_scale"]
    recs = _groups(f.kept_len, groups) * f.scale
    steps = [_step("sum", recs, ents, wire.stripe(recs, ents, wire.doc_key, wire.stats,
                                                  wire.stats))]
    if len(e["fams"]) == 2:
        rows_e = _min_poisson(k, p["deg"]).mean() * f.N
        rows_r = (p["deg"] > 0).mean() * f.N
    else:
        # mirrored scores go from a vector to the larger ids, and the sum
        # reducers hold contiguous key ranges: a vector at rank u hears from
        # the buffer flushes of the ranges below it, which hold the pairs
        # (p, q) with p < u, a share 2u - u² of them
        u = p["rank"]
        g = np.maximum((2 * u - u * u) * R * _flushes(p["kept_pairs"], R, o.buffer_entries),
                       1.0)
        rows_e = (_min_poisson(k, p["deg_up"]) + g * _min_poisson(
            k, p["deg_down"] / g)).mean() * f.N
        rows_r = ((p["deg_up"] > 0) + g * (1 - np.exp(-p["deg_down"] / g))).mean() * f.N
    steps.append(_step("rows", rows_r, rows_e, wire.stripe(rows_r, rows_e, wire.doc_key)))
    return steps


def job_steps(e, wire, o, R):
    """The steps of the job the plan models: ``vectors``, the strategy's,
    ``rows``; the blocks strategy without --max-df has no vectors step (its
    mappers feed the block pairs), nor a rows step where its pairs write the
    output lines (:func:`~mrjobs.strategies.scheme.pairs_write_rows`); the
    prefix strategy's run comes after its df run (:mod:`mrjobs.strategies.dftable`),
    without a vectors step where the sample has every id on one line."""
    if o.strategy == "blocks":
        steps = _blocks_steps(e, wire, o, R)
        return steps[:-1] if pairs_write_rows(e["blocks"], o.top_k, len(e["fams"]) == 2) else steps
    if o.strategy == "prefix":
        if o.max_df is not None or o.input_format == POSTINGS:  # its df steps
            return [vectors_step(e, wire), _postings_step(e, wire, "df", o, R)] + _prefix_steps(
                e, wire, o, R)
        # the df run first (mrjobs.strategies.dftable); a vectors step where
        # the sample has an id on more than one line
        f = e["fams"][0]
        unique = np.unique(f.s.docs).shape[0] == f.s.n
        return [_df_run_step(e, wire)] + ([] if unique else [vectors_step(e, wire)]) + (
            _prefix_steps(e, wire, o, R, direct=unique, table=True))
    return ([vectors_step(e, wire), _postings_step(e, wire, "stripes", o, R)]
            + _stripes_steps(e, wire, o, R))


def _blocks_steps(e, wire, o, R):
    """The blocks strategy's steps, the rows step last."""
    if o.max_df is None and o.input_format != POSTINGS:
        return [_direct_pairs_step(e, wire, o, e["map_tasks"]), _rows_blocks(e, wire, o)]
    # posting lists are merged into vectors by a vectors step first (the job's _direct)
    steps = [vectors_step(e, wire)]
    if e["df_cut_form"] == "join":
        steps.append(_postings_step(e, wire, "df", o, R))
        steps.append(_regroup_step(e, wire, o, R))
    return steps + [_pairs_step(e, wire, o, R), _rows_blocks(e, wire, o)]


def _df_run_step(e, wire):
    """The prefix strategy's df run: each map task's counts of its features
    and its lines' ids, combined (``parse``: the input, which its mappers
    read as a vectors step's would)."""
    M = e["map_tasks"]
    f = e["fams"][0]
    # a task's records: one a bucket (the ids' last byte) of features and of ids
    recs = M * 2 * 256.0
    ents = M * distinct_features(f.df, f.s.n, f.N / M) + f.N
    return dict(_step("df run", recs, ents, wire.stripe(recs, ents, wire.feat_key)),
                model="df run", parse=float(sum(wire.mapper)))


def _prefix_steps(e, wire, o, R, direct=None, table=False):
    """The prefix strategy's steps: ``prefix`` (each vector's kept entries
    with their df; only after the df steps: ``direct`` None), ``pairs`` (per
    feature and flush, a block of the vectors whose prefix holds it and one
    of their earlier prefix features; ``direct``: from the mappers, which
    read the input; ``table``: the features as their 4-byte places in the df
    table, not their 16 bytes; no earlier features where the sample's
    prepared weights are none negative and the df run would say so, or
    binary: :func:`~mrjobs.strategies.prefixing.repeats`), ``rows`` (each kept pair
    once a direction; a vector's pairs spread over its prefix features)."""
    f = e["fams"][0]
    steps = []
    if direct is None:
        kept = f.kept_len.sum() * f.scale
        groups = R * _flushes(kept, R, o.buffer_entries)
        recs = _groups(f.kept_len, groups) * f.scale
        steps.append(_step("prefix", recs, kept, wire.stripe(recs, kept, wire.doc_key, True,
                                                             wire.stats)))
    flushes = R * _flushes(e["prefix_entries"], R, o.buffer_entries)
    sides = 1 if e["prefix_repeats"] else 2
    earlier = e["prefix_earlier"] if sides == 2 else 0.0
    blocks = sides * _groups(e["prefix_groups"], flushes)
    # a feature: 16 bytes, or its place in the table, a varint of 1-5
    places = e["prefix_place_bytes"] + 4 * blocks if table else 16 * e["prefix_entries"]
    feature = 3 if table else 16  # (an earlier feature's: few, far apart)
    nbytes = (blocks * (wire.feat_key + 2 + 10 * wire.rho) + wire.rho * (
        e["prefix_copies"] * (sides * 20 + (8 if wire.stats else 0)) + places
        + e["prefix_entries"] * wire.wsize + earlier * (feature + 4)))
    steps.append(dict(_step("pairs", blocks, e["prefix_entries"] + earlier, nbytes),
                      groups=e["prefix_features"],
                      **(dict(model="prefix direct", parse=float(sum(wire.mapper)))
                         if direct else {})))
    deg, p = e["pairs"]["deg"], max(e["prefix_mean"], 1.0)
    rows_e = float((deg if o.top_k is None else np.minimum(deg, o.top_k * p)).mean() * f.N)
    rows_r = float((p * (1 - np.exp(-deg / p))).mean() * f.N)
    steps.append(_step("rows", rows_r, rows_e, wire.stripe(rows_r, rows_e, wire.doc_key)))
    return steps
