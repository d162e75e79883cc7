"""What a run of :class:`~mrjobs.dot_products.MRSparseDotProducts` will cost,
before it runs: a dry run that reads the input's size and a sample of it.

Usage::

    python -m mrjobs.plan INPUT... [the job's options] --reducers 40 --reducer-memory 4096
    python -m mrjobs.plan INPUT... --vectors 10000000     # the same corpus, scaled up
    python -m mrjobs.plan INPUT... --compare              # run the job here, side by side
    python -m mrjobs.plan --calibrate                     # measure this machine's throughput

It prints the block count (what the job would choose, by its own code),
block pairs, bytes shuffled into each step, memory of a block-pair reducer,
the products (multiply-adds, Σdf(df-1)/2 over the kept features), the pairs
that share a feature, and a time estimate.

The sample
----------
At most ``--sample-lines`` lines (default 5000), one after each of as many
evenly spaced byte offsets in the input files (in proportion to their
sizes): deterministic, and spread over the whole input.  The line *after*
an offset is taken, so a line's chance of being picked does not depend on
its own length.  An input of fewer lines than that is read whole.  The
number of vectors is the input's bytes divided by the sampled lines' mean
length (``--vectors N`` sets it, to extrapolate to a bigger corpus drawn
from the same distribution; under ``--queries`` it scales the corpus).

Estimators
----------
Vectors are taken as drawn independently from one distribution (a corpus
in random order, or a uniform sample of it), so a pair of sampled vectors
is a uniform sample of all pairs:

* products: Σ_f df_f(df_f - 1)/2 counts (pair, shared feature) triples;
  its unbiased estimate from ``n`` of ``N`` vectors is
  Σ_f d_f(d_f - 1)/2 · N(N-1)/(n(n-1)) with d_f the sample's df.  A feature
  seen once in the sample adds nothing (it adds nothing in expectation);
  the naive (d_f·N/n)²/2 would add (N/n)²/2 for each of them, an upward
  bias of about nnz·N/n for a small sample.
* the df-cut: a feature's df in the corpus is d_f·N/n (frequent features
  are resolved well); it is cut when that exceeds ``--max-df``.  When
  ``--max-df``·n/N is small (< 10), the cut falls among features seen a few
  times in the sample and the kept products are uncertain: the plan says so
  (sample more lines).
* pairs sharing a feature, each vector's neighbours (after
  ``--threshold``, scored by the job's own measure code): from a sub-sample
  of at most ``--pair-sample`` vectors (default 2000), scaled by
  N(N-1)/(m(m-1)) and (N-1)/(m-1).
* bytes: records built from the sample and encoded by the job's own wire
  protocol (escapes included); record counts from the buffers' flush rules
  (``--buffer-entries``) and ``--reducers`` reduce tasks a step.  ``--max-df``
  under blocks is planned in the form the job picks for ``-r`` and the block
  count (:func:`mrjobs.strategies.sizing.df_cut_form`): count tables to every block pair
  (three steps) or the df and regroup steps (five).

Time: measured constants of this machine (``--calibrate``: three runs of the job on generated
corpora on the local runner; the CPU seconds of each step's tasks fitted to k0 + c_bytes·bytes +
c_pairs·pairs, so that a busy machine does not inflate them; a step then takes c0 +
(c_bytes·bytes + c_pairs·pairs)/slots with c0 = k0/slots of the local run), stored with the date
and the machine in the package data ``mrjobs/plan/calibration.json`` (``make bench`` refreshes
it). A cluster's slot is taken to be as fast as one core here.

Depends on the job's own sizing code (:mod:`mrjobs.strategies.sizing`): ``estimate_blocks``,
``pair_memory_bytes``, ``DEFAULT_BLOCK_ENTRIES``, ``INPUT_BYTES_PER_ENTRY``, ``bytes_per_entry``
and ``default_blocks``.
"""
import argparse
import datetime
import glob
import json
import logging
import math
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from mrcodecs import ID_DTYPE
from mrcodecs.jobwire import Stripe
from mrjobs.strategies.sizing import (DEFAULT_BLOCK_ENTRIES, INPUT_BYTES_PER_ENTRY, MAX_BLOCKS,
                                      bytes_per_entry, cores, default_blocks, df_cut_form,
                                      estimate_blocks, pair_memory_bytes, reducers)
from mrjobs.kernels import sort_sum
from mrjobs.measures import MEASURES, get as get_measure, prepare_rows, score
from mrjobs.parsing import FORMATS, InputError, parse_vector
from mrjobs.runtime.paths import first_line, local_size, matches

__all__ = ["Sample", "read_sample", "estimate", "format_plan", "measure_run", "calibrate",
           "main", "PlanError"]

log = logging.getLogger(__name__)

