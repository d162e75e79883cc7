"""MRSparseDotProducts: all-pairs sparse dot products and similarities.

Usage::

    python -m mrjobs.dot_products [mrjob options] [options] INPUT...

Every pair of vectors that share at least one feature gets a score; each
vector with at least one neighbour gets one output line (best first)::

    "<uuid>"\\t{"<neighbour uuid>": score, ...}

Steps
-----
1. *index + stripes*.  Mappers parse vectors and emit posting fragments
   (feature -> documents, weights), combined in memory per task.  The
   reducer of a feature assembles its posting list ``D`` (sorted by id),
   applies the df-cut, and emits for each document ``D[p]`` the stripe
   ``D[p]`` -> ``{D[q]: w[p] w[q], q > p}``: one numpy product per
   document over the rest of the list, so every pair's product is computed
   once (the upper triangle; ``--include-self`` adds ``q = p``).  Stripes
   are combined per document in a bounded buffer before they are written.
2. *sum*.  The reducer of a document sums its stripes with numpy, turns the
   dot products into scores (:mod:`mrjobs.measures`), applies
   ``--threshold`` and emits the row (neighbours with larger ids) and, for
   the mirror half, each score to the other document, combined in a bounded
   buffer.  With ``--queries`` the rows are complete here and step 3 is
   not needed.
3. *rows*.  The reducer of a document joins its row and the mirrored scores,
   keeps the ``--top-k`` best and writes the output line.

Memory
------
No task holds more than ``--buffer-entries`` buffered entries plus what it
must: a step-1 reducer holds one posting list (at most ``--max-df``
entries); a step-2 reducer never holds all partial stripes of a vector --
whenever the unmerged stripes exceed the buffer size (or twice the merged
size) they are summed into one sorted array, so it holds at most one
stripe per distinct neighbour plus one buffer; a step-3 reducer with
``--top-k K`` keeps the K best plus one buffer (without ``--top-k`` it
holds the vector's output row, which the output line needs anyway).
"""
import numpy as np
from mrjob.step import MRStep

from mrcodecs.jobwire import Stripe
from mrjobs.base import WORK, SparseJob
from mrjobs.kernels import group_starts, sort_sum, top_k_order
from mrjobs.measures import MEASURES, help_text, prepare, score

__all__ = ["MRSparseDotProducts"]


class StripeBuffer:
    """Bounded combining of stripes by document (step 1 reducers).

    Stripes for the same document from different posting lists are summed
    when the buffer is flushed, which happens once it holds ``limit``
    entries: memory is at most ``limit`` entries plus one posting list.
    """

    def __init__(self, limit, dtype):
        self.limit = limit
        self.dtype = dtype
        self.parts = {}
        self.n = 0

    def add(self, doc, self_stat, ids, values, stats):
        entry = self.parts.get(doc)
        if entry is None:
            self.parts[doc] = [self_stat, [(ids, values, stats)]]
        else:
            entry[1].append((ids, values, stats))
        self.n += ids.shape[0]
        return self.n >= self.limit

    def flush(self, counts):
        parts, self.parts, self.n = self.parts, {}, 0
        emitted = merged = 0
        dtype = self.dtype
        for doc, (self_stat, chunks) in parts.items():
            if len(chunks) == 1:
                ids, values, stats = chunks[0]
            else:
                ids, values, stats, m = sort_sum(
                    np.concatenate([c[0] for c in chunks]),
                    np.concatenate([c[1] for c in chunks]),
                    None if chunks[0][2] is None else np.concatenate([c[2] for c in chunks]))
                merged += m
            emitted += ids.shape[0]
            yield doc, Stripe(ids, values.astype(dtype, copy=False), stats, self_stat)
        counts.add(WORK, "stripe entries emitted", emitted)
        counts.add(WORK, "stripe entries combined away", merged)


class MirrorBuffer:
    """Bounded regrouping of scores by the *other* document (step 2 reducers).

    Holds ``(to, from, score)`` triples; a flush sorts them by ``to`` and
    emits one stripe per target document.
    """

    def __init__(self, limit, dtype):
        self.limit = limit
        self.dtype = dtype
        self.to, self.frm, self.scores, self.counts = [], [], [], []
        self.n = 0

    def add(self, frm, to, scores):
        self.to.append(to)
        self.frm.append(frm)
        self.scores.append(scores)
        self.counts.append(to.shape[0])
        self.n += to.shape[0]
        return self.n >= self.limit

    def flush(self):
        if not self.n:
            return
        to = np.concatenate(self.to)
        scores = np.concatenate(self.scores).astype(self.dtype, copy=False)
        frm = np.frombuffer(b"".join(self.frm), to.dtype)[
            np.repeat(np.arange(len(self.frm)), self.counts)]
        self.to, self.frm, self.scores, self.counts = [], [], [], []
        self.n = 0
        order = np.argsort(to, kind="stable")
        to, frm, scores = to[order], frm[order], scores[order]
        starts = group_starts(to)
        ends = np.append(starts[1:], to.shape[0]).tolist()
        raw = to.tobytes()
        for s, e in zip(starts.tolist(), ends):
            yield raw[16 * s:16 * s + 16], Stripe(frm[s:e], scores[s:e])


