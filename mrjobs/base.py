"""What the mrsparse jobs share: input options, the indexing mapper, posting
list assembly, counters, an end-of-run report, and shipping of the packages.

Shipping
--------
Cluster tasks may have numpy but neither mrjob nor mrsparse.  mrjob ships
itself (``bootstrap_mrjob``); :meth:`SparseJob._runner_kwargs` adds a zip of
the pure-Python packages ``mrcodecs`` and ``mrjobs``, built when the job is
launched, to the runner's ``py_files``, which the bin runners (local,
hadoop, emr, dataproc) put on the tasks' ``PYTHONPATH`` and the Spark runner
passes to ``spark-submit --py-files``.  The optional C extension
``_mrcodecs_speedups`` cannot be imported from a zip; without it tasks use
the pure-Python framing, which gives identical bytes.
"""
import atexit
import codecs
import logging
import os
import shutil
import sys
import tempfile
import zipfile

import numpy as np
from mrjob.compat import jobconf_from_env
from mrjob.job import MRJob
from mrjob.protocol import BytesValueProtocol
from mrjob.step import StepFailedException

import mrcodecs
from mrcodecs import ID_DTYPE
from mrcodecs.jobwire import Stripe

from .kernels import group_starts, sort_sum
from .parsing import FORMATS, InputError, parse_vector

__all__ = ["SparseJob", "INPUT", "DFCUT", "WORK", "package_zip"]

log = logging.getLogger(__name__)

#: counter group of input problems (skipped lines) and input repairs
INPUT = "mrsparse input"
#: counter group of what ``--max-df`` dropped
DFCUT = "mrsparse df-cut"
#: counter group of the work done (for benchmarks)
WORK = "mrsparse work"

#: counters that mean a line was skipped
SKIPPED = ("malformed line", "id not a UUID", "weight not a finite number")

_ZIP = {}


def package_zip():
    """Path of a zip of ``mrcodecs`` and ``mrjobs`` (built once per process)."""
    if "path" not in _ZIP:
        tmp = tempfile.mkdtemp(prefix="mrsparse-py-files-")
        atexit.register(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, "mrsparse.zip")
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            for pkg in (mrcodecs, sys.modules[__package__]):
                root = os.path.dirname(os.path.abspath(pkg.__file__))
                name = pkg.__name__
                for fn in sorted(os.listdir(root)):
                    if fn.endswith(".py"):
                        z.write(os.path.join(root, fn), "%s/%s" % (name, fn))
        _ZIP["path"] = path
    return _ZIP["path"]


class _Counters(dict):
    """Counts kept in the task and sent to mrjob once, at the end of the task
    (every ``increment_counter`` call writes a line to stderr)."""

    def add(self, group, name, n=1):
        if n:
            key = (group, name)
            self[key] = self.get(key, 0) + n


class PostingBuffer:
    """Bounded in-mapper combining of postings.

    Vectors are added whole; :meth:`flush` turns them into one posting
    fragment per feature (feature id -> documents, weights, statistics), so a
    mapper emits one record per feature per flush instead of one per entry.
    Memory: at most ``limit`` entries plus one vector.
    """

    def __init__(self, limit, dtype, query=False):
        self.limit = limit
        self.dtype = dtype
        self.query = query
        self.clear()

    def clear(self):
        self.feats, self.weights, self.docs, self.counts, self.stats = [], [], [], [], []
        self.n = 0

    def add(self, doc, ids, weights, stat):
        self.feats.append(ids)
        self.weights.append(weights)
        self.docs.append(doc)
        self.counts.append(ids.shape[0])
        self.stats.append(stat)
        self.n += ids.shape[0]
        return self.n >= self.limit

    def flush(self):
        if not self.n:
            self.clear()
            return
        feats = np.concatenate(self.feats)
        weights = np.concatenate(self.weights).astype(self.dtype, copy=False)
        rep = np.repeat(np.arange(len(self.docs)), self.counts)
        docs = np.frombuffer(b"".join(self.docs), ID_DTYPE)[rep]
        stats = None if self.stats[0] is None else np.array(self.stats, np.float64)[rep]
        self.clear()
        # by feature, then document: fragments arrive sorted at the reducer
        order = np.argsort(docs, kind="stable")
        order = order[np.argsort(feats[order], kind="stable")]
        feats, weights, docs = feats[order], weights[order], docs[order]
        if stats is not None:
            stats = stats[order]
        starts = group_starts(feats)
        ends = np.append(starts[1:], feats.shape[0]).tolist()
        raw = feats.tobytes()
        query = self.query
        for s, e in zip(starts.tolist(), ends):
            yield raw[16 * s:16 * s + 16], Stripe(
                docs[s:e], weights[s:e], None if stats is None else stats[s:e], None, query)


