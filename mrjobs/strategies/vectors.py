"""A vector's way from its input lines to the strategies, below them: the
lines of one id merged into one vector, its weights prepared for the measure,
the vectors the measure cannot score counted and dropped.

The dot products job's *vectors* step (its reducers, :func:`prepare_batch`)
and the direct form's block-pair reducers (:func:`side_preparer`, where the
vectors step's work is done on each block pair's side) both prepare here, so
that the two give the same vectors, the same bytes and the same counters.
"""
import numpy as np

from mrcodecs.jobwire import Stripe

from mrjobs.counters import INPUT, NOT_SCORABLE, QUERY_VECTOR_IDS, VECTOR_IDS, Counters
from mrjobs.measures import get as get_measure, prepare_rows

__all__ = ["merged_repeats", "prepare_batch", "prepared_weights", "side_preparer",
           "vector_of_lines"]


def vector_of_lines(job, doc, parts, postings=False, counts=None):
    """``(ids, weights)`` of the id ``doc`` from its lines' (or pieces')
    :class:`~mrcodecs.jobwire.Stripe` s: an empty line adds nothing, one line
    is the vector, more are merged (:meth:`SparseJob.merge_lines` of ``job``);
    None when no entry is left."""
    parts = [p for p in parts if len(p)]
    if len(parts) == 1:
        return parts[0].ids, parts[0].values
    merged = job.merge_lines(doc, parts, postings, counts) if parts else None
    return merged if merged is not None and merged[0].shape[0] else None


def prepared_weights(weights, lengths, measure_name, counts, n_features):
    """``(prepared, stats, valid, nonzero)`` of vectors (float64 weights
    concatenated, their lengths) for the measure, in one vectorised call
    (``n_features``: ``--num-features``); the vectors it cannot score are
    counted.  ``nonzero`` (None: all) marks the entries kept: under pearson
    an entry whose centred weight is 0.0 is not an entry of the centred
    vector (Mahout indexes its nonzero entries)."""
    try:
        prepared, stats = prepare_rows(measure_name, weights, lengths, n_features=n_features)
    except ValueError as e:
        if n_features is None:
            raise
        raise ValueError("%s (is --num-features %d the number of distinct features of the "
                         "corpus?)" % (e, n_features)) from None
    measure = get_measure(measure_name)
    valid = np.ones(lengths.shape[0], bool) if stats is None else measure.valid(stats)
    if not valid.all():
        counts.add(INPUT, NOT_SCORABLE, int((~valid).sum()))
    nonzero = None if measure.index_zeros else prepared != 0
    return prepared, stats, valid, nonzero


def prepare_batch(batch, measure_name, counts, take, n_features=None):
    """Prepare a batch of vectors ``(doc, query, ids, weights)`` for the
    measure (:func:`prepared_weights`) and hand each to ``take`` (the strategy's)."""
    lengths = np.array([b[2].shape[0] for b in batch], np.int64)
    weights = np.concatenate([b[3] for b in batch]).astype(np.float64, copy=False)
    prepared, stats, valid, nonzero = prepared_weights(weights, lengths, measure_name, counts,
                                                n_features)
    ends = np.cumsum(lengths).tolist()
    starts = [0] + ends[:-1]
    stats_l = None if stats is None else stats.tolist()
    for i, ((doc, query, ids, _), s, e) in enumerate(zip(batch, starts, ends)):
        if valid[i]:
            w = prepared[s:e]
            if nonzero is not None and not nonzero[s:e].all():
                ids, w = ids[nonzero[s:e]], w[nonzero[s:e]]
            yield from take(doc, query, ids, w, None if stats_l is None else stats_l[i])


def side_preparer(job):
    """The direct form's preparation of a block pair's side of vectors as
    the mappers read them (sorted by id), giving what the vectors step would
    have sent: ``prepare(ids, lengths, feats, weights, query, count)`` ->
    ``(ids, lengths, feats, weights, stats)``.  The lines of a repeated id
    merged (:meth:`~mrjobs.job.SparseJob.merge_lines`), empty vectors
    dropped, weights prepared for the measure (:func:`prepared_weights`), the
    vectors it cannot score dropped, and the prepared weights rounded to the
    wire's dtype as a block record would.  With ``count`` (one block pair of
    each block does) the ids, merged lines and unscorable vectors are
    counted; the other pairs count nothing."""
    o = job.options

    def prepare(ids, lengths, feats, weights, query, count):
        counts = job.counts if count else Counters()
        if ids.shape[0] > 1 and (ids[1:] == ids[:-1]).any():
            ids, lengths, feats, weights = merged_repeats(job, counts, ids, lengths, feats,
                                                           weights)
        # every distinct id once, here, where all of its lines meet
        counts.add(INPUT, QUERY_VECTOR_IDS if query else VECTOR_IDS, ids.shape[0])
        live = lengths > 0
        if not live.all():
            ids, lengths = ids[live], lengths[live]
        prepared, stats, valid, nonzero = prepared_weights(weights, lengths, o.measure, counts,
                                                    o.num_features)
        keep = np.repeat(valid, lengths)
        if nonzero is not None:
            keep &= nonzero
        if not keep.all():
            vector = np.repeat(np.arange(ids.shape[0]), lengths)
            lengths = np.bincount(vector[keep], minlength=ids.shape[0])[valid]
            ids, feats, prepared = ids[valid], feats[keep], prepared[keep]
            stats = None if stats is None else stats[valid]
        w = prepared.astype(job.wire_dtype, copy=False).astype(np.float64, copy=False)
        return ids, lengths.astype(np.int64, copy=False), feats, w, stats

    return prepare


def merged_repeats(job, counts, ids, lengths, feats, weights):
    """Vectors (sorted by id) with the lines of each repeated id merged into
    one vector, as the vectors step merges them
    (:func:`vector_of_lines`; an id left with no entry
    keeps none; an id is sliced, ``ids[a:a + 1]``: an S16 scalar drops its
    trailing NUL bytes)."""
    ends = np.cumsum(lengths).tolist()
    starts = [0] + ends[:-1]
    first = np.concatenate(([True], ids[1:] != ids[:-1]))
    bounds = np.flatnonzero(first).tolist() + [ids.shape[0]]
    out_lengths, out_feats, out_w = [], [], []
    for a, b in zip(bounds, bounds[1:]):
        vec = vector_of_lines(job, ids[a:a + 1].tobytes(), [
            Stripe(feats[starts[v]:ends[v]], weights[starts[v]:ends[v]]) for v in range(a, b)],
            counts=counts)
        f, w = vec if vec is not None else (feats[:0], weights[:0])
        out_lengths.append(f.shape[0])
        out_feats.append(f)
        out_w.append(np.asarray(w, np.float64))
    return (ids[first], np.array(out_lengths, np.int64), np.concatenate(out_feats),
            np.concatenate(out_w))
