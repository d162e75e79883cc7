"""The planner's options (the job's, the cluster's, and the plan's own: the
command line of ``python -m mrjobs.plan``, whose checks and ``main`` are in
:mod:`mrjobs.plan.__main__`), :func:`plan` for them, and the dot-products
job's temporary disk (:func:`temp_disk_need`, its hook for the launcher's
check).  Imports no job: the job calls it."""
import argparse
import logging
import math

from mrjobs.measures import MEASURES
from mrjobs import options
from mrjobs.options import finite_float, numbers_as_values, suggesting
from mrjobs.parsing import FORMATS, POSTINGS
from mrjobs.plan.estimates import estimate
from mrjobs.plan.resources import CALIBRATION, load_calibration
from mrjobs.plan.sample import read_sample
from mrjobs.runtime.paths import local_lines
from mrjobs.strategies.prefixing import SUPPORTED as PREFIX_MEASURES
from mrjobs.strategies.sizing import input_data_bytes

__all__ = ["MAX_VECTORS", "MAX_PAIR_SAMPLE", "QUICK_FACTOR", "options_for_job", "output_bound", "parser",
           "parse_options", "plan", "temp_disk_need"]

log = logging.getLogger(__name__)

#: the largest --vectors: past it, products and pair counts leave float64's
#: exact range for counts and the steps' sums can overflow
MAX_VECTORS = 1e15
#: the largest --pair-sample: its pairs are scored as dense m x m arrays
MAX_PAIR_SAMPLE = 10_000


