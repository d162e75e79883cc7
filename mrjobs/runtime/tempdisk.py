"""A local run that would fill its temp dir is refused before it starts.

The local runner writes each step's records into its temp dir (see
:mod:`mrjobs.runtime.localrunner`); a run that fills the disk fails late,
after minutes of work.  Before the first step, :func:`check_temp_disk` asks
the job how much temporary disk its run takes at its peak (its hook
``temp_disk_estimate(inputs, free)``: :meth:`mrjobs.job.SparseJob.temp_disk_estimate`;
the dot-products job answers with the planner's estimate,
:func:`mrjobs.plan.cli.temp_disk_need`), compares that with the temp dir's
free space and refuses with one line that says how to point the temp dir
elsewhere.  A job that has no estimate (None) runs unchecked.
"""
import shutil

from mrjobs.runtime.failures import JobError

__all__ = ["check_temp_disk", "refusal", "removes_local_tmp", "size_text"]


def removes_local_tmp(opts):
    """Whether a runner with options ``opts`` (its ``_opts``) removes its local
    temp dir at its cleanup (``ALL``, ``TMP`` or ``LOCAL_TMP``): then the
    files in it are the run's own to free early."""
    return any(m in ("ALL", "TMP", "LOCAL_TMP") for m in (opts or {}).get("cleanup") or ())


def refusal(tmp_dir, free, need):
    """The one-line refusal (a :class:`JobError`)."""
    return JobError(
        "the temp dir %s has %s free, and this run needs about %s of temporary disk at its "
        "peak (python -m mrjobs.plan with the job's inputs and options shows the plan): point "
        "--local-tmp-dir (or TMPDIR) at a disk with more room" % (
            tmp_dir, size_text(free), size_text(need)))


def check_temp_disk(job, tmp_dir, inputs):
    """Raise :func:`refusal` when ``job``'s estimate of the peak temporary
    disk of its run on ``inputs`` (local paths: its hook
    ``temp_disk_estimate(inputs, free)``) exceeds the free space of
    ``tmp_dir``."""
    free = shutil.disk_usage(tmp_dir).free
    need = job.temp_disk_estimate(list(inputs), free)
    if need is not None and free < need:
        raise refusal(tmp_dir, free, need)


def size_text(b):
    """Bytes for people, to three digits: 65.5 kB, 1.23 GB (also the plan's)."""
    for unit, div in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= div:
            return "%.3g %s" % (b / div, unit)
    return "%d B" % b
