"""What the mrsparse jobs share: options, launching (with shipping and the
end-of-run report) and reading input lines into checked vectors.

The rest lives in its own module: :mod:`mrjobs.shipping` (the packages' zip),
:mod:`mrjobs.counters` (counter groups, batching, the report),
:mod:`mrjobs.buffers` (in-task combining), :mod:`mrjobs.index` (the index step
and the df-cut), :mod:`mrjobs.stripes` and :mod:`mrjobs.blocks` (the two
strategies of the dot-products job).
"""
import codecs
import logging
import sys

import numpy as np
from mrjob.compat import jobconf_from_env
from mrjob.job import MRJob
from mrjob.protocol import BytesValueProtocol
from mrjob.step import StepFailedException

from .counters import DFCUT, INPUT, SKIPPED, WORK, Counters, run_report
from .kernels import sort_sum
from .parsing import FORMATS, InputError, parse_vector
from .shipping import package_zip

__all__ = ["SparseJob", "INPUT", "DFCUT", "WORK", "SKIPPED", "package_zip", "run_report"]

log = logging.getLogger(__name__)

class SparseJob(MRJob):
    """Base class of the mrsparse jobs (options, input, index, shipping)."""

    INPUT_PROTOCOL = BytesValueProtocol

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
        self.counts = Counters()
        self._lines = 0

    def _task_final(self):
        self.counts.send(self)

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
