"""The command-line options of the jobs: what each means, its type and its
limits, and the checks between options (argparse's ``error`` names the
option).  The jobs add them in ``configure_args`` and check them in
``load_args``; the tasks see them as passthrough arguments.
"""
import argparse
import difflib
import math
import re
import sys

from mrjobs.counters import DFCUT
from mrjobs.measures import MEASURES, PRUNABLE, get as get_measure, help_text
from mrjobs.parsing import COMPACT_FORMATS, POSTINGS
from mrjobs.runtime.paths import local_lines
from mrjobs.strategies.containers import MEMORY_SHARE
from mrjobs.strategies.sizing import DEFAULT_BLOCK_ENTRIES, DF_CUT_FORMS, MAX_BLOCKS
from mrjobs.strategies.prefixing import SUPPORTED as PREFIX_MEASURES

__all__ = ["add_common_options", "add_dot_products_options", "check_dot_products_options",
           "at_least", "finite_float", "command_name", "suggesting", "MAX_COUNT",
           "MAX_BUFFER_ENTRIES", "MAX_CORES", "MAX_TOP_K", "LARGE_TOP_K",
           "dot_products_memory_advice", "check_blocks_against_lines", "numbers_as_values",
           "check_common_options", "add_ids_options", "check_any_ids"]

#: the largest --max-df (and --num-features): beyond any corpus's count, and
#: far from int64's end in the tasks' arithmetic
MAX_COUNT = 2**62
#: the largest --buffer-entries: 2^40 entries is tens of TB of task memory
MAX_BUFFER_ENTRIES = 2**40
#: the largest --num-cores: the local runner starts a process per core
MAX_CORES = 1024


#: the command that started this process where it was not ``python -m``
#: (``mrsparse dot-products``: set by :mod:`mrjobs.api.command`)
PROGRAM = None


def command_name(job):
    """How the user started ``job``, for usage lines and errors: ``python -m
    mrjobs.dot_products`` (or ``mrsparse dot-products``) where its class runs
    as the main module (argparse would say ``dot_products.py``); None otherwise."""
    if type(job).__module__ != "__main__":
        return None
    if PROGRAM:
        return PROGRAM
    name = getattr(getattr(sys.modules.get("__main__"), "__spec__", None), "name", None)
    if not name or name == "__main__":
        return None
    return "python -m %s" % name.rsplit(".__main__", 1)[0]


def suggesting(parser, error):
    """``parser.error`` that names the option closest to a misspelt one
    ("unrecognized arguments: --top-kk 3 (did you mean --top-k?)"), and the
    choice closest to a misspelt one ("invalid choice: 'cosin' (choose from
    ...) (did you mean cosine?)")."""
    def suggest(message):
        prefix = "unrecognized arguments: "
        if message.startswith(prefix):
            known = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
            hints = []
            for arg in message[len(prefix):].split():
                if arg.startswith("--"):
                    close = difflib.get_close_matches(arg.split("=", 1)[0], known, n=1)
                    if close:
                        hints.append("%s: did you mean %s?" % (arg.split("=", 1)[0], close[0]))
            if hints:
                message += " (%s)" % "; ".join(hints)
        choice = re.match(r"argument (\S+): invalid choice: '(.*)' \(choose from (.*)\)$",
                          message)
        if choice:  # --measure cosin: the choice meant first
            choices = [c.strip().strip("'") for c in choice.group(3).split(",")]
            close = difflib.get_close_matches(choice.group(2), choices, n=1)
            if close:
                message += " (did you mean %s?)" % close[0]
        return error(message)
    return suggest


