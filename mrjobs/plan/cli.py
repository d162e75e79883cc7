"""``python -m mrjobs.plan``: the planner's command line (the job's options,
the cluster's, and the plan's own)."""
import argparse
import json
import math
import os
import sys
from pathlib import Path

from mrjobs.measures import MEASURES, get as get_measure
from mrjobs.options import finite_float, numbers_as_values
from mrjobs.parsing import FORMATS, POSTINGS
from mrjobs.plan.estimates import MAX_TASKS, estimate, job_args
from mrjobs.plan.report import as_json, format_comparison, format_plan
from mrjobs.plan.runs import CALIBRATION, calibrate, comparison, load_calibration, measure_run
from mrjobs.plan.sample import PlanError, read_sample

__all__ = ["MAX_VECTORS", "MAX_PAIR_SAMPLE", "plan", "main"]

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


def _parser():
    ap = argparse.ArgumentParser(
        prog="python -m mrjobs.plan",
        description="What a run of python -m mrjobs.dot_products will cost: block count, "
                    "block pairs, bytes shuffled per step, memory per reducer, products and "
                    "time, from the input's size and a sample of it. The job's options "
                    "mean what they mean there.")
    ap.add_argument("inputs", nargs="*", metavar="INPUT")
    job = ap.add_argument_group("the job's options")
    job.add_argument("--queries", metavar="PATH")
    job.add_argument("--strategy", choices=("blocks", "stripes"), default="blocks")
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
                    help="measure this machine's throughput (three local runs) and write "
                         "--calibration")
    cl.add_argument("--compare", action="store_true",
                    help="also run the job here (local runner) and print plan against run")
    cl.add_argument("--json", action="store_true", help="print the plan as JSON")
    return ap


def _check(ap, o):
    for name in ("num_cores", "reducers"):
        v = getattr(o, name)
        if v is not None and v > MAX_TASKS:
            ap.error("--%s must be at most %d, not %d" % (name.replace("_", "-"), MAX_TASKS, v))
    if o.calibrate:
        if o.num_cores is not None and o.num_cores < 1:
            ap.error("--num-cores must be at least 1")
        _check_writable(ap, o.calibration)
        return
    if not o.inputs:
        ap.error("give the job's INPUT paths (or --calibrate)")
    if "" in o.inputs or o.queries == "":
        ap.error("an input path is empty (%s)" % ("--queries ''" if o.queries == "" else
                                                  "INPUT ''"))
    for name in ("blocks", "pair_threads", "buffer_entries", "max_df", "top_k", "reducers",
                 "reducer_memory", "num_cores", "num_features"):
        v = getattr(o, name)
        if v is not None and v < 1:
            ap.error("--%s must be at least 1" % name.replace("_", "-"))
    if o.vectors is not None and not 2 <= o.vectors <= MAX_VECTORS:
        ap.error("--vectors must be a number from 2 to %g, not %s" % (MAX_VECTORS, o.vectors))
    if o.sample_lines < 2 or o.pair_sample < 2:
        ap.error("--sample-lines and --pair-sample must be at least 2")
    if o.pair_sample > MAX_PAIR_SAMPLE:
        ap.error("--pair-sample must be at most %d (its pairs are scored as dense arrays), "
                 "not %d" % (MAX_PAIR_SAMPLE, o.pair_sample))
    try:
        load_calibration(o.calibration)
    except PlanError as err:
        ap.error(str(err))
    if o.strategy == "stripes" and o.blocks is not None:
        ap.error("--blocks applies to --strategy blocks only")
    if get_measure(o.measure).needs_n_features and o.num_features is None:
        ap.error("--measure %s needs --num-features N" % o.measure)
    from mrjobs.dot_products import MRSparseDotProducts
    try:  # the job's own checks of its options
        MRSparseDotProducts(job_args(o) + ["--no-conf"])
    except ValueError as e:
        ap.error(str(e))


def _check_writable(ap, path):
    """--calibrate writes ``path`` after minutes of runs: refuse at once a path
    it could not write (the directories it makes are the ones it would make)."""
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        existed = os.path.lexists(path)
        with open(path, "ab"):
            pass
        if not existed:
            os.unlink(path)
    except OSError as err:
        ap.error("--calibration %s: cannot be written (%s)" % (path, err.strerror or err))


#: the job's options the planner reads, under the same names
JOB_OPTIONS = ("queries", "strategy", "blocks", "pair_threads", "buffer_entries", "max_df",
               "top_k", "threshold", "measure", "num_features", "include_self", "float32",
               "input_format", "runner", "num_cores", "no_prune", "output_format",
               "output_dir")


def parse_options(argv):
    """The planner's options from a command line, unchecked (for callers
    that build it themselves)."""
    ap = _parser()
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


def plan(o):
    """Sample the input and estimate: the plan's dict for the parsed options."""
    corpus = read_sample(o.inputs, o.sample_lines, o.input_format)
    queries = read_sample([o.queries], o.sample_lines, o.input_format) if o.queries else None
    return estimate(corpus, queries, o, load_calibration(o.calibration))


def _constants_text(constants):
    """``name=value, ...`` of the calibration's constants (a step's CPU model
    as ``step=[k, c_bytes, c_pairs]``)."""
    return ", ".join("%s=%s" % (k, "[%s]" % ", ".join("%.3g" % x for x in v)
                                if isinstance(v, list) else "%.3g" % v)
                     for k, v in _flat(constants))


def _flat(constants):
    for k, v in constants.items():
        if isinstance(v, dict):
            yield from _flat(v)
        else:
            yield k, v


def main(argv=None):
    ap = _parser()
    o = ap.parse_args(numbers_as_values(ap, sys.argv[1:] if argv is None else argv))
    _check(ap, o)
    try:
        if o.calibrate:
            r = calibrate(o.calibration, o.num_cores or 2)
            print("calibration written to %s: %s" % (o.calibration, _constants_text(
                r["constants"])))
            return
        if o.compare:
            if o.vectors is not None:
                ap.error("--compare runs the input itself: leave out --vectors")
            # the run is local: plan for the local runner's reduce tasks
            o.runner, o.reducers, o.num_cores = "local", None, o.num_cores or 2
        e = plan(o)
        if not o.json:
            print(format_plan(e, o), flush=True)
        out = {"plan": as_json(e)}
        if o.compare:
            run = measure_run(job_args(o, o.inputs), o.num_cores or 2)
            out["run"] = {k: v for k, v in run.items() if k != "counters"}
            out["comparison"] = comparison(e, run)
            if not o.json:
                print(format_comparison(out["comparison"]))
        if o.json:
            print(json.dumps(out, indent=2, default=float))
    except (PlanError, OSError) as err:
        print("mrsparse plan: error: %s" % err, file=sys.stderr)
        sys.exit(1)
    except MemoryError:
        print("mrsparse plan: error: out of memory (lower --sample-lines or --pair-sample)",
              file=sys.stderr)
        sys.exit(1)
