"""A vector's way from its input lines to the strategies, below them: the
lines of one id merged into one vector, its weights prepared for the measure,
the vectors the measure cannot score counted and dropped.

The dot products job's *vectors* step (its reducers, :func:`prepare_batch`)
and the direct form's block-pair reducers (:func:`side_preparer`, where the
vectors step's work is done on each block pair's side) both prepare here, so
that the two give the same vectors, the same bytes and the same counters.
"""
import os

import numpy as np

from mrcodecs.jobwire import Stripe

from mrjobs.counters import (INPUT, NOT_SCORABLE, QUERY_VECTOR_IDS, QUERY_VECTORS_READ,
                             VECTOR_IDS, VECTORS_READ, Counters)
from mrjobs.measures import get as get_measure, prepare_rows
from mrjobs.parsing import POSTINGS
from mrjobs.runtime.paths import input_file, is_query_path, query_names, split_path
from mrjobs.strategies.combining import PostingBuffer
from mrjobs.strategies.contract import by_family

__all__ = ["VectorsStep", "is_query_input", "merged_repeats", "prepare_batch",
           "prepared_weights", "side_preparer", "vector_of_lines"]


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


class VectorsStep:
    """The dot products job's vectors step (a mixin before
    :class:`~mrjobs.job.SparseJob`): its mappers parse and check the lines
    (and, in the direct forms, hand them to the strategy), its reducers merge
    the lines of an id, prepare the vectors and hand them to the strategy.
    The job says which form runs (``_direct``, ``_prefix_direct``)."""

    def mapper_vectors_init(self):
        self._task_init()
        self._query = is_query_input(self.options, input_file())
        self._take = self._direct() and self.strategy.take
        self._batch = None
        if self._prefix_direct():
            self.reducer_vectors_init()
        elif self._take:
            self.strategy.take_init()
        # --input-format postings: a line is a feature's posting list, which
        # the task turns into pieces of its documents' vectors
        self._pieces = PostingBuffer(self.options.buffer_entries, self.wire_dtype, self._query,
                                     unique=True) if self._from_postings() else None

    def _from_postings(self):
        return self.options.input_format == POSTINGS

    def mapper_vectors(self, _, line):
        vec = self.read_vector(line)
        if vec is None:
            return
        doc, ids, w = vec
        if self._pieces is not None:
            if ids.shape[0] and self._pieces.add(doc, ids, w, None):
                yield from self._pieces.flush()
            return
        if self._query:
            self.counts.add(INPUT, QUERY_VECTORS_READ)
        # an empty vector too, so that the step that merges lines counts every id
        w = w.astype(self.wire_dtype, copy=False)
        if self._batch is not None:  # each line a whole vector, its own id: as merged
            yield from self.reducer_vectors(doc, [Stripe(ids, w)])
            return
        if self._take:  # raw, to the block pairs
            yield from self._take(doc, self._query, ids, w, None)
        else:
            yield doc, Stripe(ids, w, query=self._query)

    def mapper_vectors_final(self):
        if self._batch is not None:
            yield from self.reducer_vectors_final()
            return
        if self._pieces is not None:
            yield from self._pieces.flush()
        if self._take:
            yield from self.strategy.take_final()
        self._task_final()

    def reducer_vectors_init(self):
        self._task_init()
        self.strategy.take_init()
        self._batch = []
        self._batch_entries = 0

    def reducer_vectors(self, doc, lines):
        postings = self._from_postings()
        for query, parts in by_family(lines):
            if postings:  # the vector is read here, from its pieces
                self.counts.add(INPUT, VECTORS_READ)
                if query:
                    self.counts.add(INPUT, QUERY_VECTORS_READ)
            # every distinct id once, here, where all of its lines meet
            self.counts.add(INPUT, QUERY_VECTOR_IDS if query else VECTOR_IDS)
            vec = vector_of_lines(self, doc, parts, postings)
            if vec is None:
                continue
            ids, w = vec
            self._batch.append((doc, query, ids, w))
            self._batch_entries += ids.shape[0]
        if self._batch_entries >= self.options.buffer_entries:
            yield from self._prepare_batch()

    def _prepare_batch(self):
        """Prepare the batched vectors for the measure and hand them to the
        strategy (:func:`~mrjobs.strategies.vectors.prepare_batch`)."""
        batch, self._batch, self._batch_entries = self._batch, [], 0
        if batch:
            yield from prepare_batch(batch, self.options.measure, self.counts,
                                     self.strategy.take, self.options.num_features)

    def reducer_vectors_final(self):
        yield from self._prepare_batch()
        yield from self.strategy.take_final()
        self._task_final()


def is_query_input(options, path):
    """Whether a map task's input file (``path``) is of ``--queries``."""
    q = options.queries
    if not q:
        return False
    if path == "<stdin>":
        raise ValueError("--queries needs to know each map task's input file, but "
                         "$mapreduce_map_input_file is not set (on Spark, pass "
                         "--emulate-map-input-file)")
    if options.queries_match == "name":
        return os.path.basename(split_path(path)[2]) in query_names(q)
    return is_query_path(path, q)