def at_least(low, high=None):
    """An argparse type: an int >= ``low`` and, where given, <= ``high``
    (errors name the option; an over-long number is shown cut)."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError("invalid int value: %s" % _cut(repr(text))) \
                from None
        if value < low:
            raise argparse.ArgumentTypeError("must be at least %d, not %s" % (low, _cut(text)))
        if high is not None and value > high:
            raise argparse.ArgumentTypeError("must be at most %d, not %s" % (high, _cut(text)))
        return value
    parse.__name__ = "int"
    return parse


def _cut(text, width=40):
    text = text.strip()
    return text if len(text) <= width else text[:width - 3] + "..."


def finite_float(text):
    """An argparse type: a finite float."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("invalid float value: %s" % _cut(repr(text))) \
            from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError("must be a finite number, not %s" % _cut(text))
    return value


#: the largest --top-k: more neighbours than any output line could list, and
#: far from the end of the kernels' sizes (``k + k/2`` slots a vector)
MAX_TOP_K = 2**31 - 1

#: a --top-k from which the out-of-memory advice names it: each vector of a
#: block pair holds up to 1.5·K candidates (16 bytes each), as many per
#: column as a product chunk of --buffer-entries holds for a whole block of
#: a thousand vectors
LARGE_TOP_K = 1000


def add_common_options(job):
    """The options every mrsparse job takes (input, wire, output, buffers)."""
    job.arg_parser.prog = command_name(job) or job.arg_parser.prog
    job.arg_parser.error = suggesting(job.arg_parser, job.arg_parser.error)
    formats = job.INPUT_FORMATS
    job.add_passthru_arg(
        "--input-format", choices=formats, default="auto",
        help="Format of the input lines: 'json' ({\"id\": UUID, \"features\": "
             "{UUID: weight, ...}}), 'tsv' (UUID TAB UUID:weight UUID:weight ...), "
             "'compact' (mrcodecs VectorProtocol records, as --output-format compact "
             "and python -m mrjobs.convert --to compact write them), " + (
                 "'postings' (the inverted index's --output-format compact posting "
                 "lists, turned back into vectors: never guessed by 'auto'), "
                 if POSTINGS in formats else "") +
             "or 'auto' "
             "(default), per line: a line whose first TAB is followed by the byte 0x01 "
             "or 0x02 (a compact record's kind byte, which no JSON or TSV line holds "
             "there) is compact, else lines starting with '{' are JSON, others TSV.")
    job.add_passthru_arg(
        "--strict", action="store_true", default=False,
        help="Fail at the first bad input line (naming its file and line) instead of "
             "counting and skipping it.")
    job.add_passthru_arg(
        "--max-df", type=at_least(1, MAX_COUNT), default=None, metavar="N",
        help="Skip features that occur in more than N vectors (the df-cut). Results "
             "are then approximate; the counters in group '%s' say how many "
             "features and partial products were dropped." % DFCUT)
    job.add_passthru_arg(
        "--float32", action="store_true", default=False,
        help="Carry weights as float32 between steps: fewer bytes, about 7 "
             "significant digits.")
    job.add_passthru_arg(
        "--wire", choices=("compact", "json"), default="compact",
        help="Encoding of the records between steps: 'compact' (default; binary "
             "mrcodecs stripes) or 'json' (mrjob's JSONProtocol, same logic).")
    job.add_passthru_arg(
        "--output-format", choices=("json", "compact"), default="json",
        help="'json' (default): one line per key, \"UUID\" TAB {\"UUID\": number}. "
             "'compact': mrcodecs VectorProtocol records, to chain into another job.")
    job.add_passthru_arg(
        "--overwrite-output", action="store_true", default=False,
        help="Replace the contents of a non-empty --output-dir (by default the job "
             "refuses to start, as Hadoop does, so that no stale part file is mixed "
             "into the results).")
    job.add_passthru_arg(
        "--buffer-entries", type=at_least(1, MAX_BUFFER_ENTRIES), default=1000000,
        metavar="N",
        help="Entries a task buffers for in-task combining before it flushes "
             "(bounds task memory; default 1000000, at most 2^40; the "
             "documentation's benchmarks give measured peaks).")
    # mrjob's --num-cores takes any int: 0 means "all" to the runner but not
    # to mrjob's process pool, a negative one fails in the pool, a huge one
    # forks that many processes
    for action in job.arg_parser._actions:
        if "--num-cores" in action.option_strings:
            action.type = at_least(1, MAX_CORES)
            action.help = (action.help or "") + " (1 to %d)" % MAX_CORES