class SparseJob(MRJob):
    """Base class of the mrsparse jobs (options, input, index, shipping)."""

    INPUT_PROTOCOL = BytesValueProtocol

    #: per-vector statistic for the index (None: no statistics)
    def prepare_vector(self, weights):
        """Weights to index and the vector's statistic; override per job."""
        return weights, None

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg(
            "--input-format", choices=FORMATS, default="auto",
            help="Format of the input lines: 'json' ({\"id\": UUID, \"features\": "
                 "{UUID: weight, ...}}), 'tsv' (UUID TAB UUID:weight UUID:weight ...), or "
                 "'auto' (default): lines starting with '{' are JSON, others TSV.")
        self.add_passthru_arg(
            "--strict", action="store_true", default=False,
            help="Fail at the first bad input line (naming its file and line) instead of "
                 "counting and skipping it.")
        self.add_passthru_arg(
            "--max-df", type=int, default=None, metavar="N",
            help="Skip features that occur in more than N vectors (the df-cut). Results "
                 "are then approximate; the counters in group '%s' say how many "
                 "features and partial products were dropped." % DFCUT)
        self.add_passthru_arg(
            "--float32", action="store_true", default=False,
            help="Carry weights as float32 between steps: fewer bytes, about 7 "
                 "significant digits.")
        self.add_passthru_arg(
            "--wire", choices=("compact", "json"), default="compact",
            help="Encoding of the records between steps: 'compact' (default; binary "
                 "mrcodecs stripes) or 'json' (mrjob's JSONProtocol, same logic).")
        self.add_passthru_arg(
            "--output-format", choices=("json", "compact"), default="json",
            help="'json' (default): one line per key, \"UUID\" TAB {\"UUID\": number}. "
                 "'compact': mrcodecs VectorProtocol records, to chain into another job.")
        self.add_passthru_arg(
            "--buffer-entries", type=int, default=1000000, metavar="N",
            help="Entries a task buffers for in-task combining before it flushes "
                 "(bounds task memory; default 1000000, about 40 MB).")

    # -- options -----------------------------------------------------------

    @property
    def wire_dtype(self):
        return np.float32 if self.options.float32 else np.float64

    def internal_protocol(self):
        from .wire import internal_protocol_class
        return internal_protocol_class(self.options.wire)()

    def output_protocol(self):
        from .wire import CompactOutputProtocol, NeighboursJSONProtocol
        if self.options.output_format == "compact":
            return CompactOutputProtocol()
        return NeighboursJSONProtocol()

    def _check_options(self):
        if self.options.max_df is not None and self.options.max_df < 1:
            self.arg_parser.error("--max-df must be at least 1")
        if self.options.buffer_entries < 1:
            self.arg_parser.error("--buffer-entries must be at least 1")
        if self.options.output_format == "compact" and self.options.runner == "spark":
            # pyspark's saveAsTextFile decodes each output line as UTF-8 (invalid
            # bytes become U+FFFD): binary records would be silently corrupted.
            # Between steps Spark keeps bytes, so --wire compact is fine there.
            self.arg_parser.error("--output-format compact writes binary records, which "
                                  "Spark's text output cannot carry (it decodes lines as "
                                  "UTF-8); use --output-format json with -r spark")

    def load_args(self, args):
        super().load_args(args)
        self._check_options()

    # -- launching -----------------------------------------------------------

    def _runner_kwargs(self):
        kwargs = super()._runner_kwargs()
        if self._runner_class().alias != "inline":
            # the inline runner imports the job in-process and only warns
            # about py_files; every other runner starts fresh task processes
            kwargs["py_files"] = list(kwargs.get("py_files") or []) + [package_zip()]
        return kwargs

    def run_job(self):
        """Run the job as mrjob does, then report skipped and dropped input."""
        log_stream = codecs.getwriter("utf_8")(self.stderr)
        self.set_up_logging(quiet=self.options.quiet, verbose=self.options.verbose,
                            stream=log_stream)
        with self.make_runner() as runner:
            try:
                runner.run()
            except StepFailedException as e:
                logging.getLogger("mrjob").error(str(e))
                sys.exit(1)
            if self._should_cat_output():
                for chunk in runner.cat_output():
                    self.stdout.write(chunk)
                self.stdout.flush()
            report = run_report(runner.counters())
            if report:
                log_stream.write(report + "\n")
                log_stream.flush()

    # -- task side: input ----------------------------------------------------

    def _task_init(self):
        self.counts = _Counters()
        self._lines = 0

    def _task_final(self):
        for (group, name), n in sorted(self.counts.items()):
            self.increment_counter(group, name, n)
        self.counts.clear()

    def read_vector(self, line):
        """Parse, check and normalise one input line.

        Returns
        -------
        (doc, ids, weights) or None
            Sorted unique feature ids, zero weights dropped; None for a
            blank or skipped line.
        """
        self._lines += 1
        try:
            parsed = parse_vector(line, self.options.input_format)
        except InputError as e:
            if self.options.strict:
                raise InputError(e.kind, "%s, line %d of this task's input split: %s: %s "
                                 "(line: %.120r)" % (self._input_file(), self._lines,
                                                     e.kind, e, line)) from None
            self.counts.add(INPUT, e.kind)
            return None
        if parsed is None:
            return None
        doc, ids, w = parsed
        self.counts.add(INPUT, "vectors read")
        ids, w, _, merged = sort_sum(ids, w)
        if merged:
            self.counts.add(INPUT, "duplicate feature (weights summed)", merged)
        zero = w == 0.0
        if zero.any():
            self.counts.add(INPUT, "zero weight (entry dropped)", int(zero.sum()))
            ids, w = ids[~zero], w[~zero]
        if not ids.shape[0]:
            self.counts.add(INPUT, "empty vector (kept; no neighbours)")
        return doc, ids, w

    @staticmethod
    def _input_file():
        return jobconf_from_env("mapreduce.map.input.file", "<stdin>")

    # -- step 1: the index ---------------------------------------------------

    def mapper_index_init(self):
        self._task_init()
        self._postings = PostingBuffer(self.options.buffer_entries, self.wire_dtype,
                                       self.is_query_input())

    def is_query_input(self):
        """True if this map task reads query vectors (see the dot products job)."""
        return False

    def mapper_index(self, _, line):
        vec = self.read_vector(line)
        if vec is None:
            return
        doc, ids, w = vec
        w, stat = self.prepare_vector(w)
        if self._postings.add(doc, ids, w, stat):
            yield from self._postings.flush()

    def mapper_index_final(self):
        yield from self._postings.flush()
        self._task_final()

    def assemble_postings(self, feature, fragments):
        """The full posting list of one feature, or None if the df-cut drops it.

        Returns
        -------
        (corpus, queries) or None
            Each a tuple ``(ids, weights, stats)`` sorted by id (queries is
            None outside ``--queries`` mode).  Memory: at most ``max_df``
            postings are kept; beyond that they are only counted.
        """
        max_df = self.options.max_df
        parts = ([], [])
        df = [0, 0]
        for s in fragments:
            q = 1 if s.query else 0
            df[q] += len(s)
            if max_df is None or df[0] + df[1] <= max_df:
                parts[q].append(s)
            elif parts[0] or parts[1]:
                parts = ([], [])  # over the cut: free what was kept
        if max_df is not None and df[0] + df[1] > max_df:
            self.counts.add(DFCUT, "features dropped")
            self.counts.add(DFCUT, "postings dropped", df[0] + df[1])
            self.counts.add(DFCUT, "partial products dropped", self.pairs_of(df[0], df[1]))
            return None
        out = []
        for chunks in parts:
            if not chunks:
                out.append(None)
                continue
            if len(chunks) == 1 and (len(chunks[0]) == 1 or (
                    chunks[0].ids[1:] > chunks[0].ids[:-1]).all()):
                # the common case on Zipfian data: a rare feature, one
                # fragment, already sorted by the mapper
                c = chunks[0]
                out.append((c.ids, c.values, c.stats))
                continue
            ids = np.concatenate([c.ids for c in chunks])
            w = np.concatenate([c.values for c in chunks])
            st = None if chunks[0].stats is None else np.concatenate([c.stats for c in chunks])
            ids, w, st, merged = sort_sum(ids, w, st)
            if merged:
                self.counts.add(INPUT, "duplicate vector id (weights summed)", merged)
            out.append((ids, w, st))
        return out[0], out[1]

    def pairs_of(self, n_corpus, n_queries):
        """Partial products a posting list of this size yields."""
        return n_corpus * (n_corpus - 1) // 2


