"""``python -m mrjobs.plan``: the cost planner's command line -- its options
(:mod:`mrjobs.plan.cli`) checked, with the job's own checks of the job's
options, then the plan printed, or compared with a run of the job, or this
machine calibrated (:mod:`mrjobs.plan.realruns`)."""
import json
import os
import sys
from pathlib import Path

from mrjobs.measures import get as get_measure
from mrjobs.options import numbers_as_values
from mrjobs.plan.cli import MAX_PAIR_SAMPLE, MAX_VECTORS, parser, plan
from mrjobs.plan.estimates import MAX_TASKS, job_args
from mrjobs.plan.realruns import calibrate, measure_run
from mrjobs.plan.render import as_json, comparison, format_comparison, format_plan
from mrjobs.plan.resources import load_calibration
from mrjobs.plan.sample import PlanError

__all__ = ["main"]


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
    ap = parser()
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


if __name__ == "__main__":
    main()
