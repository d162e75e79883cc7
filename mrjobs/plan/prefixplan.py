"""The plan of the prefix strategy (:mod:`mrjobs.strategies.prefix`): each
sample vector's prefix found as the job finds it, scaled to the whole.

The job orders features by their df over the whole corpus; the plan orders
them by the sample's estimated df (``df_hat``, the same order up to the
sample's noise) and takes each sample vector's prefix with the job's own
rule (:func:`mrjobs.strategies.prefixing.prefix_lengths`).  A vector's prefix
does not depend on the corpus size, only on its weights and the order, so the
copies and entries sent scale with the vectors.  A prefix feature's group
does: a feature in the prefixes of ``m`` sample vectors is in those of about
``m N / n`` of the whole, and its reducer scores about ``(m N / n)^2 / 2``
pairs.
"""
import numpy as np

from mrjobs.plan.wirecost import distinct_features, heaps_beta
from mrjobs.parsing import POSTINGS
from mrjobs.strategies.prefixing import parts_of, prefix_lengths, repeats

__all__ = ["prefix_estimates"]

#: bytes a prefix-pair reducer holds per entry of its group (the decoded
#: block, its CSR copy and the column numbering)
GROUP_ENTRY_BYTES = 64


def prefix_estimates(e, fams, o):
    """The prefix strategy's part of the plan ``e``: prefixes, copies,
    entries sent, products, the largest group's share and memory."""
    f = fams[0]
    keep = f.kept
    col, row = f.col[keep], f.row[keep]
    w = f.prepared[keep]
    lengths = np.bincount(row, minlength=f.s.n)
    order = np.lexsort((col, e["df_hat"][col], row))  # (df, UUID): columns are in UUID order
    p = prefix_lengths(o.measure, o.threshold, lengths, w[order], f.stats)
    starts = np.cumsum(lengths) - lengths
    j = np.arange(order.shape[0]) - starts[row[order]]
    in_prefix = j < p[row[order]]
    group = np.bincount(col[order][in_prefix], minlength=e["df_hat"].shape[0]) * f.scale
    # a feature held by more than HOT_VECTORS vectors goes to s parts: each of
    # its copies to s keys, each pair of parts a group (within one part: the
    # diagonal; across two: both parts, their pairs within one part dropped)
    parts = parts_of(np.ceil(e["df_hat"])).astype(np.float64)
    pc = col[order][in_prefix]
    # a copy goes to a prefix feature another vector holds too: a feature the
    # sample has more than once does; one it has once, unless it is one of
    # the whole's own hapaxes (sent: the share that is not)
    whole = distinct_features(f.df, f.s.n, f.N)  # the whole's features
    sent = np.where(f.df[pc] >= 2, 1.0, 1.0 - _hapax_share(f, whole))
    if o.include_self:
        sent[j[in_prefix] == 0] = 1.0
    rep = parts[pc] * sent
    vec = row[order][in_prefix]
    # a copy's earlier prefix features: the copies of its vector before it
    ends = np.cumsum(sent)
    first = np.searchsorted(vec, vec)
    before = ends - sent - np.concatenate(([0.0], ends))[first]
    e["prefix_mean"] = float(p.mean()) if p.shape[0] else 0.0
    e["prefix_copies"] = float(rep.sum() * f.scale)
    # copies without their earlier features where no prepared weight is
    # negative, as the df run finds (only the launcher's run has one)
    table = o.max_df is None and o.input_format != POSTINGS
    e["prefix_repeats"] = repeats(o.measure, table and bool((w >= 0).all()))
    # a copy: its vector from its feature on (whole under --top-k, unless repeats)
    whole_copies = o.top_k is not None and not e["prefix_repeats"]
    held = lengths[vec] - (0 if whole_copies else j[in_prefix])
    e["prefix_entries"] = float((rep * held).sum() * f.scale)
    # and the bytes of their places in the df table (varints of their
    # differences: the whole's features over a copy's entries apart)
    e["prefix_place_bytes"] = float((rep * held * varint_bytes(whole / (held + 1.0))).sum()
                                    * f.scale)
    e["prefix_earlier"] = float((rep * before).sum() * f.scale)
    m = _group_estimates(e, group, parts, o.include_self)
    # distinct prefix features among the whole's vectors: beyond the sample,
    # Heaps' law fitted on it (a real vocabulary grows with the corpus, and its
    # new features are the rare ones, which the prefixes hold)
    e["prefix_features"] = distinct_features(group / f.scale, f.s.n, f.N)
    biggest = float((2 * m).max()) if group.shape[0] else 0.0
    mean_len = float(lengths.mean()) if lengths.shape[0] else 0.0
    # and the df table each task of the job's run holds (without --max-df): 16 + 8 bytes a
    # feature of the whole
    table = 0.0 if o.max_df is not None else 24 * whole
    e["memory"] = biggest * mean_len * GROUP_ENTRY_BYTES + o.buffer_entries * 48 + table


def _group_estimates(e, group, parts, include_self):
    """The prefix features' groups (of ``group`` vectors each, in ``parts``),
    their products, the largest's share and the keys, into ``e``; the vectors
    a part."""
    e["prefix_groups"] = np.repeat(group / parts, (parts * (parts + 1) // 2).astype(np.int64))[
        np.repeat(group > 0, (parts * (parts + 1) // 2).astype(np.int64))]
    m = group / parts  # vectors a part
    one = m * (m - 1) / 2 + (m if include_self else 0)
    pairs = np.where(parts > 1, parts * one + parts * (parts - 1) / 2 * 2 * m * (2 * m - 1),
                     one)
    largest = np.where(parts > 1, m * (2 * m - 1), one)
    e["products_computed"] = float(pairs.sum())
    e["largest_group_share"] = float(largest.max() / pairs.sum()) if pairs.sum() else 0.0
    e["split_features"] = int(((parts > 1) & (group > 0)).sum())
    # the pair step's keys: one a feature, s(s+1)/2 a split one
    e["block_pairs"] = int((parts * (parts + 1) / 2)[group > 0].sum())
    return m


def _hapax_share(f, whole):
    """The share of the sample's hapaxes (features one sample vector holds)
    that one vector of the whole holds alone: the whole's hapaxes, about
    ``beta V(N)`` of its ``V(N) = whole`` features (Heaps' law,
    :func:`heaps_beta`), each in the sample with chance ``n / N``."""
    if f.N <= f.s.n:  # the sample is the whole: its hapaxes are the whole's
        return 1.0
    ones = float((f.df == 1).sum())
    if not ones:
        return 0.0
    return min(1.0, heaps_beta(f.df, f.s.n) * whole * f.s.n / f.N / ones)


def varint_bytes(gap):
    """Bytes of the LEB128 varint of ``gap`` (an array; a place's difference
    in an indexed block record: :func:`mrcodecs.block_record.encode_places`).

    >>> varint_bytes(np.array([1, 200, 20000.0])).tolist()
    [1, 2, 3]
    """
    return sum((gap >= 1 << (7 * k)).astype(np.int64) for k in range(1, 5)) + 1
