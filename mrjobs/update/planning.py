"""The update planned (``python -m mrjobs.update --plan``): the planner's
model (:mod:`mrjobs.plan`) of the update's runs beside a full run on today's
corpus, nothing run."""
import shutil
import tempfile
import uuid

from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.update import option_args
from mrjobs.update.changes import CorpusCut, read_additions, read_removals, vector_id
from mrjobs.update.rows import read_rows, rows_again

__all__ = ["plan_update"]


def plan_update(update):
    """The runs of ``update`` (an :class:`~mrjobs.update.Update`) and a full run
    planned: a list of ``(what, plan dict)``, the full run first; the corpus
    is cut (into a temporary place) to know the rows to compute again."""
    from mrjobs.plan.cli import options_for_job, plan
    corpus = update.check(places=False)
    work = tempfile.mkdtemp(prefix="mrsparse-update-plan-")
    try:
        o = update.options
        removed = read_removals(update.remove)
        added = read_additions(update.add, o["input_format"], o["float32"])
        rows = read_rows(update.previous_lines(), update.previous)
        again = rows_again(rows, {vector_id(k) for k in removed}, o["top_k"])
        cut = CorpusCut(work, o["input_format"], o["float32"])
        cut.write(corpus, removed, {uuid.UUID(k).bytes for k in again}, added)
        p, n = cut.paths, cut.counts
        runs = [("a full run on today's corpus", [p["rest"], p["again"]])]
        if n["again"] and n["rest"]:
            runs.append(("update run 1, both ways", [p["rest"], "--queries", p["again"],
                                                     "--both-ways"]))
        if n["again"]:
            runs.append(("update run 2", [p["again"]]))
        out = []
        for what, args in runs:
            mine = dict(o, include_self=o["include_self"] and "--queries" not in args)
            job = MRSparseDotProducts(args=update.job_args + option_args(mine) + args)
            out.append((what, plan(options_for_job(job.options, list(job.options.args)),
                                   False)))
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


