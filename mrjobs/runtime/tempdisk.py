"""A local run that would fill its temp dir is refused before it starts.

The local runner writes each step's records into its temp dir (see
:mod:`mrjobs.runtime.localrunner`); a run that fills the disk fails late,
after minutes of work.  Before the first step, :func:`check_temp_disk`
compares the temp dir's free space with the planner's estimate of the run's
peak (:func:`mrjobs.plan.resources.temp_disk_bytes`) and refuses with one
line that says how to point the temp dir elsewhere.  The input is counted
by its bytes of data (a compressed file's uncompressed bytes, estimated:
:func:`mrjobs.strategies.sizing.input_data_bytes`).  Without
``--output-dir`` the whole output is written into the temp dir too, before
its copy to stdout (:func:`mrjobs.runtime.report.write_output`): the plan
counts it (top-1000 of 3,000 vectors: 175 MB of output from 7.65 MB of
input).  Where the free space is at least :data:`QUICK_FACTOR` times the
input, plus at most what the output could stage (:func:`output_bound`), no
plan is made (the peak without the output has been 3-4x the input; the
estimate costs a second or two of sampling).  Where the input is not local
files, or the planner cannot plan the run, the run goes ahead unchecked.
"""
import logging
import shutil

from mrjobs.runtime.errors import JobError
from mrjobs.runtime.paths import local_lines
from mrjobs.strategies.sizing import input_data_bytes

__all__ = ["QUICK_FACTOR", "check_temp_disk", "output_bound", "refusal", "removes_local_tmp",
           "size_text"]

log = logging.getLogger(__name__)

#: free space of at least this many times the input passes without a plan
QUICK_FACTOR = 12
#: the most bytes a neighbour takes in the output: ``"<uuid>": `` (40), the
#: longest float repr (24, ``-2.2250738585072014e-308``) and ``, `` (2); a
#: compact record's entry (16 + 8 bytes, each escaped at most to two) takes less
NEIGHBOUR_MAX_BYTES = 66
#: the most bytes of an output line beside its neighbours (key, TAB, braces,
#: newline; a compact record's own bytes)
LINE_MAX_BYTES = 64


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
    """Raise :func:`refusal` when the planned peak of ``job``'s run on
    ``inputs`` (local paths) exceeds the free space of ``tmp_dir`` (for a
    job whose class says ``PLANNED``: the planner models its runs)."""
    size = input_data_bytes(list(inputs))
    if not getattr(job, "PLANNED", False) or not size:
        return
    free = shutil.disk_usage(tmp_dir).free
    if free >= QUICK_FACTOR * size:
        bound = output_bound(job.options, list(inputs), free)
        if bound is not None and free >= QUICK_FACTOR * size + bound:
            return
    from mrjobs.plan.cli import options_for_job, plan
    try:
        need = plan(options_for_job(job.options, list(inputs)))["temp_disk_bytes"]
    except Exception as err:  # a plan that fails must not stop the run it checks
        log.debug("no temp disk plan (%r): the run goes ahead unchecked", err)
        return
    if need is not None and free < need:
        raise refusal(tmp_dir, free, need)


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


def size_text(b):
    """Bytes for people, to three digits: 65.5 kB, 1.23 GB (also the plan's)."""
    for unit, div in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= div:
            return "%.3g %s" % (b / div, unit)
    return "%d B" % b
