"""MRSparseDotProducts: all-pairs sparse dot products and similarities.

Usage::

    python -m mrjobs.dot_products [mrjob options] [options] INPUT...

INPUT: files, directories, globs or URIs; a pipe (``<(zcat x.gz)``, a named
FIFO) or stdin (``-``, or no INPUT) is read once, to its end, into a
temporary file before the job starts.  Devices (``/dev/zero``, a terminal)
are refused.

Every pair of vectors that share at least one feature gets a score; each
vector with at least one neighbour gets one output line (best first)::

    "<uuid>"\\t{"<neighbour uuid>": score, ...}

Steps
-----
*vectors*
    Mappers parse and check input lines (:mod:`mrjobs.parsing`); the reducer
    of a vector id merges the lines that share it into one vector (weights of
    a repeated feature summed; counted as ``duplicate vector id (lines
    merged)``), then prepares its weights and statistic for the measure
    (:mod:`mrjobs.measures`) from the whole vector.
*the strategy's steps*
    ``--strategy blocks`` (default, :mod:`mrjobs.strategies.blocks`): block-pair
    reducers multiply blocks of whole vectors with scipy.sparse.
    ``--strategy stripes`` (:mod:`mrjobs.strategies.stripes`): posting lists emit every
    partial product, summed per vector.  Both give the same pairs; scores
    agree to the last bit or two (the additions run in another order).
*rows*
    The reducer of a vector joins its partial rows, keeps the ``--top-k``
    best (score descending, ties by smaller UUID) and writes the output line.
"""
import argparse
import fnmatch
import logging
import os

import numpy as np
from mrjob.step import MRStep

from mrcodecs.jobwire import Stripe
from mrjobs.job import MAX_COUNT, JobError, SparseJob, at_least, finite_float, input_kind
from mrjobs.strategies.blocks import BlocksStrategy
from mrjobs.strategies.sizing import (DEFAULT_BLOCK_ENTRIES, DF_CUT_FORMS, MAX_BLOCKS,
                                      default_blocks, df_cut_form)
from mrjobs.counters import INPUT, NOT_SCORABLE, QUERY_VECTORS_READ
from mrjobs.strategies.postings import PostingAssembler
from mrjobs.kernels import top_k_order
from mrjobs.measures import MEASURES, PRUNABLE, get as get_measure, help_text, prepare_rows
from mrjobs.scoring import Scorer
from mrjobs.runtime.paths import (OverlapError, local_files, local_lines, local_size,
                                  refuse_query_overlap, split_path)
from mrjobs.strategies.contract import Context, by_family
from mrjobs.strategies.stripes import StripesStrategy

__all__ = ["MRSparseDotProducts"]

log = logging.getLogger(__name__)

STRATEGIES = {"blocks": BlocksStrategy, "stripes": StripesStrategy}

#: the largest --top-k: more neighbours than any output line could list, and
#: far from the end of the kernels' sizes (``k + k/2`` slots a vector)
MAX_TOP_K = 2**31 - 1

#: a --top-k from which the out-of-memory advice names it: each vector of a
#: block pair holds up to 1.5·K candidates (16 bytes each), as many per
#: column as a product chunk of --buffer-entries holds for a whole block of
#: a thousand vectors
LARGE_TOP_K = 1000