def add_dot_products_options(job, strategies):
    """The options of :class:`~mrjobs.dot_products.MRSparseDotProducts`
    (``strategies``: the names of its strategies)."""
    job.add_passthru_arg(
        "--measure", choices=MEASURES, default="dot",
        help="Score of a pair x, y sharing at least one feature (X, Y: their sets "
             "of features; default 'dot'): " + help_text(sep="; ") + ".")
    job.add_passthru_arg(
        "--num-features", type=at_least(1, MAX_COUNT), default=None, metavar="N",
        help="The number of distinct features of the corpus (all input vectors, before "
             "any --max-df cut): needed by --measure loglikelihood (its 2x2 table counts "
             "the features that neither vector has) and correlation (the textbook one, "
             "over all N features). The inverted index job writes one line per feature.")
    job.add_passthru_arg(
        "--threshold", type=finite_float, default=None, metavar="T",
        help="Keep only scores >= T.")
    job.add_passthru_arg(
        "--top-k", type=at_least(1, MAX_TOP_K), default=None, metavar="K",
        help="Keep each vector's K best neighbours (highest score; equal scores "
             "are ordered by neighbour UUID, ascending; K from 1 to 2^31-1).")
    job.add_passthru_arg(
        "--include-self", action="store_true", default=False,
        help="Also score each vector with itself (left out by default). A vector "
             "without features still gets no line.")
    job.add_passthru_arg(
        "--queries", default=None, metavar="PATH",
        help="Score only pairs (query, vector) between the vectors in PATH (a file, a "
             "directory or a glob; same formats as INPUT) and those in INPUT; output "
             "lines are keyed by the query vectors. A query is never its own "
             "neighbour: a vector of INPUT with the query's id is left out of that "
             "query's line. Map tasks tell query files by "
             "their whole path; a file that is both an input and a query is refused.")
    add_ids_options(job)
    # set by the launcher: how map tasks recognise query files (by whole
    # path, or by file name where mrjob uploads local files to the cluster)
    job.add_passthru_arg("--queries-match", choices=("path", "name"), default="path",
                          help=argparse.SUPPRESS)
    # the update run's (mrjobs.update): under --queries, each vector of INPUT
    # gets a line too, its best among the queries (no id in both families)
    job.add_passthru_arg("--both-ways", action="store_true", default=False,
                         help=argparse.SUPPRESS)
    # with it, under --top-k: a file of (16-byte id, float64 floor) records,
    # sorted by id; a vector of INPUT keeps only the pairs at or above its floor
    job.add_file_arg("--floors", default=None, help=argparse.SUPPRESS)
    # and the queries' own block count (default --blocks): few queries in one
    # block meet each corpus block once
    job.add_passthru_arg("--query-blocks", type=at_least(1, MAX_BLOCKS), default=None,
                         help=argparse.SUPPRESS)
    _add_strategy_options(job, strategies)


#: the dot-products options that decide its output lines (its manifest's
#: "options": what an update run repeats and checks); the others (the
#: strategy, --blocks, the wire, buffers, threads) change how, not what
RESULT_OPTIONS = ("measure", "num_features", "threshold", "top_k", "include_self",
                  "queries", "ids", "max_df", "float32", "input_format", "strict",
                  "output_format")


def result_manifest(job, options):
    """What made a run's output, for its manifest: the job's name, mrsparse's
    version and the :data:`RESULT_OPTIONS` of ``options``; None under ``--ids
    any`` (its output comes from a second run, of other inputs)."""
    if options.ids == "any":
        return None
    return {"job": job, "version": version(),
            "options": {name: getattr(options, name) for name in RESULT_OPTIONS}}


def version():
    """mrsparse's version as installed (for manifests), or "unknown"."""
    from importlib import metadata
    try:
        return metadata.version("mrsparse")
    except metadata.PackageNotFoundError:
        return "unknown"


