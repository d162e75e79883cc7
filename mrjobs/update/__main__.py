"""``python -m mrjobs.update``: see :mod:`mrjobs.update`."""
import argparse
import difflib
import logging
import sys

from mrjobs import options
from mrjobs.runtime.failures import JobError
from mrjobs.runtime.signals import catch_stop_signals
from mrjobs.update import Update, job_options
from mrjobs.update.planning import plan_update

USAGE = """%(prog)s --previous DIR [--add PATH] [--remove PATH] --output-dir NEW [options]
       %(prog)s --previous DIR [--add PATH] [--remove PATH] --plan [options]

Update yesterday's neighbours (the --output-dir DIR of a dot-products run, or
of an earlier update) for added, removed and changed vectors: the lines a full
run on today's corpus writes, byte for byte, computing only the pairs of the
changed vectors and the rows that lost a neighbour.  Yesterday's options and
corpus come from DIR's manifest; a changed vector is one whose id is in
--remove and whose new lines are in --add.  Any other option (-r RUNNER, -c
CONF, -v, mrjob's runner options) goes to the dot-products runs, which print
only lost input unless -v is given."""


def parser():
    ap = argparse.ArgumentParser(prog=options.PROGRAM or "python -m mrjobs.update",
                                 usage=USAGE, add_help=True)
    ap.add_argument("--previous", required=True, metavar="DIR",
                    help="yesterday's --output-dir (holding its _MANIFEST.json)")
    ap.add_argument("--add", action="append", default=[], metavar="PATH",
                    help="vectors to add (a file, directory or glob; yesterday's input "
                         "format); repeatable")
    ap.add_argument("--remove", action="append", default=[], metavar="PATH",
                    help="ids to remove, one a line; repeatable")
    ap.add_argument("-o", "--output-dir", metavar="NEW",
                    help="where today's output goes (a new directory; never DIR); needed "
                         "but with --plan")
    ap.add_argument("--corpus", action="append", default=None, metavar="PATH",
                    help="yesterday's input files where they are now (in the manifest's "
                         "order), if they moved; their bytes are checked")
    ap.add_argument("--reserve", type=options.at_least(0, options.MAX_TOP_K), default=None,
                    metavar="R",
                    help="under --top-k K, keep each row's best K + R in NEW/_reserve, so "
                         "that tomorrow's update computes again only the rows that lose "
                         "more than R of them (default: DIR's R, 0 if none; an R above "
                         "DIR's runs the job once on today's corpus)")
    ap.add_argument("--overwrite-output", action="store_true",
                    help="replace what is in a non-empty --output-dir")
    ap.add_argument("--plan", action="store_true",
                    help="print what the update's runs and a full run on today's corpus "
                         "would cost (python -m mrjobs.plan's model), and run nothing")
    ap.add_argument("-q", "--quiet", action="store_true",
                    help="print nothing but errors (the runs get -q too)")
    return ap


def main(argv=None):
    """The command; its exit status."""
    ap = parser()
    args, rest = ap.parse_known_args(argv)
    if not args.output_dir and not args.plan:
        ap.error("the following arguments are required: -o/--output-dir")
    misspelt = _misspelt(ap, rest)
    if misspelt:
        ap.error("unrecognized argument %s (did you mean %s?)" % misspelt)
    if args.quiet:
        rest = rest + ["-q"]
    log = logging.getLogger("mrjobs.update")
    saved = list(log.handlers), log.level, log.propagate
    handler = logging.NullHandler() if args.quiet else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.handlers[:] = [handler]
    log.setLevel(logging.DEBUG if "-v" in rest else logging.INFO)
    log.propagate = False
    try:
        return _update(args, rest, log)
    finally:
        log.handlers[:] = saved[0]
        log.setLevel(saved[1])
        log.propagate = saved[2]


def _misspelt(ap, rest):
    """``(given, meant)`` for an option of ``rest`` that neither the job nor
    the update takes but that is close to one of the update's own (else it
    would reach the job's parser, which would not name the update's)."""
    ours = [o for a in ap._actions for o in a.option_strings if o.startswith("--")]
    theirs = job_options()
    for arg in rest:
        given = arg.split("=")[0]
        if given.startswith("--") and given not in theirs:
            close = difflib.get_close_matches(given, ours, n=1, cutoff=0.75)
            if close:
                return given, close[0]
    return None


def _update(args, rest, log):
    update = Update(args.previous, args.output_dir, args.add, args.remove, rest,
                    corpus=args.corpus, overwrite=args.overwrite_output,
                    reserve=args.reserve)
    restore = catch_stop_signals()
    try:
        if args.plan:
            print_plan(plan_update(update))
            return 0
        stats = update.run()
    except JobError as e:
        sys.stderr.write("mrsparse: error: %s\n" % (e,))
        return 1
    except KeyboardInterrupt as e:
        signum = getattr(e, "signum", 2)
        sys.stderr.write("mrsparse: stopped; %s is as it was\n" % args.output_dir)
        return 128 + signum
    finally:
        restore()
    log.info("update: %s", ", ".join("%s %s" % (v, k) for k, v in stats.items()))
    return 0


def print_plan(plans):
    """The plans of :func:`~mrjobs.update.planning.plan_update` as a table, the
    update's sum against the full run's."""
    print("%-28s %10s %10s %14s" % ("run", "CPU s", "wall s", "products"))
    for what, e in plans:
        print("%-28s %10.1f %10.1f %14.3g" % (what, e["cpu_s"], e["wall_s"],
                                               e["products_computed"]))
    full, runs = plans[0][1], [e for _, e in plans[1:]]
    cpu = sum(e["cpu_s"] for e in runs)
    print("the update: %.1f s CPU, %.1f s wall: %.0f%% of a full run's CPU (the planner does "
          "not model the rows --both-ways adds, nor the update's own reading and merging)"
          % (cpu, sum(e["wall_s"] for e in runs), 100 * cpu / max(full["cpu_s"], 1e-9)))


if __name__ == "__main__":
    sys.exit(main())