#: the time constants the plan reads by default: package data, measured by
#: ``make bench`` (``--calibrate --calibration`` this file); a user's own
#: calibration is any path given to ``--calibration``
CALIBRATION = Path(__file__).resolve().parent / "calibration.json"
#: bytes of a decoded entry held by a stripes reducer (posting list: id, weight, stat)
POSTING_ENTRY_BYTES = 40
#: the largest --vectors: past it, products and pair counts leave float64's
#: exact range for counts and the steps' sums can overflow
MAX_VECTORS = 1e15
#: the largest --reducers and --num-cores (the job's default block count
#: grows with the cores of the local runner)
MAX_TASKS = 1_000_000
#: the largest --pair-sample: its pairs are scored as dense m x m arrays
MAX_PAIR_SAMPLE = 10_000
#: the largest calibration file read (a calibration is a few kB)
CALIBRATION_BYTES = 1 << 20


class PlanError(Exception):
    """A problem that stops the plan, told as one line."""


# -- the sample ----------------------------------------------------------------

class Sample:
    """Vectors sampled from one family's input, with what is needed to scale.

    Attributes: ``docs`` (S16), ``lengths``, ``feats`` (S16, vector after
    vector, sorted within one), ``weights``; ``total_bytes`` of the input,
    ``sampled_bytes`` and ``lines`` of the lines read, ``bad`` (lines the
    job would skip), ``complete`` (the whole input was read).
    """

    def __init__(self, docs, lengths, feats, weights, total_bytes, sampled_bytes, lines,
                 bad, complete, files):
        self.docs, self.lengths, self.feats, self.weights = docs, lengths, feats, weights
        self.total_bytes, self.sampled_bytes = total_bytes, sampled_bytes
        self.lines, self.bad, self.complete, self.files = lines, bad, complete, files

    @property
    def n(self):
        return self.docs.shape[0]

    def vectors(self):
        """Estimated vectors in the whole input."""
        if self.complete or not self.sampled_bytes:
            return float(self.n)
        return self.n * self.total_bytes / self.sampled_bytes


def input_files(path):
    """The local files of an input path (a file, a directory or a glob)."""
    if path == "-" or "://" in path:
        raise PlanError("the plan reads local files; %s is not one (copy a part of the "
                        "input here, and give --vectors N for the whole)" % path)
    if not glob.glob(path):
        raise PlanError("input path %s does not exist" % path)
    return list(matches(path))


def _offsets(sizes, lines):
    """Evenly spaced byte offsets, ``lines`` in all, shared among the files in
    proportion to their sizes (largest remainders)."""
    total = sum(sizes)
    share = np.array(sizes, np.float64) * lines / max(total, 1)
    count = np.floor(share).astype(int)
    rest = lines - int(count.sum())
    if rest > 0:
        count[np.argsort(-(share - count), kind="stable")[:rest]] += 1
    return [[int((i + 0.5) * size / c) for i in range(c)] if c else []
            for size, c in zip(sizes, count)]


def _sample_lines(files, sizes, lines):
    """(lines read, complete): every line of a small input, else one line after
    each evenly spaced offset."""
    total = sum(sizes)
    with open(files[int(np.argmax(sizes))], "rb") as f:
        head = f.read(1 << 16)
    mean = len(head) / max(1, head.count(b"\n")) if head else 1
    if total <= 1.5 * lines * mean:
        out = []
        for path in files:
            with open(path, "rb") as f:
                out.extend(f.read().splitlines())
        return out, True
    out = []
    for path, offsets in zip(files, _offsets(sizes, lines)):
        taken_end = -1
        with open(path, "rb") as f:
            for off in offsets:
                if off <= taken_end:
                    continue
                f.seek(off)
                f.readline()          # the rest of the line holding the offset
                start = f.tell()
                line = f.readline()
                if line:
                    out.append(line.rstrip(b"\r\n"))
                    taken_end = start + len(line) - 1
    return out, False


def read_sample(paths, lines=5000, fmt="auto"):
    """A :class:`Sample` of the input ``paths`` (local files, directories,
    globs): at most ``lines`` lines, parsed as the job parses them."""
    files = [f for p in paths for f in input_files(p)]
    sizes = [os.path.getsize(f) for f in files]
    if not sum(sizes):
        raise PlanError("the input (%s) is empty" % ", ".join(paths))
    raw, complete = _sample_lines(files, sizes, lines)
    docs, lengths, feats, weights = [], [], [], []
    bad = 0
    for line in raw:
        try:
            parsed = parse_vector(line, fmt)
        except InputError:
            bad += 1
            continue
        if parsed is None:
            continue
        doc, ids, w = parsed
        ids, w, _, _ = sort_sum(ids, w)
        keep = w != 0.0
        docs.append(doc)
        feats.append(ids[keep])
        weights.append(w[keep])
        lengths.append(int(keep.sum()))
    if not docs:
        raise PlanError("not one vector in the %d sampled line(s) of %s (%d bad): check "
                        "the input paths and --input-format" % (len(raw), ", ".join(paths), bad))
    return Sample(np.frombuffer(b"".join(docs), ID_DTYPE), np.array(lengths, np.int64),
                  np.concatenate(feats), np.concatenate(weights).astype(np.float64),
                  sum(sizes), sum(len(l) + 1 for l in raw), len(raw), bad, complete,
                  len(files))


# -- estimates -----------------------------------------------------------------

class _Family:
    """One family's sample, scaled to ``N`` vectors, with prepared weights."""

    def __init__(self, sample, n_target, measure):
        self.s = sample
        self.N = float(n_target) if n_target else sample.vectors()
        self.scale = self.N / sample.n
        self.prepared, self.stats = prepare_rows(measure, sample.weights, sample.lengths)
        self.row = np.repeat(np.arange(sample.n), sample.lengths)


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