class MRSparseDotProducts(SparseJob):
    """Dot products (or a similarity) of all pairs of vectors sharing a feature.

    See the module docstring for the steps and how memory is bounded, and
    ``--help`` for the options.
    """

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg(
            "--measure", choices=MEASURES, default="dot",
            help="Score of a pair x, y sharing at least one feature (X, Y: their sets "
                 "of features; default 'dot'): " + help_text(sep="; ") + ".")
        self.add_passthru_arg(
            "--threshold", type=float, default=None, metavar="T",
            help="Keep only scores >= T.")
        self.add_passthru_arg(
            "--top-k", type=int, default=None, metavar="K",
            help="Keep each vector's K best neighbours (highest score; equal scores "
                 "are ordered by neighbour UUID, ascending).")
        self.add_passthru_arg(
            "--include-self", action="store_true", default=False,
            help="Also score each vector with itself (left out by default). A vector "
                 "without features still gets no line.")
        self.add_passthru_arg(
            "--queries", default=None, metavar="PATH",
            help="Score only pairs (query, vector) between the vectors in PATH (same "
                 "formats as INPUT) and those in INPUT; output lines are keyed by the "
                 "query vectors. PATH's file name must differ from those of INPUT.")

    def _check_options(self):
        super()._check_options()
        o = self.options
        if o.top_k is not None and o.top_k < 1:
            self.arg_parser.error("--top-k must be at least 1")
        if o.queries and o.include_self:
            self.arg_parser.error("--include-self does not apply with --queries "
                                  "(queries and vectors are two families)")

    # -- launching ---------------------------------------------------------

    def _non_option_kwargs(self):
        kwargs = super()._non_option_kwargs()
        if self.options.queries:
            inputs = list(kwargs["input_paths"]) or ["-"]
            kwargs["input_paths"] = inputs + [self.options.queries]
        return kwargs

    def _runner_kwargs(self):
        kwargs = super()._runner_kwargs()
        if self.options.queries and self._runner_class().alias == "spark":
            # the Spark runner only tells mappers their input file when asked
            kwargs["emulate_map_input_file"] = True
        return kwargs

    def steps(self):
        o = self.options
        index = MRStep(mapper_init=self.mapper_index_init, mapper=self.mapper_index,
                       mapper_final=self.mapper_index_final,
                       reducer_init=self.reducer_stripes_init,
                       reducer=self.reducer_stripes,
                       reducer_final=self.reducer_stripes_final)
        sums = MRStep(reducer_init=self.reducer_sum_init, reducer=self.reducer_sum,
                      reducer_final=self.reducer_sum_final)
        if o.queries:
            return [index, sums]
        rows = MRStep(reducer_init=self._task_init, reducer=self.reducer_rows,
                      reducer_final=self._task_final)
        return [index, sums, rows]

    # -- step 1 ------------------------------------------------------------

    def prepare_vector(self, weights):
        return prepare(self.options.measure, weights)

    def is_query_input(self):
        q = self.options.queries
        if not q:
            return False
        path = self._input_file()
        if path == "<stdin>":
            raise ValueError("--queries needs to know each map task's input file, but "
                             "$mapreduce_map_input_file is not set (on Spark, pass "
                             "--emulate-map-input-file)")
        return _basename(path) == _basename(q)

    def pairs_of(self, n_corpus, n_queries):
        if self.options.queries:
            return n_corpus * n_queries
        n = n_corpus
        return n * (n + 1) // 2 if self.options.include_self else n * (n - 1) // 2

    def reducer_stripes_init(self):
        self._task_init()
        self._stripes = StripeBuffer(self.options.buffer_entries, self.wire_dtype)

    def reducer_stripes(self, feature, fragments):
        postings = self.assemble_postings(feature, fragments)
        if postings is None:
            return
        corpus, queries = postings
        buf = self._stripes
        if self.options.queries:
            if corpus is None or queries is None:
                return
            rows, (cids, cw, cstats) = queries, corpus
            qids, qw, qstats = rows
            raw = qids.tobytes()
            products = 0
            for p in range(qids.shape[0]):
                products += cids.shape[0]
                if buf.add(raw[16 * p:16 * p + 16],
                           None if qstats is None else float(qstats[p]),
                           cids, cw * qw[p], cstats):
                    yield from buf.flush(self.counts)
            self.counts.add(WORK, "partial products", products)
            return
        if corpus is None:
            return
        ids, w, stats = corpus
        w = w.astype(np.float64, copy=False)
        n = ids.shape[0]
        raw = ids.tobytes()
        skip = 0 if self.options.include_self else 1
        products = 0
        for p in range(n - skip):
            lo = p + skip
            products += n - lo
            if buf.add(raw[16 * p:16 * p + 16],
                       None if stats is None else float(stats[p]),
                       ids[lo:], w[lo:] * w[p], None if stats is None else stats[lo:]):
                yield from buf.flush(self.counts)
        self.counts.add(WORK, "partial products", products)

    def reducer_stripes_final(self):
        yield from self._stripes.flush(self.counts)
        self._task_final()

    # -- step 2 ------------------------------------------------------------

    def reducer_sum_init(self):
        self._task_init()
        self._mirror = MirrorBuffer(self.options.buffer_entries, self.wire_dtype)

    def _merge(self, chunks):
        if len(chunks) == 1:
            ids, values, stats = chunks[0]
            return ids, values.astype(np.float64, copy=False), stats
        ids, values, stats, _ = sort_sum(
            np.concatenate([c[0] for c in chunks]),
            np.concatenate([c[1] for c in chunks]),
            None if chunks[0][2] is None else np.concatenate([c[2] for c in chunks]))
        return ids, values, stats

    def reducer_sum(self, doc, stripes):
        limit = self.options.buffer_entries
        chunks = []
        pending = 0
        merged_size = 0
        self_stat = None
        for s in stripes:
            if s.self_stat is not None:
                self_stat = s.self_stat
            chunks.append((s.ids, s.values, s.stats))
            pending += len(s)
            # Sum early so that a popular vector's partial stripes are never
            # all in memory at once; the doubling keeps the re-merging linear.
            if pending > max(limit, 2 * merged_size) and len(chunks) > 1:
                chunks = [self._merge(chunks)]
                merged_size = pending = chunks[0][0].shape[0]
        if not chunks:
            return
        ids, dots, stats = self._merge(chunks)
        o = self.options
        scores = score(o.measure, dots, self_stat, stats)
        self.counts.add(WORK, "pairs scored", scores.shape[0])
        if o.threshold is not None:
            keep = scores >= o.threshold
            if not keep.all():
                self.counts.add(WORK, "pairs below threshold", int((~keep).sum()))
                ids, scores = ids[keep], scores[keep]
        if o.queries:
            if ids.shape[0]:
                order = top_k_order(ids, scores, o.top_k)
                yield doc, Stripe(ids[order], scores[order])
            return
        if ids.shape[0]:
            yield doc, Stripe(ids, scores.astype(self.wire_dtype, copy=False))
            others = ids != doc
            if self.options.include_self and not others.all():
                ids, scores = ids[others], scores[others]
            if ids.shape[0] and self._mirror.add(doc, ids, scores):
                yield from self._mirror.flush()

    def reducer_sum_final(self):
        if not self.options.queries:
            yield from self._mirror.flush()
        self._task_final()

    # -- step 3 ------------------------------------------------------------

    def reducer_rows(self, doc, pieces):
        k = self.options.top_k
        limit = self.options.buffer_entries
        ids_l, sc_l = [], []
        pending = 0
        for s in pieces:
            ids_l.append(s.ids)
            sc_l.append(s.values.astype(np.float64, copy=False))
            pending += len(s)
            if k is not None and pending > max(limit, 2 * k) and len(ids_l) > 1:
                ids, sc = np.concatenate(ids_l), np.concatenate(sc_l)
                order = top_k_order(ids, sc, k)
                ids_l, sc_l = [ids[order]], [sc[order]]
                pending = order.shape[0]
        if not ids_l:
            return
        ids, sc = np.concatenate(ids_l), np.concatenate(sc_l)
        order = top_k_order(ids, sc, k)
        yield doc, Stripe(ids[order], sc[order])


def _basename(path):
    return path.rstrip("/").rsplit("/", 1)[-1]


if __name__ == "__main__":
    MRSparseDotProducts.run()
