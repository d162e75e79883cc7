"""MRConvert: a corpus of vectors from one input format to another.

Usage::

    python -m mrjobs.convert --to compact|json|tsv [mrjob options] [options] INPUT...

Converting once to ``compact`` (:class:`mrcodecs.VectorProtocol` records)
saves the jobs parsing text on every later run::

    python -m mrjobs.convert --to compact corpus.jsonl -o corpus.compact
    python -m mrjobs.dot_products corpus.compact/ --input-format compact ...

It is an mrjob job like the others, so it runs where the data is (``-r
local``, ``-r hadoop``, ``-r emr``, ...), with their ``--input-format``,
``--strict``, ``-o/--output-dir``, the output committer and the report of
skipped input.  Input lines are read exactly as the jobs read them
(:meth:`mrjobs.job.SparseJob.read_vector`: bad lines counted and skipped,
duplicate features summed, zero weights dropped), and a vector whose id is
on several lines is merged in a reducer as the dot-products job merges it
(weights of a feature summed in a canonical order; a sum beyond the range
skips the vector's lines, counted as bad input).  So every vector comes out
on one line, and the converted corpus gives the jobs the vectors they would
have read from the original: the same output lines.  An empty vector is
kept (``{"features": {}}``, a record of 0 entries, the TSV id and its TAB).
One output differs, the inverted index's, and only where a feature's
weights on several lines of one vector cancel to 0: from the original lines
the index writes that feature with an empty posting list, from the
converted corpus the feature is gone.

Weights stay float64 and are written exactly: JSON and TSV weights as
``repr`` writes them, which reads back as the same float64, so JSON ->
compact -> JSON gives the same vectors.  ``--float32`` writes float32
weights (``compact`` records of kind 0x02: 20 bytes an entry instead of 24),
rounded as the jobs' ``--float32`` rounds them.

Output lines are in vector-id order within each part file.
"""
import argparse

from mrjob.step import MRStep

from mrcodecs.jobwire import Stripe
from mrjobs.job import SparseJob

__all__ = ["MRConvert", "TARGETS"]

#: the formats ``--to`` writes
TARGETS = ("compact", "json", "tsv")

#: the jobs' options that mean nothing to the converter (hidden, refused)
_NOT_HERE = {"--max-df": "max_df", "--output-format": "output_format",
             "--buffer-entries": "buffer_entries"}


class MRConvert(SparseJob):
    """Rewrite vectors in another input format (see the module docstring)."""

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg(
            "--to", choices=TARGETS, default=None,
            help="The format to write: 'compact' (mrcodecs VectorProtocol records, "
                 "which the jobs read with --input-format compact or auto), 'json' "
                 "({\"id\": UUID, \"features\": {UUID: weight, ...}}) or 'tsv' (UUID TAB "
                 "UUID:weight ...). Weights are written exactly (float64; float32 "
                 "with --float32).")
        for action in self.arg_parser._actions:
            if set(action.option_strings) & set(_NOT_HERE):
                action.help = argparse.SUPPRESS

    def _check_options(self):
        if self.options.to is None:
            self.arg_parser.error("the following arguments are required: --to")
        for option, dest in _NOT_HERE.items():
            action = next(a for a in self.arg_parser._actions if a.dest == dest)
            if getattr(self.options, dest) != action.default:
                self.arg_parser.error("argument %s: the converter has no such option "
                                      "(it writes every vector%s)" % (
                                          option, "; the format is --to"
                                          if dest == "output_format" else ""))
        super()._check_options()
        if self.options.to == "compact" and self.options.runner == "spark":
            self.arg_parser.error("--to compact writes binary records, which Spark's text "
                                  "output cannot carry (it decodes lines as UTF-8); convert "
                                  "with another runner")

    def memory_advice(self):
        return "a reducer holds the lines of one vector id: look for an id repeated " \
               "on very many lines"

    def output_protocol(self):
        from mrjobs.jobprotocols import CompactOutputProtocol, VectorJSONProtocol, VectorTSVProtocol
        return {"compact": CompactOutputProtocol, "json": VectorJSONProtocol,
                "tsv": VectorTSVProtocol}[self.options.to]()

    def steps(self):
        return [MRStep(mapper_init=self._task_init, mapper=self.mapper_vectors,
                       mapper_final=self._task_final,
                       reducer_init=self._task_init, reducer=self.reducer_vectors,
                       reducer_final=self._task_final)]

    def mapper_vectors(self, _, line):
        vec = self.read_vector(line)
        if vec is not None:
            doc, ids, w = vec
            yield doc, Stripe(ids, w.astype(self.wire_dtype, copy=False))

    def reducer_vectors(self, doc, parts):
        parts = list(parts)
        if len(parts) > 1:
            merged = self.merge_lines(doc, parts)
            if merged is None:
                return
            parts = [Stripe(merged[0], merged[1].astype(self.wire_dtype))]
        yield doc, parts[0]


if __name__ == "__main__":
    MRConvert.run()