def _distinct(df, n, m):
    """Expected distinct features among ``m`` vectors, from the sample's df
    (``n`` vectors); beyond ``n``, Heaps' law fitted on the sample."""
    def within(k):
        return float((1.0 - (1.0 - min(k, n) / n) ** df[df > 0]).sum())
    if m <= n:
        return within(m)
    full, half = within(n), within(n / 2)
    beta = min(1.0, max(0.0, np.log2(full / half))) if half > 0 else 1.0
    return full * (m / n) ** beta


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
    out = {"pair_scale": pair_scale, "deg": deg}
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


# -- bytes of each step ----------------------------------------------------------

class _Wire:
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

    def block(self, records, vectors, entries, blocks):
        return records * (self.block_key(blocks) + 2 + 10 * self.rho) + self.rho * (
            vectors * (20 + (8 if self.stats else 0)) + entries * (16 + self.wsize))


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


def _vectors_step(e, wire):
    f = e["fams"]
    return _step("vectors", sum(x.N for x in f), sum(x.s.lengths.sum() * x.scale for x in f),
                 sum(wire.mapper))


def _postings_step(e, wire, name, o, R):
    """Posting fragments (feature -> documents) from the vectors reducers."""
    recs = 0.0
    for f in e["fams"]:
        nnz = f.s.lengths.sum() * f.scale
        flushes = _flushes(nnz, R, o.buffer_entries)
        recs += R * flushes * _distinct(f.df, f.s.n, f.N / (R * flushes))
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
    tables = sum(_distinct(f.df, f.s.n, f.N / R) for f in e["fams"])
    return R * len(e["fams"]) * P, R * tables * P


def _rows_blocks(e, wire, o):
    """Partial rows of the block pairs: each row vector's neighbours in each
    block, cut to --top-k (both directions of a diagonal pair apart)."""
    B, k, p = e["blocks"], o.top_k, e["pairs"]
    d = p["deg"]
    lam = d / B
    if len(e["fams"]) == 2:
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


def _steps(e, wire, o, R):
    steps = [_vectors_step(e, wire)]
    if o.strategy == "stripes":
        steps.append(_postings_step(e, wire, "stripes", o, R))
        return steps + _stripes_steps(e, wire, o, R)
    if e["df_cut_form"] == "join":
        steps.append(_postings_step(e, wire, "df", o, R))
        steps.append(_regroup_step(e, wire, o, R))
    return steps + [_pairs_step(e, wire, o, R), _rows_blocks(e, wire, o)]


# -- blocks, memory, time ----------------------------------------------------------

def job_args(o, inputs=None):
    """The dot-products job's command line for the plan's options."""
    args = list(inputs if inputs is not None else o.inputs)
    for flag, value in (("--queries", o.queries), ("--strategy", o.strategy),
                        ("--blocks", o.blocks), ("--buffer-entries", o.buffer_entries),
                        ("--max-df", o.max_df), ("--top-k", o.top_k),
                        ("--threshold", o.threshold), ("--measure", o.measure),
                        ("--num-features", o.num_features), ("--input-format", o.input_format),
                        ("-r", o.runner), ("--num-cores", o.num_cores)):
        if value is not None:
            args += [flag, str(value)]
    for flag, on in (("--float32", o.float32), ("--include-self", o.include_self)):
        if on:
            args.append(flag)
    return args