def run_report(step_counters):
    """A short account of skipped input and df-cut drops, or ''."""
    total = {}
    for step in step_counters or ():
        for group, names in step.items():
            if group in (INPUT, DFCUT):
                for name, n in names.items():
                    total[(group, name)] = total.get((group, name), 0) + n
    lines = []
    skipped = {name: total.get((INPUT, name), 0) for name in SKIPPED}
    if any(skipped.values()):
        lines.append("mrsparse: skipped %d bad input line(s): %s (rerun with --strict to "
                     "stop at the first)" % (sum(skipped.values()), ", ".join(
                         "%s: %d" % kv for kv in skipped.items() if kv[1])))
    repaired = sorted((name, n) for (g, name), n in total.items()
                      if g == INPUT and name not in SKIPPED and name != "vectors read")
    if repaired:
        lines.append("mrsparse: input notes: " + ", ".join("%s: %d" % kv for kv in repaired))
    if total.get((DFCUT, "features dropped")):
        lines.append("mrsparse: --max-df dropped %d feature(s), %d posting(s), %d partial "
                     "product(s); results are approximate" % (
                         total[(DFCUT, "features dropped")],
                         total.get((DFCUT, "postings dropped"), 0),
                         total.get((DFCUT, "partial products dropped"), 0)))
    return "\n".join(lines)