def _add_strategy_options(job, strategies):
    """``--strategy`` and the blocks strategy's own options."""
    job.add_passthru_arg(
        "--strategy", choices=strategies, default="blocks",
        help="'blocks' (default): reducers multiply blocks of whole vectors with "
             "scipy.sparse; each vector is sent to --blocks block pairs. 'prefix' "
             "(--threshold, measures %s; no --queries): each vector is sent only to "
             "its rarest features, as far as the rest of it cannot reach the "
             "threshold: a shuffle that follows the input and the answer, not the "
             "block count; the same output. 'stripes': every partial product goes "
             "through the shuffle (sum(df^2)/2 of them); fine when every feature is "
             "rare or cut with --max-df." % ", ".join(sorted(PREFIX_MEASURES)))
    job.add_passthru_arg(
        "--blocks", type=at_least(1), default=None, metavar="N",
        help="Number of blocks of the blocks strategy (each family under --queries): "
             "N(N+1)/2 block pairs, each vector sent N times. Default: from the input "
             "size, about %d entries a block, and at least enough block pairs for the "
             "local runner's cores. At most %d, and at most the number of input lines "
             "where the input is local." % (DEFAULT_BLOCK_ENTRIES, MAX_BLOCKS))
    job.add_passthru_arg(
        "--reducer-memory", type=at_least(1), default=None, metavar="MB",
        help="Memory of a reduce task, for the default --blocks: blocks as large as a "
             "block-pair reducer holds in %d%%%% of it (default: on a cluster runner, -D "
             "mapreduce.reduce.memory.mb where given; else blocks of about %d entries)."
             % (round(100 * MEMORY_SHARE), DEFAULT_BLOCK_ENTRIES))
    job.add_passthru_arg(
        "--pair-threads", type=at_least(1, MAX_CORES), default=None, metavar="N",
        help="Threads a block pair's reducer may use where its rows come whole (one "
             "block and --top-k, measures dot, cosine and pearson, unpruned): up to "
             "--top-k 20 the threads share out the pairs, each computed once; above "
             "it (without --include-self) each row is scored against every vector, "
             "twice the products on N cores; the same output. Default: the inline and "
             "local runners' cores (at most 8) with one block, else 1.")
    # set by the launcher with --max-df under blocks: the cut's form
    # (mrjobs.strategies.sizing.df_cut_form); a job built without it uses "join"
    job.add_passthru_arg("--df-cut-form", choices=DF_CUT_FORMS, default=None,
                          help=argparse.SUPPRESS)

    # set by the launcher under --strategy prefix (mrjobs.strategies.dftable):
    # the first run, which counts the features' df, and the file of the
    # counts the job's own run then orders each vector's features by
    job.add_passthru_arg("--prefix-df", action="store_true", default=False,
                         help=argparse.SUPPRESS)
    job.add_file_arg("--df-table", default=None, help=argparse.SUPPRESS)
    # and, where that run saw every vector id on one line, no vectors step
    job.add_passthru_arg("--unique-ids", action="store_true", default=False,
                         help=argparse.SUPPRESS)
    # and, where it saw no negative weight, copies without their earlier
    # prefix features (mrjobs.strategies.prefixing.repeats)
    job.add_passthru_arg("--nonnegative", action="store_true", default=False,
                         help=argparse.SUPPRESS)

    job.add_passthru_arg(
        "--no-prune", action="store_true", default=False,
        help="Compute every product under --threshold. By default the blocks strategy "
             "skips the vectors and groups of vectors whose score bounds cannot reach "
             "the threshold (measures %s); the output is the same either way "
             "(this option is for comparing the two)." % ", ".join(sorted(PRUNABLE)))