def _job_blocks(o, input_bytes):
    """The block count the job would choose: ``--blocks``, else the job's own
    default for this input (or, with --vectors, for an input of
    ``input_bytes``, by the same rule); and the default's rule before the
    job's limit of :data:`~mrjobs.strategies.sizing.MAX_BLOCKS` (None when
    within it)."""
    if o.blocks is not None:
        return o.blocks, None
    if o.vectors is None:
        paths = (list(o.inputs) or ["-"]) + ([o.queries] if o.queries else [])
        logging.getLogger("mrjobs.strategies.sizing").disabled = True
        try:
            bpe = bytes_per_entry(o.input_format, first_line(o.inputs or ["-"]))
            b = default_blocks(local_size(paths), o.runner, o.num_cores, input_bytes_per_entry=bpe)
        finally:
            logging.getLogger("mrjobs.strategies.sizing").disabled = False
    else:
        b = estimate_blocks(int(input_bytes) // INPUT_BYTES_PER_ENTRY, reducers(o.runner, o.num_cores))
    return (b, None) if b <= MAX_BLOCKS else (MAX_BLOCKS, b)


def _suggest_blocks(entries, o, R):
    """The smallest B with at least 4 block pairs a reduce task (one block for
    a small input, as the job's default), blocks of at most
    DEFAULT_BLOCK_ENTRIES and a pair reducer within --reducer-memory."""
    top = MAX_BLOCKS
    b = min(estimate_blocks(entries, min(R, MAX_TASKS), DEFAULT_BLOCK_ENTRIES), top)
    if o.reducer_memory:
        limit = o.reducer_memory * 2 ** 20
        while pair_memory_bytes(entries, b, o.buffer_entries) > limit and b < top:
            b = min(max(b + 1, int(b * 1.1)), top)
    return b


def load_calibration(path):
    """The time constants stored by --calibrate, or None when ``path`` does
    not exist or is empty (``/dev/null``).

    Raises
    ------
    PlanError
        When ``path`` cannot be read or does not hold a calibration (a JSON
        object whose ``constants`` are the finite numbers ``c0``,
        ``c_bytes`` and ``c_pairs``).
    """
    try:
        with open(path, "rb") as f:
            raw = f.read(CALIBRATION_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise PlanError("--calibration %s: cannot be read (%s)" % (
            path, err.strerror or err)) from None
    if not raw.strip():
        return None
    bad = "--calibration %s: not a calibration written by --calibrate (%%s)" % path
    if len(raw) > CALIBRATION_BYTES:
        raise PlanError(bad % "more than %d bytes" % CALIBRATION_BYTES)
    try:
        cal = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise PlanError(bad % "not JSON") from None
    constants = cal.get("constants") if isinstance(cal, dict) else None
    if not isinstance(constants, dict):
        raise PlanError(bad % 'no "constants" object')
    for key in ("c0", "c_bytes", "c_pairs"):
        v = constants.get(key)
        if v.__class__ not in (int, float) or not math.isfinite(v) or v < 0:
            raise PlanError(bad % '"constants" needs %s, a finite number >= 0, found %.40r'
                            % (key, v))
    return cal


def _seconds(steps, e, R, cal):
    """Estimated wall seconds: per step c0 + c_bytes * bytes / slots, plus
    c_pairs * (products computed) / slots on the block pairs (constants per
    slot, a slot as fast as one core of the calibrating machine)."""
    if not cal:
        return None
    c = cal["constants"]
    total = 0.0
    for s in steps:
        work, slots = c["c_bytes"] * s["bytes"], R
        if s["step"] == "pairs":
            work += c["c_pairs"] * e["products_computed"]
            slots = min(R, e["block_pairs"])
        total += c["c0"] + work / max(slots, 1)
    return total


def _reducers(o):
    """Reduce tasks a step: --reducers, else what mrjob's local and inline
    runners start (they split each step's input in about two per core)."""
    if o.reducers:
        return o.reducers
    if o.runner in (None, "inline", "local"):
        return 2 * cores(o.num_cores)
    return 1


def _products_computed(e, o):
    """Entries of the block pairs' sparse products (the job's counter
    ``products computed``): every pair sharing a kept feature, once (a
    diagonal pair computes only its upper triangle), and under
    ``--include-self`` each vector with itself."""
    p, f = e["pairs"], e["fams"][-1]
    if len(e["fams"]) == 2 or not o.include_self:
        return p["pairs"]
    return p["pairs"] + (f.kept_len > 0).sum() * f.scale


def estimate(corpus, queries, o, calibration=None):
    """The plan: a dict of estimates for the options ``o`` (see :func:`main`)."""
    fams = [_Family(corpus, o.vectors, o.measure)]
    if queries is not None:
        fams.append(_Family(queries, None, o.measure))
    n_feat, df_hat, kept = _features(fams, o.max_df)
    if get_measure(o.measure).needs_n_features and o.num_features < n_feat:
        raise PlanError("--num-features %d is fewer than the %d distinct features of the "
                        "sample: it must count the distinct features of the whole corpus "
                        "(the line count of the inverted index job's output)"
                        % (o.num_features, n_feat))
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
        B, e["blocks_over_limit"] = _job_blocks(o, e["input_bytes"])
        e["blocks"] = B
        e["block_pairs"] = B * B if queries is not None else B * (B + 1) // 2
        # --max-df: the form the job would choose for this runner and B
        e["df_cut_form"] = (None if o.max_df is None
                            else df_cut_form(o.runner, B, queries is not None))
        # a pair decodes its blocks whole: in the counts form it applies the
        # cut itself, in the join form its blocks hold the kept entries
        entries = (e["kept_entries"] if e["df_cut_form"] == "join" else
                   sum(f.s.lengths.sum() * f.scale for f in fams)) / (
            2 if queries is not None else 1)
        e["memory"] = pair_memory_bytes(entries, B, o.buffer_entries)
        e["suggested_blocks"] = _suggest_blocks(entries, o, R)
        e["products_computed"] = _products_computed(e, o)
    else:
        e["memory"] = e["max_df_kept"] * POSTING_ENTRY_BYTES + o.buffer_entries * 48
    wire = _Wire(fams, o)
    if o.runner == "local" and not o.reducers:
        # the job's local runner starts a task per SPLIT_BYTES of a step's
        # input, at most one a core up to BALANCE_BYTES a core: size R by the
        # vectors step (its reducers send the --max-df count tables), whose
        # bytes do not depend on R
        from mrjobs.runtime.localrunner import SPLIT_BYTES, task_count
        R = e["reducers"] = task_count(int(_vectors_step(e, wire)["bytes"]),
                                       cores(o.num_cores), SPLIT_BYTES)
    e["steps"] = _steps(e, wire, o, R)
    e["seconds"] = _seconds(e["steps"], e, R, calibration)
    e["calibration"] = calibration
    if o.max_df is not None:
        smallest = min(f.s.n / f.N for f in fams) * o.max_df
        e["cut_resolution"] = smallest   # the cut's df, in sample counts
    return e


# -- printing --------------------------------------------------------------------

def _n(x):
    """A count for people: 1,234,567 below 10^10, else 1.23e+12."""
    return format(int(round(x)), ",") if x < 1e10 else "%.3g" % x


def _size(b):
    for unit, div in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= div:
            return "%.3g %s" % (b / div, unit)
    return "%d B" % b


def _duration(s):
    if s < 120:
        return "%.0f s" % s
    if s < 2 * 3600:
        return "%.0f min" % (s / 60)
    if s < 3 * 86400:
        return "%.1f h" % (s / 3600)
    return "%.1f days" % (s / 86400)


def _sample_line(e, o):
    parts = []
    for f, name in zip(e["fams"], ("input", "queries")):
        s = f.s
        how = "the whole input" if s.complete else "%s evenly spaced lines" % _n(s.lines)
        parts.append("%s: %d file(s), %s; sample %s, %s vectors%s -> %s vectors%s" % (
            name, s.files, _size(s.total_bytes), how, _n(s.n),
            " (%d bad lines)" % s.bad if s.bad else "", _n(f.N),
            " (--vectors)" if name == "input" and o.vectors else ""))
    return parts


def _warnings(e, o):
    out = []
    if e.get("blocks_over_limit"):
        out.append("the job's default rule (blocks of at most %s entries) gives %s blocks for "
                   "this input, beyond the job's limit of %s: planned with --blocks %d; the "
                   "blocks strategy does not suit a corpus this size (--max-df, --strategy "
                   "stripes, or a part of the corpus)" % (
                       _n(DEFAULT_BLOCK_ENTRIES), _n(e["blocks_over_limit"]),
                       _n(e["blocks"]), e["blocks"]))
    if o.reducer_memory and e["memory"] > o.reducer_memory * 2 ** 20:
        out.append("a %s reducer needs about %s, more than --reducer-memory %d MB: %s" % (
            "block-pair" if o.strategy == "blocks" else "stripes", _size(e["memory"]),
            o.reducer_memory, "use more blocks (--blocks %d), --max-df or bigger reducers"
            % e["suggested_blocks"] if o.strategy == "blocks" and e["suggested_blocks"] >
            e["blocks"] else "use --max-df or bigger reducers" if o.strategy == "blocks"
            else "use --max-df"))
    if o.strategy == "blocks" and e["block_pairs"] < e["reducers"]:
        out.append("%d block pairs for %d reduce tasks: some reducers of the pairs step idle "
                   "(--blocks %d)" % (e["block_pairs"], e["reducers"], e["suggested_blocks"]))
    if e.get("cut_resolution", 99) < 10:
        out.append("--max-df %d is %.2g vectors of the sample: the df-cut is decided on "
                   "features seen a few times, the kept products are uncertain (raise "
                   "--sample-lines)" % (o.max_df, e["cut_resolution"]))
    return out


def format_plan(e, o):
    """The plan as text."""
    lines = ["mrsparse plan: " + s for s in _sample_line(e, o)]
    lines.append("  entries: %s (kept: %s)%s" % (
        _n(sum(f.s.lengths.sum() * f.scale for f in e["fams"])), _n(e["kept_entries"]),
        "; --max-df %d cuts %s of the %s features seen in the sample" % (
            o.max_df, _n(e["features_cut"]), _n(e["features_seen"])) if o.max_df else ""))
    lines.append("  products (multiply-adds, sum df(df-1)/2): %s" % _n(e["products"]))
    lines.append("  pairs sharing a feature: %s; with a score kept: %s" % (
        _n(e["pairs"]["pairs"]), _n(e["pairs"]["kept_pairs"])))
    if o.strategy == "blocks":
        lines.append("  blocks: %d (%s), %s block pairs; block-pair products computed: %s"
                     % (e["blocks"], "--blocks" if o.blocks else "the job's default",
                        _n(e["block_pairs"]), _n(e["products_computed"])))
        if e["df_cut_form"] is not None:
            lines.append("    --max-df in the %s form (%s)" % (e["df_cut_form"], {
                "counts": "count tables to every block pair, 3 steps",
                "join": "df and regroup steps, 5 steps"}[e["df_cut_form"]]))
        if e["suggested_blocks"] != e["blocks"] and (o.reducers or o.reducer_memory):
            lines.append("    for %d reduce tasks%s: --blocks %d" % (
                e["reducers"], " of %d MB" % o.reducer_memory if o.reducer_memory else "",
                e["suggested_blocks"]))
    lines.append("  memory of a %s reducer: about %s" % (
        "block-pair" if o.strategy == "blocks" else "stripes", _size(e["memory"])))
    lines.append("  shuffle (bytes into the reducers), %d reduce tasks a step:" % e["reducers"])
    for i, s in enumerate(e["steps"]):
        lines.append("    step %d %-8s %10s  (%s records, %s entries)" % (
            i + 1, s["step"], _size(s["bytes"]), _n(s["records"]), _n(s["entries"])))
    lines.append("    total         %10s" % _size(sum(s["bytes"] for s in e["steps"])))
    lines.append("  time: " + _time_line(e, o))
    lines += ["  warning: " + w for w in _warnings(e, o)]
    return "\n".join(lines)


def _time_line(e, o):
    cal = e.get("calibration")
    if e["seconds"] is None:
        return ("no estimate: no calibration at %s (run python -m mrjobs.plan --calibrate)"
                % o.calibration)
    machine = cal.get("machine")
    cpu = machine.get("cpu_model") if isinstance(machine, dict) else None
    date = cal.get("date")
    return ("about %s with %d reduce slots, each as fast as one core of %s (constants "
            "measured %s, %s)" % (_duration(e["seconds"]), e["reducers"],
                                  cpu if isinstance(cpu, str) else "an unnamed machine",
                                  date[:10] if isinstance(date, str) else "on an unknown date",
                                  o.calibration))


def as_json(e):
    """The plan's numbers as a JSON-able dict."""
    out = {k: v for k, v in e.items() if k not in ("fams", "pairs", "calibration", "df_hat")}
    out["vectors"] = [f.N for f in e["fams"]]
    out["pairs"] = float(e["pairs"]["pairs"])
    out["kept_pairs"] = float(e["pairs"]["kept_pairs"])
    return json.loads(json.dumps(out, default=float))


# -- real runs: --compare and --calibrate --------------------------------------------

class _StepTimes(logging.Handler):
    """Times of mrjob's 'Running step N of M' log records."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.starts = []
        self.cpu = []

    def emit(self, record):
        if record.getMessage().startswith("Running step "):
            self.mark()

    def mark(self):
        self.starts.append(time.monotonic())
        self.cpu.append(_children_cpu())


def _children_cpu():
    """CPU seconds of the waited-for child processes (the local runner's tasks
    and sort, reaped at the end of each phase of a step)."""
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measure_run(args, num_cores=2, runner="local"):
    """Run the job on the local (or inline) runner, in a temporary directory
    that is removed afterwards, and measure it.

    Returns
    -------
    dict
        ``counters`` (mrjob's, a dict per step), ``step_bytes`` (the size of
        each step's sorted reducer input: the bytes shuffled into it),
        ``step_seconds``, ``seconds``, ``work`` (the group ``mrsparse work``
        summed over the steps).
    """
    from mrjobs.dot_products import MRSparseDotProducts
    tmp = tempfile.mkdtemp(prefix="mrsparse-plan-")
    handler = _StepTimes()
    mrjob_log = logging.getLogger("mrjob")
    level = mrjob_log.level
    mrjob_log.addHandler(handler)
    mrjob_log.setLevel(logging.INFO)
    try:
        job = MRSparseDotProducts(list(args) + [
            "-r", runner, "--num-cores", str(num_cores), "--no-conf",
            "--local-tmp-dir", tmp, "--cleanup", "NONE"])
        t0 = time.monotonic()
        with job.make_runner() as runner:
            runner.run()
            handler.mark()
            counters = runner.counters()
        sizes = {int(p.parent.parent.name): p.stat().st_size
                 for p in Path(tmp).glob("*/step/*/reducer/sorted-input")}
    finally:
        mrjob_log.removeHandler(handler)
        mrjob_log.setLevel(level)
        shutil.rmtree(tmp, ignore_errors=True)
    starts, cpu = handler.starts, handler.cpu
    work = {}
    for step in counters:
        for name, n in step.get("mrsparse work", {}).items():
            work[name] = work.get(name, 0) + n
    return {"counters": counters, "step_bytes": [sizes.get(i, 0) for i in range(len(counters))],
            "step_seconds": np.diff(starts).tolist(), "step_cpu": np.diff(cpu).tolist(),
            "seconds": starts[-1] - t0, "work": work}


def comparison(e, run):
    """Rows (what, plan, run) of a plan against a measured run."""
    rows = [("step %d %s bytes" % (i + 1, s["step"]), s["bytes"], b)
            for i, (s, b) in enumerate(zip(e["steps"], run["step_bytes"]))]
    rows.append(("shuffle bytes", sum(s["bytes"] for s in e["steps"]),
                 sum(run["step_bytes"])))
    w = run["work"]
    if "partial products" in w:
        rows.append(("products (partial products)", e["products"], w["partial products"]))
    if "products computed" in w:
        rows.append(("products computed", e["products_computed"], w["products computed"]))
        rows.append(("blocks", e["blocks"], _blocks_of(w.get("block pairs", 0),
                                                         len(e["fams"]) == 2)))
    if "pairs scored" in w:
        rows.append(("pairs scored", e["pairs"]["pairs"], w["pairs scored"]))
    if e["seconds"] is not None:
        rows.append(("seconds", e["seconds"], run["seconds"]))
    return rows


def _blocks_of(pairs, queries):
    """B from the number of block pairs B(B+1)/2 (B*B under --queries)."""
    if queries:
        return int(round(np.sqrt(pairs)))
    return int(round((np.sqrt(8 * pairs + 1) - 1) / 2))


def format_comparison(rows):
    out = ["%-30s %16s %16s %8s" % ("", "plan", "run", "plan/run")]
    for what, plan, real in rows:
        ratio = "%.3f" % (plan / real) if real else "-"
        out.append("%-30s %16s %16s %8s" % (what, _n(plan), _n(real), ratio))
    return "\n".join(out)


#: the calibration's corpora: (vectors, Zipf exponent, vocabulary); the 8,000
#: at Zipf 0.8 have rare features (few pairs for their bytes), which tells pairs
#: from bytes; the 20,000 give products enough to weigh beside the steps'
#: fixed costs (with the C pair kernel, the smaller runs alone fitted 0 s a product)
CALIBRATION_CORPORA = ((2000, 1.1, 100000), (8000, 1.1, 100000), (8000, 0.8, 1000000),
                       (20000, 1.1, 100000))


def calibrate(path, num_cores=2, corpora=CALIBRATION_CORPORA, log_to=sys.stderr):
    """Run the job on generated corpora (50 features a vector, cosine, top 10,
    default blocks) on the local runner, fit the time constants per step and
    write them, with the date and the machine, to ``path``."""
    from scipy.optimize import nnls
    from mrjobs.generate import write_corpus
    runs, a, t = [], [], []
    with tempfile.TemporaryDirectory(prefix="mrsparse-calibrate-") as d:
        for n, zipf, vocabulary in corpora:
            corpus = os.path.join(d, "c%d-%g.jsonl" % (n, zipf))
            write_corpus(corpus, vectors=n, zipf=zipf, vocabulary=vocabulary, seed=2,
                         progress=False)
            run = measure_run([corpus, "--measure", "cosine", "--top-k", "10"], num_cores)
            pc = run["work"].get("products computed", 0)
            for i, (b, s) in enumerate(zip(run["step_bytes"], run["step_cpu"])):
                a.append([1.0, b, pc if i == 1 else 0])
                t.append(s)
            runs.append({"vectors": n, "zipf": zipf, "vocabulary": vocabulary,
                         "seconds": run["seconds"], "step_bytes": run["step_bytes"],
                         "step_seconds": run["step_seconds"], "step_cpu": run["step_cpu"],
                         "products_computed": pc})
            print("calibration: %d vectors (Zipf %g), %.1f s, step CPU %s s" % (
                n, zipf, run["seconds"], ", ".join("%.1f" % s for s in run["step_cpu"])),
                file=log_to)
    # CPU seconds (not wall: the machine may be busy) of the tasks of each step
    (k0, cb, cp), _ = nnls(np.array(a), np.array(t))
    c0 = k0 / num_cores
    result = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "machine": _machine(), "slots": num_cores, "runner": "local",
              "model": "step seconds = c0 + (c_bytes * bytes + c_pairs * products computed) "
                       "/ slots; fitted on the tasks' CPU seconds a step (c0: their "
                       "fixed part over the local slots)",
              "constants": {"c0": c0, "c_bytes": cb, "c_pairs": cp},
              "runs": runs, "loadavg": list(os.getloadavg())}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return result


def _machine():
    import scipy
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cpu_model": cpu, "cpu_count": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version(), "numpy": np.__version__,
            "scipy": scipy.__version__}


def _finite_float(text):
    """An argparse type: a finite float (nan and inf are refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("invalid float value: %r" % text) from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError("must be a finite number, not %s" % text)
    return value


def _parser():
    ap = argparse.ArgumentParser(
        prog="python -m mrjobs.plan",
        description="What a run of python -m mrjobs.dot_products will cost: block count, "
                    "block pairs, bytes shuffled per step, memory per reducer, products and "
                    "time, from the input's size and a sample of it. The job's options "
                    "mean what they mean there.")
    ap.add_argument("inputs", nargs="*", metavar="INPUT")
    job = ap.add_argument_group("the job's options")
    job.add_argument("--queries", metavar="PATH")
    job.add_argument("--strategy", choices=("blocks", "stripes"), default="blocks")
    job.add_argument("--blocks", type=int, metavar="N")
    job.add_argument("--buffer-entries", type=int, default=1000000, metavar="N")
    job.add_argument("--max-df", type=int, metavar="N")
    job.add_argument("--top-k", type=int, metavar="K")
    job.add_argument("--threshold", type=float, metavar="T")
    job.add_argument("--measure", choices=MEASURES, default="dot")
    job.add_argument("--num-features", type=int, metavar="N")
    job.add_argument("--include-self", action="store_true")
    job.add_argument("--float32", action="store_true")
    job.add_argument("--input-format", choices=FORMATS, default="auto")
    job.add_argument("-r", "--runner", help="the runner the job will use (its default "
                     "block count depends on it: local counts the cores)")
    job.add_argument("--num-cores", type=int, metavar="N")
    cl = ap.add_argument_group("the cluster and the plan")
    cl.add_argument("--reducers", type=int, metavar="N",
                    help="reduce tasks (and slots) of each step (default: 2 per core on "
                         "the local and inline runners, else 1, Hadoop's default)")
    cl.add_argument("--reducer-memory", type=int, metavar="MB",
                    help="memory of one reduce task; warns when a reducer needs more")
    cl.add_argument("--vectors", type=_finite_float, metavar="N",
                    help="plan for N vectors drawn like the input's (default: the input's "
                         "estimated count)")
    cl.add_argument("--sample-lines", type=int, default=5000, metavar="N",
                    help="lines to sample (default 5000; a smaller input is read whole)")
    cl.add_argument("--pair-sample", type=int, default=2000, metavar="N",
                    help="vectors of the sample whose pairs are scored (default 2000, "
                         "at most %d)" % MAX_PAIR_SAMPLE)
    cl.add_argument("--calibration", default=str(CALIBRATION), metavar="PATH",
                    help="time constants (default %(default)s)")
    cl.add_argument("--calibrate", action="store_true",
                    help="measure this machine's throughput (three local runs) and write "
                         "--calibration")
    cl.add_argument("--compare", action="store_true",
                    help="also run the job here (local runner) and print plan against run")
    cl.add_argument("--json", action="store_true", help="print the plan as JSON")
    return ap


def _check(ap, o):
    for name in ("num_cores", "reducers"):
        v = getattr(o, name)
        if v is not None and v > MAX_TASKS:
            ap.error("--%s must be at most %d, not %d" % (name.replace("_", "-"), MAX_TASKS, v))
    if o.calibrate:
        if o.num_cores is not None and o.num_cores < 1:
            ap.error("--num-cores must be at least 1")
        _check_writable(ap, o.calibration)
        return
    if not o.inputs:
        ap.error("give the job's INPUT paths (or --calibrate)")
    if "" in o.inputs or o.queries == "":
        ap.error("an input path is empty (%s)" % ("--queries ''" if o.queries == "" else
                                                  "INPUT ''"))
    for name in ("blocks", "buffer_entries", "max_df", "top_k", "reducers", "reducer_memory",
                 "num_cores", "num_features"):
        v = getattr(o, name)
        if v is not None and v < 1:
            ap.error("--%s must be at least 1" % name.replace("_", "-"))
    if o.vectors is not None and not 2 <= o.vectors <= MAX_VECTORS:
        ap.error("--vectors must be a number from 2 to %g, not %s" % (MAX_VECTORS, o.vectors))
    if o.sample_lines < 2 or o.pair_sample < 2:
        ap.error("--sample-lines and --pair-sample must be at least 2")
    if o.pair_sample > MAX_PAIR_SAMPLE:
        ap.error("--pair-sample must be at most %d (its pairs are scored as dense arrays), "
                 "not %d" % (MAX_PAIR_SAMPLE, o.pair_sample))
    try:
        load_calibration(o.calibration)
    except PlanError as err:
        ap.error(str(err))
    if o.strategy == "stripes" and o.blocks is not None:
        ap.error("--blocks applies to --strategy blocks only")
    if get_measure(o.measure).needs_n_features and o.num_features is None:
        ap.error("--measure %s needs --num-features N" % o.measure)
    from mrjobs.dot_products import MRSparseDotProducts
    try:  # the job's own checks of its options
        MRSparseDotProducts(job_args(o) + ["--no-conf"])
    except ValueError as e:
        ap.error(str(e))


def _check_writable(ap, path):
    """--calibrate writes ``path`` after minutes of runs: refuse at once a path
    it could not write (the directories it makes are the ones it would make)."""
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        existed = os.path.lexists(path)
        with open(path, "ab"):
            pass
        if not existed:
            os.unlink(path)
    except OSError as err:
        ap.error("--calibration %s: cannot be written (%s)" % (path, err.strerror or err))


def plan(o):
    """Sample the input and estimate: the plan's dict for the parsed options."""
    corpus = read_sample(o.inputs, o.sample_lines, o.input_format)
    queries = read_sample([o.queries], o.sample_lines, o.input_format) if o.queries else None
    return estimate(corpus, queries, o, load_calibration(o.calibration))


def main(argv=None):
    ap = _parser()
    o = ap.parse_args(argv)
    _check(ap, o)
    try:
        if o.calibrate:
            r = calibrate(o.calibration, o.num_cores or 2)
            print("calibration written to %s: %s" % (o.calibration, ", ".join(
                "%s=%.3g" % kv for kv in r["constants"].items())))
            return
        if o.compare:
            if o.vectors is not None:
                ap.error("--compare runs the input itself: leave out --vectors")
            # the run is local: plan for the local runner's reduce tasks
            o.runner, o.reducers, o.num_cores = "local", None, o.num_cores or 2
        e = plan(o)
        if not o.json:
            print(format_plan(e, o), flush=True)
        out = {"plan": as_json(e)}
        if o.compare:
            run = measure_run(job_args(o, o.inputs), o.num_cores or 2)
            out["run"] = {k: v for k, v in run.items() if k != "counters"}
            out["comparison"] = comparison(e, run)
            if not o.json:
                print(format_comparison(out["comparison"]))
        if o.json:
            print(json.dumps(out, indent=2, default=float))
    except (PlanError, OSError) as err:
        print("mrsparse plan: error: %s" % err, file=sys.stderr)
        sys.exit(1)
    except MemoryError:
        print("mrsparse plan: error: out of memory (lower --sample-lines or --pair-sample)",
              file=sys.stderr)
        sys.exit(1)