def _finite_float(text):
    """An argparse type: a finite float (nan and inf are refused)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("invalid float value: %r" % text) from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError("must be a finite number, not %s" % text)
    return value


def parser():
    ap = argparse.ArgumentParser(
        prog=options.PROGRAM or "python -m mrjobs.plan",
        description="What a run of python -m mrjobs.dot_products will cost: block count, "
                    "block pairs, bytes shuffled per step, memory per reducer, products and "
                    "time, from the input's size and a sample of it. The job's options "
                    "mean what they mean there.")
    ap.add_argument("inputs", nargs="*", metavar="INPUT")
    job = ap.add_argument_group("the job's options")
    job.add_argument("--queries", metavar="PATH")
    job.add_argument("--strategy", choices=("blocks", "prefix", "stripes"), default="blocks")
    job.add_argument("--blocks", type=int, metavar="N")
    job.add_argument("--pair-threads", type=int, metavar="N")
    job.add_argument("--buffer-entries", type=int, default=1000000, metavar="N")
    job.add_argument("--max-df", type=int, metavar="N")
    job.add_argument("--top-k", type=int, metavar="K")
    job.add_argument("--threshold", type=finite_float, metavar="T")
    job.add_argument("--measure", choices=MEASURES, default="dot")
    job.add_argument("--num-features", type=int, metavar="N")
    job.add_argument("--include-self", action="store_true")
    job.add_argument("--float32", action="store_true")
    job.add_argument("--input-format", choices=FORMATS + (POSTINGS,), default="auto")
    job.add_argument("--output-format", choices=("json", "compact"), default="json")
    job.add_argument("--ids", choices=("uuid", "any"), default="uuid",
                     help="'any': the input's ids are any strings or integers (sampled as "
                          "the job reads them; the second run that gives them back is not "
                          "planned)")
    job.add_argument("--output-dir", metavar="DIR",
                     help="where the job writes its output: without it, the output goes "
                          "to stdout, staged in the local runner's temp dir first (counted "
                          "in the temporary disk)")
    job.add_argument("-r", "--runner", help="the runner the job will use (its default "
                     "block count depends on it: local counts the cores)")
    job.add_argument("--num-cores", type=int, metavar="N")
    cl = ap.add_argument_group("the cluster and the plan")
    cl.add_argument("--reducers", type=int, metavar="N",
                    help="reduce tasks (and slots) of each step (default: 2 per core on "
                         "the local and inline runners, else 1, Hadoop's default)")
    cl.add_argument("--reducer-memory", type=int, metavar="MB",
                    help="memory of one reduce task; warns when a reducer needs more")
    cl.add_argument("--vectors", type=_finite_float, metavar="N",
                    help="plan for N vectors drawn like the input's (default: the input's "
                         "estimated count)")
    cl.add_argument("--sample-lines", type=int, default=5000, metavar="N",
                    help="lines to sample (default 5000; a smaller input is read whole)")
    cl.add_argument("--pair-sample", type=int, default=2000, metavar="N",
                    help="vectors of the sample whose pairs are scored (default 2000, "
                         "at most %d)" % MAX_PAIR_SAMPLE)
    cl.add_argument("--calibration", default=str(CALIBRATION), metavar="PATH",
                    help="time constants (default %(default)s)")
    cl.add_argument("--calibrate", action="store_true",
                    help="measure this machine's throughput (five local runs of the job on "
                         "generated corpora of 2,000 to 50,000 vectors) and write --calibration")
    cl.add_argument("--compare", action="store_true",
                    help="also run the job here (local runner) and print plan against run")
    cl.add_argument("--json", action="store_true", help="print the plan as JSON")
    ap.error = suggesting(ap, ap.error)
    return ap


#: the job's options the planner reads, under the same names
JOB_OPTIONS = ("queries", "strategy", "blocks", "pair_threads", "buffer_entries", "max_df",
               "top_k", "threshold", "measure", "num_features", "include_self", "float32",
               "input_format", "runner", "num_cores", "no_prune", "output_format",
               "output_dir", "ids")


def parse_options(argv):
    """The planner's options from a command line, unchecked (for callers
    that build it themselves)."""
    ap = parser()
    return ap.parse_args(numbers_as_values(ap, argv))


def options_for_job(job_options, inputs, sample_lines=2000, pair_sample=500):
    """The planner's options for a run of the dot-products job with
    ``job_options`` (its parsed options) on ``inputs`` (a quicker sample than
    the planner's default: for the job's own checks)."""
    o = parse_options([])
    o.inputs, o.sample_lines, o.pair_sample = list(inputs), sample_lines, pair_sample
    for name in JOB_OPTIONS:
        if getattr(job_options, name, None) is not None:
            setattr(o, name, getattr(job_options, name))
    o.runner = o.runner or "inline"
    return o


def plan(o, alternative=True):
    """Sample the input and estimate: the plan's dict for the parsed options;
    with ``alternative``, where the other of blocks and prefix could run the
    same job, its time and bytes too."""
    fmt = "named" if o.ids == "any" else o.input_format  # (mrjobs.parsing.parse_vector)
    corpus = read_sample(o.inputs, o.sample_lines, fmt)
    queries = read_sample([o.queries], o.sample_lines, fmt) if o.queries else None
    cal = load_calibration(o.calibration)
    e = estimate(corpus, queries, o, cal)
    other = {"blocks": "prefix", "prefix": "blocks"}.get(o.strategy)
    if (alternative and other and o.threshold is not None and not o.queries and o.blocks is None
            and o.pair_threads is None and o.measure in PREFIX_MEASURES):
        alt = estimate(corpus, queries, argparse.Namespace(**dict(vars(o), strategy=other)),
                       cal)
        e["alternative"] = {"strategy": other, "wall_s": alt["wall_s"],
                            "shuffle_bytes": sum(s["bytes"] for s in alt["steps"])}
    return e


# -- the dot-products job's temporary disk (the launcher's check) -------------------

#: free space of at least this many times the input passes without a plan
QUICK_FACTOR = 12
#: the most bytes a neighbour takes in the output: ``"<uuid>": `` (40), the
#: longest float repr (24, ``-2.2250738585072014e-308``) and ``, `` (2); a
#: compact record's entry (16 + 8 bytes, each escaped at most to two) takes less
NEIGHBOUR_MAX_BYTES = 66
#: the most bytes of an output line beside its neighbours (key, TAB, braces,
#: newline; a compact record's own bytes)
LINE_MAX_BYTES = 64


def temp_disk_need(job_options, inputs, free):
    """The planned peak of the temporary disk of a local run of the
    dot-products job with ``job_options`` (its parsed options) on ``inputs``
    (local paths), for a temp dir with ``free`` bytes free; None where no
    plan is made or none can be.

    The input is counted by its bytes of data (a compressed file's
    uncompressed bytes, estimated: :func:`mrjobs.strategies.sizing.input_data_bytes`).
    Without ``--output-dir`` the whole output is written into the temp dir
    too, before its copy to stdout (:func:`mrjobs.runtime.epilogue.write_output`):
    the plan counts it (top-1000 of 3,000 vectors: 175 MB of output from
    7.65 MB of input).  Where ``free`` is at least :data:`QUICK_FACTOR` times
    the input, plus at most what the output could stage (:func:`output_bound`),
    no plan is made (the peak without the output has been 3-4x the input; the
    estimate costs a second or two of sampling).  Where the input holds no
    data, or the planner cannot plan the run, None: the run goes ahead
    unchecked."""
    size = input_data_bytes(list(inputs))
    if not size:
        return None
    if free >= QUICK_FACTOR * size:
        bound = output_bound(job_options, list(inputs), free)
        if bound is not None and free >= QUICK_FACTOR * size + bound:
            return None
    try:
        return plan(options_for_job(job_options, list(inputs)), alternative=False)[
            "temp_disk_bytes"]
    except Exception as err:  # a plan that fails must not stop the run it checks
        log.debug("no temp disk plan (%r): the run goes ahead unchecked", err)
        return None


def output_bound(options, inputs, free):
    """At most the bytes of output a run with the job's ``options`` on
    ``inputs`` stages in the temp dir, without sampling: 0 with
    ``--output-dir`` (written beside it), else a line for each input line
    with ``min(--top-k, lines)`` neighbours (every line a vector, each the
    neighbour of every other, each at :data:`NEIGHBOUR_MAX_BYTES`); None
    where that is past ``free`` or not known (a compressed input, whose lines
    are not counted): the plan decides."""
    if getattr(options, "output_dir", None):
        return 0
    per_line = LINE_MAX_BYTES + NEIGHBOUR_MAX_BYTES  # at least one neighbour a line
    lines = local_lines(list(inputs), stop_above=free // per_line)
    if lines is None or lines * per_line > free:
        return None
    k = min(getattr(options, "top_k", None) or lines, lines)
    bound = lines * (LINE_MAX_BYTES + k * NEIGHBOUR_MAX_BYTES)
    return bound if bound <= free else None
