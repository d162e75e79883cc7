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

With ``--queries``, each query vector with at least one neighbour in the
corpus gets one.  The vectors without a line (no feature shared, no score
kept by ``--threshold``, empty, not scorable by the measure) are counted:
the run ends with ``mrsparse: N of M query vector(s) got no output line``
(``vector(s)`` without ``--queries``), N being the counter ``distinct query
vector ids`` (``distinct vector ids``) less ``output lines``
(:func:`mrjobs.counters.without_output_line`).

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

Blocks without ``--max-df``, on vectors (not posting lists), runs two steps,
*pairs* and *rows* (the direct form): the pair step's mappers parse and check
the lines and send each vector as read to its block pairs, whose reducers
merge a repeated id's lines, prepare the vectors and count the ids
(:func:`mrjobs.strategies.vectors.side_preparer`): the vectors step's work,
the same output bytes and counters, one shuffle of the input fewer.
"""
import logging

from mrjob.step import MRStep

from mrjobs.job import JobError, SparseJob, input_kind
from mrjobs.options import (add_dot_products_options, check_blocks_against_lines,
                            check_dot_products_options, dot_products_memory_advice,
                            result_manifest)
from mrjobs.strategies.containers import block_entries_for, reducer_memory_mb
from mrjobs.strategies.sizing import (DEFAULT_BLOCK_ENTRIES, bytes_per_entry, data_first_line,
                                     default_blocks, df_cut_form, input_data_bytes,
                                     local_split_bytes, pair_threads, reducers, vector_entries,
                                     whole_rows)
from mrjobs.counters import INPUT, PREFIX_PAIRS_MET_AGAIN, QUERY_VECTORS_READ, WORK
from mrjobs.parsing import FORMATS, POSTINGS
from mrjobs.strategies.postings import PostingAssembler
from mrjobs.scoring import RowMerger, Scorer, output_rows
from mrjobs.runtime.paths import OverlapError, queries_for_tasks
from mrjobs.strategies.contract import Context
from mrjobs.strategies.dftable import DfCount, PrefixDfRun
from mrjobs.strategies.names import IdsOfAnyKind, names_steps
from mrjobs.strategies.prefixing import repeats
from mrjobs.strategies.registry import STRATEGIES
from mrjobs.strategies.vectors import VectorsStep, side_preparer

__all__ = ["MRSparseDotProducts"]

log = logging.getLogger(__name__)


class MRSparseDotProducts(PrefixDfRun, IdsOfAnyKind, VectorsStep, SparseJob):
    """Dot products (or a similarity) of all pairs of vectors sharing a feature.

    See the module docstring for the steps, :mod:`mrjobs.strategies.blocks` and
    :mod:`mrjobs.strategies.stripes` for the strategies and how memory is bounded, and
    ``--help`` for the options.
    """

    #: also the inverted index's compact posting lists
    INPUT_FORMATS = FORMATS + (POSTINGS,)

    def configure_args(self):
        super().configure_args()
        add_dot_products_options(self, sorted(STRATEGIES))

    def _check_options(self):
        super()._check_options()
        check_dot_products_options(self.options, self.arg_parser.error)

    def check_launch(self):
        check_blocks_against_lines(self.options, self.arg_parser.error)

    def other_inputs(self):
        q = self.options.queries
        return [("--queries", q)] if q else []

    def manifest(self):
        return result_manifest("dot_products", self.options)

    def memory_advice(self):
        return dot_products_memory_advice(self.options, super().memory_advice())

    def read_streams(self, streams):
        super().read_streams(streams)
        o = self.options
        if o.queries and input_kind(o.queries, "--queries path") == "stream":
            if not hasattr(self, "_queries_given"):
                self._queries_given = o.queries
            o.queries = streams.read(o.queries, "--queries %s" % o.queries)

    def task_modules(self):
        if self.options.strategy in ("blocks", "prefix"):
            return ("numpy", "scipy.sparse")
        return ("numpy",)

    def temp_disk_estimate(self, inputs, free):
        # mrjobs.plan models this job's runs (imported here: the launcher only)
        from mrjobs.plan.cli import temp_disk_need
        return temp_disk_need(self.options, inputs, free)

    @property
    def strategy(self):
        """The ``--strategy`` (a :class:`mrjobs.strategies.contract.Strategy`), built on
        the job's :class:`~mrjobs.strategies.contract.Context`."""
        s = getattr(self, "_strategy", None)
        if (s is None or s.name != self.options.strategy
                or s.ctx.df_cut != self._df_cut_form() or s.ctx.blocks != self.options.blocks):
            s = self._strategy = STRATEGIES[self.options.strategy](self._context())
        return s

    def _context(self):
        o = self.options
        return Context(
            scorer=Scorer(o.measure, self.counts, o.threshold, o.num_features, o.float32),
            counts=self.counts, postings=PostingAssembler(o.max_df, self.counts, self.pairs_of),
            wire_dtype=self.wire_dtype, buffer_entries=o.buffer_entries, top_k=o.top_k,
            include_self=o.include_self, queries=bool(o.queries), both_ways=o.both_ways,
            floors=o.floors, query_blocks=o.query_blocks, df_table=o.df_table,
            repeats=self._repeats(), max_df=o.max_df,
            blocks=o.blocks, threads=o.pair_threads or 1, prune=not o.no_prune,
            df_cut=self._df_cut_form(), status=self.status,
            prepare_side=side_preparer(self) if self._direct() else None)

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
                if not hasattr(self, "_queries_given"):  # (this runs more than once)
                    self._queries_given = o.queries
                try:
                    kwargs["extra_args"], o.queries = queries_for_tasks(
                        kwargs["extra_args"], inputs, o.queries, self._runner_class().alias)
                except OverlapError as e:
                    raise JobError(str(e)) from None
            kwargs["input_paths"] = inputs + [o.queries]
        if o.strategy == "blocks":
            kwargs["extra_args"] = _blocks_args(self, kwargs["extra_args"])
        return kwargs

    def _input_size(self):
        """Bytes of data of the local input files (and queries; a compressed
        file's uncompressed bytes, estimated), or None."""
        paths = (list(self.options.args) or ["-"]) + (
            [self.options.queries] if self.options.queries else [])
        return input_data_bytes(paths)

    def _default_blocks(self):
        """--blocks from the input's size (local files), its format, the
        runner's cores and --top-k against a vector's entries."""
        o = self.options
        line = data_first_line(list(o.args) or ["-"])
        memory = reducer_memory_mb(o.reducer_memory, o.runner, o.jobconf)
        return default_blocks(self._input_size(), reducers(o.runner or "inline", o.num_cores),
                              o.buffer_entries, bytes_per_entry(o.input_format, line),
                              top_k=o.top_k,
                              entries_per_vector=vector_entries(o.input_format, line),
                              whole=whole_rows(o), size=DEFAULT_BLOCK_ENTRIES if memory is None
                              else block_entries_for(memory, o.buffer_entries))

    def split_bytes(self):
        return local_split_bytes(self.options.strategy)

    def _runner_kwargs(self):
        kwargs = super()._runner_kwargs()
        if self.options.queries and self._runner_class().alias == "spark":
            # the Spark runner only tells mappers their input file when asked
            kwargs["emulate_map_input_file"] = True
        return kwargs

    def steps(self):
        o = self.options
        if o.names_of:  # --ids any's second run (mrjobs.strategies.names)
            return names_steps(self)
        if o.prefix_df:  # the prefix strategy's first run (mrjobs.strategies.dftable)
            count = DfCount(self)
            return [MRStep(mapper_init=count.mapper_init, mapper=count.mapper,
                           mapper_final=count.mapper_final, combiner=count.combiner,
                           reducer=count.reducer)]
        if o.strategy == "blocks" and o.blocks is None:  # the launcher's: the steps follow it
            o.blocks = self._default_blocks()
        mappers = dict(mapper_init=self.mapper_vectors_init, mapper=self.mapper_vectors,
                       mapper_final=self.mapper_vectors_final)
        rows = [] if self.strategy.writes_rows else [rows_step(self)]
        if self._direct():  # the mappers feed the block pairs (see the module doc)
            return [task_step(self, self.strategy.steps()[0], mappers)] + rows
        if self._prefix_direct():  # the mappers send each vector to its prefix features
            return [task_step(self, s, mappers if i == 0 else None)
                    for i, s in enumerate(self.strategy.steps())] + rows
        vectors = MRStep(reducer_init=self.reducer_vectors_init, reducer=self.reducer_vectors,
                         reducer_final=self.reducer_vectors_final, **mappers)
        return [vectors] + [task_step(self, s) for s in self.strategy.steps()] + rows

    def _direct(self):
        """Whether the vectors go from the mappers straight to the block pairs,
        which merge and prepare them (blocks, without --max-df, vectors in)."""
        o = self.options
        return o.strategy == "blocks" and o.max_df is None and not self._from_postings()

    def _repeats(self):
        """Whether a pair may come to the rows step more than once, its best
        kept (the prefix strategy's copies without their earlier features:
        :func:`mrjobs.strategies.prefixing.repeats`)."""
        o = self.options
        return o.strategy == "prefix" and repeats(o.measure, o.nonnegative)

    def _prefix_direct(self):
        """Whether the mappers send each vector, prepared, to its prefix
        features (the prefix strategy with its df table, every vector id on
        one line: no lines to merge)."""
        o = self.options
        return o.strategy == "prefix" and bool(o.df_table) and o.unique_ids


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
        # a batch of vectors' rows at a time (RowMerger: the rows of
        # merge_rows, in key order; rows_step)
        yield from output_rows(self.counts, self._rows.add(doc, pieces))


