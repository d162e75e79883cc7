"""The update planned (``python -m mrjobs.update --plan``): the planner's
model (:mod:`mrjobs.plan`) of the update's runs beside a full run on today's
corpus, nothing run."""
import shutil
import tempfile

from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.update import option_args, whole_run

__all__ = ["plan_update"]


def plan_update(update):
    """The runs of ``update`` (an :class:`~mrjobs.update.Update`) and a full run
    planned: a list of ``(what, plan dict)``, the full run first; the corpus
    is cut (into a temporary place) to know the rows to compute again
    (:meth:`~mrjobs.update.Update.prepare`, as the update itself does)."""
    from mrjobs.plan.cli import options_for_job, plan
    corpus = update.check(places=False)
    work = tempfile.mkdtemp(prefix="mrsparse-update-plan-")
    try:
        o = update.options
        prepared = update.prepare(corpus, work)
        p, n = prepared.cut.paths, prepared.cut.counts
        runs = [("a full run on today's corpus", [p["rest"], p["again"]], o)]
        mine = dict(o, top_k=update.cap)
        if whole_run(prepared, update.reserve, update.then):  # (at top K + R: a reserve)
            runs.append(("update: one run, whole", [p["rest"], p["again"]], mine))
        else:
            if n["again"] and n["rest"]:
                runs.append(("update run 1, both ways", [p["rest"], "--queries", p["again"],
                                                         "--both-ways"], mine))
            if n["again"]:
                runs.append(("update run 2", [p["again"]], mine))
        out = []
        for what, args, options in runs:
            options = dict(options, include_self=options["include_self"]
                           and "--queries" not in args)
            job = MRSparseDotProducts(args=update.job_args + option_args(options) + args)
            out.append((what, plan(options_for_job(job.options, list(job.options.args)),
                                   False)))
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)