def add_ids_options(job):
    """``--ids`` (and the second run's ``--names-of``) of the dot-products
    job and the inverted index."""
    job.add_passthru_arg(
        "--ids", choices=("uuid", "any"), default="uuid",
        help="'uuid' (default): vector and feature ids are UUIDs. 'any': JSON lines "
             "whose ids are any strings or integers (features: any keys), each mapped "
             "to a UUIDv5 as mrjobs.neighbours maps them; the output gives the ids "
             "back, a line per key: its id as JSON, TAB, its [id, number] pairs in the "
             "order of the UUID output (equal scores ordered by the ids' UUIDs). A "
             "second run joins the ids back: its shuffle is about twice the output's.")
    # set by the launcher under --ids any: the first run's output, whose UUIDs
    # the second run maps back to the input's ids (mrjobs.strategies.names)
    job.add_passthru_arg("--names-of", default=None, metavar="PATH", help=argparse.SUPPRESS)


def check_any_ids(o, error):
    """``--ids any`` reads JSON lines and writes JSON lines."""
    if o.input_format not in ("auto", "json"):
        error("argument --ids: 'any' reads JSON lines (--input-format json), not "
              "--input-format %s, whose ids are UUIDs" % o.input_format)
    if o.output_format != "json":
        error("argument --ids: 'any' writes JSON lines, not --output-format %s, whose "
              "keys are UUIDs" % o.output_format)


def check_dot_products_options(o, error):
    """The checks between the options ``o`` of the dot-products job
    (``error``: argparse's, which exits naming the option)."""
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
    if o.reducer_memory is not None and (o.strategy != "blocks" or o.blocks is not None):
        error("argument --reducer-memory: has no effect %s (it sizes the blocks strategy's "
              "default --blocks)" % ("with --blocks" if o.strategy == "blocks" else
                                     "with --strategy %s" % o.strategy))
    if o.pair_threads is not None and o.strategy != "blocks":
        error("argument --pair-threads: has no effect with --strategy %s" % o.strategy)
    if o.blocks is not None and o.blocks > MAX_BLOCKS:
        error("argument --blocks: at most %d, not %d (each vector is sent to --blocks "
              "block pairs: the shuffle grows with it)" % (MAX_BLOCKS, o.blocks))
    if o.strategy == "prefix":
        _check_prefix(o, error)
    if o.ids == "any":
        check_any_ids(o, error)
    if o.no_prune and (o.strategy == "stripes" or o.threshold is None
                       or o.measure not in PRUNABLE):
        error("argument --no-prune: has no effect %s (pruning needs --strategy blocks "
              "or prefix, --threshold and one of the measures %s)" % (
                  "with --strategy %s" % o.strategy if o.strategy == "stripes" else
                  "without --threshold" if o.threshold is None else
                  "with --measure %s" % o.measure, ", ".join(sorted(PRUNABLE))))
    if o.both_ways and (not o.queries or o.strategy != "blocks"):
        error("argument --both-ways: needs --queries and --strategy blocks")
    if o.query_blocks and not (o.queries and o.strategy == "blocks"):
        error("argument --query-blocks: needs --queries and --strategy blocks")
    if (o.prefix_df or o.df_table) and (o.strategy != "prefix" or o.max_df is not None
                                        or o.input_format == POSTINGS):
        error("argument %s: needs --strategy prefix, without --max-df, on vectors (not "
              "--input-format postings)" % ("--prefix-df" if o.prefix_df else "--df-table"))
    if o.unique_ids and not o.df_table:
        error("argument --unique-ids: needs --df-table")
    if o.nonnegative and not o.df_table:
        error("argument --nonnegative: needs --df-table")
    if o.floors and not (o.both_ways and o.top_k):
        error("argument --floors: needs --both-ways and --top-k")
    if o.queries and o.include_self:
        error("argument --include-self: does not apply with --queries "
              "(queries and vectors are two families)")