def _blocks_args(job, extra_args):
    """The tasks' arguments with the blocks strategy's choices made at launch:
    ``--blocks`` (:func:`default_blocks` when not given) and, with
    ``--max-df``, ``--df-cut-form`` (:func:`df_cut_form`)."""
    o = job.options
    if o.blocks is None:
        o.blocks = job._default_blocks()
    if "--blocks" not in extra_args:
        extra_args = list(extra_args) + ["--blocks", str(o.blocks)]
    if o.pair_threads is None:
        o.pair_threads = pair_threads(job._runner_class().alias, o.blocks, o.num_cores)
    if "--pair-threads" not in extra_args:
        extra_args = list(extra_args) + ["--pair-threads", str(o.pair_threads)]
    if o.max_df is not None and o.df_cut_form is None:
        o.df_cut_form = df_cut_form(job._runner_class().alias, o.blocks, bool(o.queries))
    if o.max_df is not None and not any(a.startswith("--df-cut-form") for a in extra_args):
        extra_args = list(extra_args) + ["--df-cut-form", o.df_cut_form]
    return extra_args


def rows_step(job):
    """The MRStep of the rows step: each reduce task's RowMerger made at its
    start and flushed at its end."""
    def init():
        job._task_init()
        job._rows = RowMerger(job.options.top_k, job.options.buffer_entries,
                              repeats=job._repeats())

    def final():
        yield from output_rows(job.counts, job._rows.flush())
        if job._rows.repeats_dropped:
            job.counts.add(WORK, PREFIX_PAIRS_MET_AGAIN, job._rows.repeats_dropped)
        job._task_final()

    return MRStep(reducer_init=init, reducer=job.reducer_rows, reducer_final=final)


def task_step(job, step, mappers=None):
    """The MRStep of a strategy's :class:`~mrjobs.strategies.contract.Step`: its
    init and final wrapped with the task's (counters in, counters out); with
    ``mappers`` (MRStep keywords), the step's mappers too."""
    def init():
        job._task_init()
        if step.init is not None:
            step.init()

    def final():
        if step.final is not None:
            yield from step.final()
        job._task_final()

    return MRStep(reducer_init=init, reducer=step.reducer, reducer_final=final,
                  **(mappers or {}))


if __name__ == "__main__":
    MRSparseDotProducts.run()