class MRSparseDotProducts(SparseJob):
    """Dot products (or a similarity) of all pairs of vectors sharing a feature.

    See the module docstring for the steps, :mod:`mrjobs.strategies.blocks` and
    :mod:`mrjobs.strategies.stripes` for the strategies and how memory is bounded, and
    ``--help`` for the options.
    """

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg(
            "--measure", choices=MEASURES, default="dot",
            help="Score of a pair x, y sharing at least one feature (X, Y: their sets "
                 "of features; default 'dot'): " + help_text(sep="; ") + ".")
        self.add_passthru_arg(
            "--num-features", type=at_least(1, MAX_COUNT), default=None, metavar="N",
            help="The number of distinct features of the corpus (all input vectors, "
                 "before any --max-df cut): needed by --measure loglikelihood, whose 2x2 "
                 "table counts the features that neither vector has. The inverted index "
                 "job writes one line per feature.")
        self.add_passthru_arg(
            "--threshold", type=finite_float, default=None, metavar="T",
            help="Keep only scores >= T.")
        self.add_passthru_arg(
            "--top-k", type=at_least(1, MAX_TOP_K), default=None, metavar="K",
            help="Keep each vector's K best neighbours (highest score; equal scores "
                 "are ordered by neighbour UUID, ascending; K from 1 to 2^31-1).")
        self.add_passthru_arg(
            "--include-self", action="store_true", default=False,
            help="Also score each vector with itself (left out by default). A vector "
                 "without features still gets no line.")
        self.add_passthru_arg(
            "--queries", default=None, metavar="PATH",
            help="Score only pairs (query, vector) between the vectors in PATH (a file, a "
                 "directory or a glob; same formats as INPUT) and those in INPUT; output "
                 "lines are keyed by the query vectors. A query is never its own "
                 "neighbour: a vector of INPUT with the query's id is left out of that "
                 "query's line. Map tasks tell query files by "
                 "their whole path; a file that is both an input and a query is refused.")
        # set by the launcher: how map tasks recognise query files (by whole
        # path, or by file name where mrjob uploads local files to the cluster)
        self.add_passthru_arg("--queries-match", choices=("path", "name"), default="path",
                              help=argparse.SUPPRESS)
        self.add_passthru_arg(
            "--strategy", choices=sorted(STRATEGIES), default="blocks",
            help="'blocks' (default): reducers multiply blocks of whole vectors with "
                 "scipy.sparse; each vector is sent to --blocks block pairs. 'stripes': "
                 "every partial product goes through the shuffle (sum(df^2)/2 of them); "
                 "fine when every feature is rare or cut with --max-df.")
        self.add_passthru_arg(
            "--blocks", type=at_least(1), default=None, metavar="N",
            help="Number of blocks of the blocks strategy (each family under --queries): "
                 "N(N+1)/2 block pairs, each vector sent N times. Default: from the input "
                 "size, about %d entries a block, and at least enough block pairs for the "
                 "local runner's cores. At most %d, and at most the number of input lines "
                 "where the input is local." % (DEFAULT_BLOCK_ENTRIES, MAX_BLOCKS))
        # set by the launcher with --max-df under blocks: the cut's form
        # (mrjobs.strategies.sizing.df_cut_form); a job built without it uses "join"
        self.add_passthru_arg("--df-cut-form", choices=DF_CUT_FORMS, default=None,
                              help=argparse.SUPPRESS)

        self.add_passthru_arg(
            "--no-prune", action="store_true", default=False,
            help="Compute every product under --threshold. By default the blocks strategy "
                 "skips the vectors and groups of vectors whose score bounds cannot reach "
                 "the threshold (measures %s); the output is the same either way "
                 "(this option is for comparing the two)." % ", ".join(sorted(PRUNABLE)))

    def _check_options(self):
        super()._check_options()
        o = self.options
        error = self.arg_parser.error
        needs_n = get_measure(o.measure).needs_n_features
        if needs_n and o.num_features is None:
            error("argument --measure: %s needs --num-features N, the number of distinct "
                  "features of the corpus (e.g. the line count of the inverted index job's "
                  "output)" % o.measure)
        if o.num_features is not None and not needs_n:
            error("argument --num-features: has no effect with --measure %s (measures "
                  "that use it: %s)" % (o.measure, ", ".join(
                      m for m in MEASURES if get_measure(m).needs_n_features)))
        if o.blocks is not None and o.strategy != "blocks":
            error("argument --blocks: has no effect with --strategy %s" % o.strategy)
        if o.blocks is not None and o.blocks > MAX_BLOCKS:
            error("argument --blocks: at most %d, not %d (each vector is sent to --blocks "
                  "block pairs: the shuffle grows with it)" % (MAX_BLOCKS, o.blocks))
        if o.no_prune and (o.strategy != "blocks" or o.threshold is None
                           or o.measure not in PRUNABLE):
            error("argument --no-prune: has no effect %s (pruning needs --strategy blocks, "
                  "--threshold and one of the measures %s)" % (
                      "with --strategy %s" % o.strategy if o.strategy != "blocks" else
                      "without --threshold" if o.threshold is None else
                      "with --measure %s" % o.measure, ", ".join(sorted(PRUNABLE))))
        if o.queries and o.include_self:
            error("argument --include-self: does not apply with --queries "
                  "(queries and vectors are two families)")

    def check_launch(self):
        o = self.options
        if o.strategy == "blocks" and o.blocks is not None and o.blocks > 1:
            paths = (list(o.args) or ["-"]) + ([o.queries] if o.queries else [])
            lines = local_lines(paths, stop_above=o.blocks)
            if lines is not None and lines < o.blocks:
                self.arg_parser.error(
                    "argument --blocks: %d blocks for %d input line(s): more blocks than "
                    "vectors only adds empty block pairs (at most %d here)"
                    % (o.blocks, lines, max(lines, 1)))

    def other_inputs(self):
        q = self.options.queries
        return [("--queries", q)] if q else []

    def memory_advice(self):
        o = self.options
        advice = [super().memory_advice()]
        if o.top_k is not None and o.top_k >= LARGE_TOP_K:
            advice.append("lower --top-k (now %d: a vector holds up to 1.5 K candidates "
                          "in a task)" % o.top_k)
        if o.blocks and o.strategy == "blocks":
            advice.append("raise --blocks (now %d)" % o.blocks)
        return ", ".join(advice[:-1]) + " or " + advice[-1] if len(advice) > 1 else advice[0]

    def read_streams(self, streams):
        super().read_streams(streams)
        o = self.options
        if o.queries and input_kind(o.queries, "--queries path") == "stream":
            if not hasattr(self, "_queries_given"):
                self._queries_given = o.queries
            o.queries = streams.read(o.queries, "--queries %s" % o.queries)

    def task_modules(self):
        if self.options.strategy == "blocks":
            return ("numpy", "scipy.sparse")
        return ("numpy",)

    @property
    def strategy(self):
        """The ``--strategy`` (a :class:`mrjobs.strategies.contract.Strategy`), built on
        the job's :class:`~mrjobs.strategies.contract.Context`."""
        s = getattr(self, "_strategy", None)
        if (s is None or s.name != self.options.strategy
                or s.ctx.df_cut != self._df_cut_form()):
            s = self._strategy = STRATEGIES[self.options.strategy](self._context())
        return s

    def _context(self):
        o = self.options
        return Context(
            scorer=Scorer(o.measure, self.counts, o.threshold, o.num_features, o.float32),
            counts=self.counts, postings=PostingAssembler(o.max_df, self.counts, self.pairs_of),
            wire_dtype=self.wire_dtype, buffer_entries=o.buffer_entries, top_k=o.top_k,
            include_self=o.include_self, queries=bool(o.queries), max_df=o.max_df,
            blocks=o.blocks, prune=not o.no_prune, df_cut=self._df_cut_form())

    def _df_cut_form(self):
        """``--df-cut-form`` as the launcher set it, else "join": a job built
        without the launcher gets the form that suits every runner."""
        return self.options.df_cut_form or "join"

    # -- launching ---------------------------------------------------------

    def _non_option_kwargs(self):
        kwargs = super()._non_option_kwargs()
        o = self.options
        if o.queries:
            inputs = list(kwargs["input_paths"]) or ["-"]
            if "://" not in o.queries:
                # tasks compare whole paths: give them the absolute one; where
                # mrjob uploads local files (hadoop, emr, dataproc), only the
                # file name survives
                absolute = os.path.abspath(o.queries)
                if not hasattr(self, "_queries_given"):  # (this runs more than once)
                    self._queries_given = o.queries
                by_name = self._runner_class().alias not in ("inline", "local", "spark")
                extra = list(kwargs["extra_args"])
                extra[extra.index("--queries") + 1] = absolute
                if by_name and "--queries-match" not in extra:
                    extra += ["--queries-match", "name"]
                kwargs["extra_args"] = extra
                try:
                    refuse_query_overlap(inputs, absolute, by_name)
                except OverlapError as e:
                    raise JobError(str(e)) from None
                o.queries = absolute
            kwargs["input_paths"] = inputs + [o.queries]
        if o.strategy == "blocks":
            if o.blocks is None:
                o.blocks = self._default_blocks()
            if "--blocks" not in kwargs["extra_args"]:
                kwargs["extra_args"] = list(kwargs["extra_args"]) + ["--blocks", str(o.blocks)]
            if o.max_df is not None and o.df_cut_form is None:
                o.df_cut_form = df_cut_form(self._runner_class().alias, o.blocks,
                                            bool(o.queries))
            if o.max_df is not None and not any(
                    a.startswith("--df-cut-form") for a in kwargs["extra_args"]):
                kwargs["extra_args"] = list(kwargs["extra_args"]) + [
                    "--df-cut-form", o.df_cut_form]
        return kwargs

    def _input_size(self):
        """Bytes of the local input files (and queries), or None."""
        paths = (list(self.options.args) or ["-"]) + (
            [self.options.queries] if self.options.queries else [])
        return local_size(paths)

    def _default_blocks(self):
        """--blocks from the input's size (local files) and the runner's cores."""
        o = self.options
        return default_blocks(self._input_size(), o.runner or "inline", o.num_cores,
                              o.buffer_entries)

    def split_bytes(self):
        # blocks gives the same bytes for every partitioning; stripes' sums
        # follow it in the last bit: it keeps mrjob's splits
        from mrjobs.runtime.localrunner import SPLIT_BYTES  # the launcher's (mrjob.local): not in tasks
        return SPLIT_BYTES if self.options.strategy == "blocks" else None

    def _runner_kwargs(self):
        kwargs = super()._runner_kwargs()
        if self.options.queries and self._runner_class().alias == "spark":
            # the Spark runner only tells mappers their input file when asked
            kwargs["emulate_map_input_file"] = True
        return kwargs

    def steps(self):
        vectors = MRStep(mapper_init=self.mapper_vectors_init, mapper=self.mapper_vectors,
                         mapper_final=self._task_final,
                         reducer_init=self.reducer_vectors_init, reducer=self.reducer_vectors,
                         reducer_final=self.reducer_vectors_final)
        rows = MRStep(reducer_init=self._task_init, reducer=self.reducer_rows,
                      reducer_final=self._task_final)
        return [vectors] + [self._task_step(s) for s in self.strategy.steps()] + [rows]

    def _task_step(self, step):
        """The MRStep of a strategy's :class:`~mrjobs.strategies.contract.Step`: its init
        and final wrapped with the task's (counters in, counters out)."""
        def init():
            self._task_init()
            if step.init is not None:
                step.init()

        def final():
            if step.final is not None:
                yield from step.final()
            self._task_final()

        return MRStep(reducer_init=init, reducer=step.reducer, reducer_final=final)

    # -- the vectors step ----------------------------------------------------

    def is_query_input(self):
        q = self.options.queries
        if not q:
            return False
        path = self._input_file()
        if path == "<stdin>":
            raise ValueError("--queries needs to know each map task's input file, but "
                             "$mapreduce_map_input_file is not set (on Spark, pass "
                             "--emulate-map-input-file)")
        if self.options.queries_match == "name":
            return os.path.basename(split_path(path)[2]) in self._query_names()
        return is_query_path(path, q)

    def _query_names(self):
        names = getattr(self, "_query_names_cache", None)
        if names is None:
            q = self.options.queries
            names = self._query_names_cache = {os.path.basename(f) for f in local_files(q)} \
                or {os.path.basename(q.rstrip("/"))}
        return names

    def mapper_vectors_init(self):
        self._task_init()
        self._query = self.is_query_input()

    def mapper_vectors(self, _, line):
        vec = self.read_vector(line)
        if vec is None:
            return
        doc, ids, w = vec
        if self._query:
            self.counts.add(INPUT, QUERY_VECTORS_READ)
        if ids.shape[0]:
            yield doc, Stripe(ids, w.astype(self.wire_dtype, copy=False), query=self._query)

    def reducer_vectors_init(self):
        self._task_init()
        self.strategy.take_init()
        self._batch = []
        self._batch_entries = 0

    def reducer_vectors(self, doc, lines):
        for query, parts in by_family(lines):
            if len(parts) == 1:
                ids, w = parts[0].ids, parts[0].values
            else:
                merged = self.merge_lines(doc, parts)
                if merged is None or not merged[0].shape[0]:
                    continue
                ids, w = merged
            self._batch.append((doc, query, ids, w))
            self._batch_entries += ids.shape[0]
        if self._batch_entries >= self.options.buffer_entries:
            yield from self._prepare_batch()

    def _prepare_batch(self):
        """Prepare the batched vectors for the measure (one vectorised call) and
        hand them to the strategy; vectors the measure cannot score are counted."""
        batch, self._batch, self._batch_entries = self._batch, [], 0
        if not batch:
            return
        lengths = np.array([b[2].shape[0] for b in batch], np.int64)
        weights = np.concatenate([b[3] for b in batch]).astype(np.float64, copy=False)
        prepared, stats = prepare_rows(self.options.measure, weights, lengths)
        measure = get_measure(self.options.measure)
        valid = np.ones(len(batch), bool) if stats is None else measure.valid(stats)
        if not valid.all():
            self.counts.add(INPUT, NOT_SCORABLE, int((~valid).sum()))
        ends = np.cumsum(lengths).tolist()
        starts = [0] + ends[:-1]
        stats_l = None if stats is None else stats.tolist()
        take = self.strategy.take
        # pearson: an entry whose centred weight is 0.0 is not an entry of the
        # centred vector (Mahout indexes its nonzero entries)
        nonzero = None if measure.index_zeros else prepared != 0
        for i, ((doc, query, ids, _), s, e) in enumerate(zip(batch, starts, ends)):
            if valid[i]:
                w = prepared[s:e]
                if nonzero is not None and not nonzero[s:e].all():
                    ids, w = ids[nonzero[s:e]], w[nonzero[s:e]]
                yield from take(doc, query, ids, w, None if stats_l is None else stats_l[i])

    def reducer_vectors_final(self):
        yield from self._prepare_batch()
        yield from self.strategy.take_final()
        self._task_final()

    def check_something_was_read(self, counters):
        super().check_something_was_read(counters)
        q = self.options.queries
        if q and not sum(step.get(INPUT, {}).get(QUERY_VECTORS_READ, 0)
                         for step in counters or ()):
            raise JobError("--queries %s: not one query vector could be read (the file is "
                           "empty, blank or all bad lines), so there is nothing to score"
                           % getattr(self, "_queries_given", q))

    def pairs_of(self, n_corpus, n_queries):
        """Partial products a posting list of this size yields (counted when
        the df-cut drops it)."""
        if self.options.queries:
            return n_corpus * n_queries
        n = n_corpus
        return n * (n + 1) // 2 if self.options.include_self else n * (n - 1) // 2

    # -- the rows step -------------------------------------------------------

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


def is_query_path(path, queries):
    """True if the input file ``path`` (as a task sees it) is one of the query
    files named by ``queries`` (a file, a directory or a glob, by whole path;
    an authority left out on either side matches any).

    >>> is_query_path("file:///data/q/part-00000", "/data/q")
    True
    >>> is_query_path("file:/data/q/part-00000", "/data/q/part-*")
    True
    >>> is_query_path("/data/corpus/part-00000", "/data/q")
    False
    >>> is_query_path("hdfs://nn:8020/q/a.jsonl", "hdfs:///q/*.jsonl")
    True
    """
    p_scheme, p_auth, p = split_path(path)
    q_scheme, q_auth, q = split_path(queries)
    q = q.rstrip("/") or "/"
    if p_scheme == q_scheme and (p_auth == q_auth or not p_auth or not q_auth):
        return p == q or p.startswith(q + "/") or fnmatch.fnmatchcase(p, q)
    return False


if __name__ == "__main__":
    MRSparseDotProducts.run()