def _check_prefix(o, error):
    """What ``--strategy prefix`` needs: a threshold its bounds can use."""
    if o.threshold is None:
        error("argument --strategy: prefix needs --threshold (its vectors go where a "
              "pair can reach it; for --top-k alone: --strategy blocks)")
    if o.measure not in PREFIX_MEASURES:
        error("argument --strategy: prefix does not take --measure %s (no bound on a "
              "score holds for any partner; measures it takes: %s)"
              % (o.measure, ", ".join(sorted(PREFIX_MEASURES))))
    if o.queries:
        error("argument --strategy: prefix does not take --queries (a self-join; "
              "--strategy blocks scores queries against a corpus)")


def dot_products_memory_advice(o, base):
    """What a task of the dot-products job out of memory can change: ``base``
    (the options every job has) and the job's own options ``o``."""
    advice = [base]
    if o.top_k is not None and o.top_k >= LARGE_TOP_K:
        advice.append("lower --top-k (now %d: a vector holds up to 1.5 K candidates "
                      "in a task)" % o.top_k)
    if o.blocks and o.strategy == "blocks":
        advice.append("raise --blocks (now %d)" % o.blocks)
    return ", ".join(advice[:-1]) + " or " + advice[-1] if len(advice) > 1 else advice[0]


def check_blocks_against_lines(o, error):
    """More ``--blocks`` than local input lines only adds empty block pairs:
    refused (counted where the inputs are local files, once pipes are read;
    not for posting lists, whose lines are features, not vectors)."""
    if (o.strategy == "blocks" and o.blocks is not None and o.blocks > 1
            and o.input_format != POSTINGS):
        paths = (list(o.args) or ["-"]) + ([o.queries] if o.queries else [])
        lines = local_lines(paths, stop_above=o.blocks)
        if lines is not None and lines < o.blocks:
            error("argument --blocks: %d blocks for %d input line(s): more blocks than "
                  "vectors only adds empty block pairs (at most %d here)"
                  % (o.blocks, lines, max(lines, 1)))


def numbers_as_values(ap, argv):
    """``argv`` with each ``--option -N`` joined into ``--option=-N`` where
    the option takes a value and ``-N`` reads as a number (``-1e-3``,
    ``-inf``): argparse takes only ``-1`` and ``-.5`` for a value, and
    anything else that begins with ``-`` for an option ("expected one
    argument").  The value then meets the option's own check (``--threshold
    -inf``: "must be a finite number, not -inf", as the job says it)."""
    takes_value = {s for a in ap._actions if a.nargs is None and a.option_strings
                   for s in a.option_strings}
    out, argv = [], list(argv)
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in takes_value and i + 1 < len(argv) and _negative_number(argv[i + 1]):
            out.append("%s=%s" % (arg, argv[i + 1]))
            i += 2
            continue
        out.append(arg)
        i += 1
    return out


def _negative_number(text):
    if not text.startswith("-") or text.startswith("--"):
        return False
    try:
        float(text)
    except ValueError:
        return False
    return True


def check_common_options(ap, o, is_task=False):
    """The checks between the options every job has (``ap``: its parser,
    whose ``error`` names the option; ``o``: the parsed options)."""
    if o.overwrite_output and not o.output_dir and not is_task:  # (tasks are not told it)
        ap.error("argument --overwrite-output: has no effect without --output-dir (the "
                 "output goes to stdout)")
    if o.input_format in COMPACT_FORMATS and o.runner == "spark":
        # mrjob's Spark harness reads input as text (UTF-8): every compact
        # record would be counted malformed after the whole run
        ap.error("--input-format %s reads binary records, which Spark's text input cannot "
                 "carry (it decodes lines as UTF-8); convert them to JSON "
                 "first (python -m mrjobs.convert --to json, on another runner) for -r spark"
                 % o.input_format)
    if o.output_format == "compact" and o.runner == "spark":
        # pyspark's saveAsTextFile decodes each output line as UTF-8 (invalid
        # bytes become U+FFFD): binary records would be silently corrupted.
        # Between steps Spark keeps bytes, so --wire compact is fine there.
        ap.error("--output-format compact writes binary records, which Spark's text output "
                 "cannot carry (it decodes lines as UTF-8); use --output-format json with "
                 "-r spark")
