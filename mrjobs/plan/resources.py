"""What a run takes of the machine, beyond bytes: CPU and wall seconds, the
peak memory of each kind of process, the temporary disk of a local run,
and whether pruning pays (see :mod:`mrjobs.plan`, "Resources").

Every model here is linear in what the plan estimates already (each step's
bytes, the block pairs' products, a block pair's entries), with constants
measured on this machine by ``--calibrate`` (:mod:`mrjobs.plan.realruns`);
:data:`DEFAULTS` holds the ones a calibration written before them lacks.
"""
import json
import math
from pathlib import Path

import numpy as np

from mrjobs.plan.sample import PlanError
from mrjobs.strategies.sizing import (CHUNK_BYTES_PER_ENTRY, PAIR_BYTES_PER_ENTRY,
                                      TASK_BASE_BYTES)

__all__ = ["CALIBRATION", "CALIBRATION_BYTES", "load_calibration", "DEFAULTS", "constants", "temp_disk_bytes", "memory_by_kind", "times",
           "prune_estimate"]

#: the time constants the plan reads by default: package data, measured by
#: ``make bench`` (``--calibrate --calibration`` this file); a user's own
#: calibration is any path given to ``--calibration``
CALIBRATION = Path(__file__).resolve().parent / "calibration.json"
#: the largest calibration file read (a calibration is a few kB)
CALIBRATION_BYTES = 1 << 20


def load_calibration(path):
    """The time constants stored by --calibrate, or None when ``path`` does
    not exist or is empty (``/dev/null``).

    Raises
    ------
    PlanError
        When ``path`` cannot be read or does not hold a calibration (a JSON
        object whose ``constants`` are the finite numbers ``c0``,
        ``c_bytes`` and ``c_pairs``).
    """
    try:
        with open(path, "rb") as f:
            raw = f.read(CALIBRATION_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as err:
        raise PlanError("--calibration %s: cannot be read (%s)" % (
            path, err.strerror or err)) from None
    if not raw.strip():
        return None
    bad = "--calibration %s: not a calibration written by --calibrate (%%s)" % path
    if len(raw) > CALIBRATION_BYTES:
        raise PlanError(bad % "more than %d bytes" % CALIBRATION_BYTES)
    try:
        cal = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise PlanError(bad % "not JSON") from None
    constants = cal.get("constants") if isinstance(cal, dict) else None
    if not isinstance(constants, dict):
        raise PlanError(bad % 'no "constants" object')
    for key in ("c0", "c_bytes", "c_pairs"):
        v = constants.get(key)
        if v.__class__ not in (int, float) or not math.isfinite(v) or v < 0:
            raise PlanError(bad % '"constants" needs %s, a finite number >= 0, found %.40r'
                            % (key, v))
    return cal


#: constants a calibration may lack (measured on this project's 2-core
#: machine: the memory on a local run of 100,000 generated vectors, the
#: launcher's on 20,000, ``par`` near the calibration's fit; ``--calibrate``
#: measures all but ``rss_chunk`` and ``rss_launcher`` on yours):
#: ``rss_base`` a task process's own memory (Python, numpy, scipy, the job);
#: ``rss_entry`` bytes a block-pair reducer holds per entry of its two blocks;
#: ``rss_chunk`` bytes per ``--buffer-entries`` of a chunk of products;
#: ``rss_buffer`` bytes a vectors-step reducer holds per entry it buffers
#: (at most ``--buffer-entries``);
#: ``rss_sort`` the ``sort`` process's peak over its input's bytes;
#: ``rss_launcher`` the launcher process;
#: ``par`` the parallel share of a step's CPU (the rest, the sort and
#: the launcher's split of the sorted input, runs on one core).
DEFAULTS = {"rss_base": TASK_BASE_BYTES, "rss_entry": PAIR_BYTES_PER_ENTRY,
            "rss_chunk": CHUNK_BYTES_PER_ENTRY, "rss_buffer": 150.0,
            "rss_sort": 1.0, "rss_launcher": 60e6, "par": 0.85}

#: runners whose tasks sort their own input (a map task its output, a reduce
#: task the merge of its fetched parts): no share of a step's work waits on
#: one process, as the local runner's sort and split do (``par`` measures
#: those on the machine the calibration ran on); the job's own submission,
#: seconds a step, is not planned
CLUSTER_RUNNERS = frozenset(("hadoop", "emr", "dataproc", "spark"))
#: wall seconds a step takes on a cluster beyond its tasks' CPU (the job's
#: submission, YARN's application master and containers, the tasks' start):
#: ``(wall - CPU / 2 cores) / steps`` of this project's runs on a 2-core
#: HDFS + YARN minicluster (the benchmarks page, "Scale out": the WordNet
#: glosses, prefix 0.5, prefix 0.8 and blocks 0.5, 26, 24 and 36 s a step;
#: 27, 25 and 30 s in the runs of the day before)
STEP_LAUNCH_S = 27.0
#: cluster runners that run all of a job's steps in one application (mrjob's
#: Spark harness): one launch, not one a step
ONE_APPLICATION = frozenset(("spark",))


def constants(cal):
    """The calibration's constants over :data:`DEFAULTS`."""
    out = dict(DEFAULTS)
    if cal:
        out.update({k: v for k, v in cal["constants"].items()
                    if isinstance(v, (int, float)) or k == "steps" and _steps_ok(v)})
    return out


def _steps_ok(steps):
    """A calibration's per-step constants: {name: [k, c_bytes, c_pairs]}, finite, >= 0."""
    return isinstance(steps, dict) and all(
        isinstance(v, list) and len(v) == 3 and all(
            isinstance(x, (int, float)) and 0 <= x < float("inf") for x in v)
        for v in steps.values())


def temp_disk_bytes(steps, input_bytes, staged_output=0.0):
    """Peak bytes of a local run's temp dir, as the job's local runner keeps
    it (:mod:`mrjobs.runtime.localrunner`: a file goes once read), with
    ``staged_output`` the bytes of output written there (the whole output,
    without ``--output-dir``: it is copied to stdout after the last step;
    0 where it goes to ``--output-dir``, beside which it is written).

    A step's map output, its sorted copy and the reducers' splits of that are
    each about the step's shuffle bytes ``S``; an intermediate output is about
    the next step's ``S``.  The phases that hold the most are: the first
    step's map (the runner's copy of the input and the map output), a sort (its
    input and output), a split (the sorted file and its splits) and the
    reducers (their input and the output they write): the largest of
    ``input + S_0``, ``2 S_s``, ``S_s + S_{s+1}`` and the last step's
    ``S_last + staged_output`` (the copy to stdout then frees, or leaves, what
    it copies: no more).  ``sort`` spilling to
    temporary files (inputs beyond its memory, an eighth of the machine's by
    default) is not counted.
    """
    s = [float(x["bytes"]) for x in steps]
    if not s:
        return float(input_bytes + staged_output)
    phases = [input_bytes + s[0]] + [2 * x for x in s] + [a + b for a, b in zip(s, s[1:])]
    return max(phases + [s[-1] + staged_output])


def memory_by_kind(e, o, c):
    """Peak RSS (bytes) by kind of process: ``launcher``, ``sort`` (of the
    largest step's input; local runner only), ``vectors-step task`` (the
    first step's reducers buffer entries into blocks or stripes; the other
    tasks hold less; ``map task`` where the mappers buffer them, blocks
    without --max-df), ``block-pair reducer`` or ``stripes reducer``."""
    biggest = max((float(s["bytes"]) for s in e["steps"]), default=0.0)
    direct = bool(e["steps"]) and "parse" in e["steps"][0]
    buffered = min(o.buffer_entries, e["kept_entries"] / max(
        e["map_tasks"] if direct else e["reducers"], 1))
    out = {"launcher": c["rss_launcher"], "map task" if direct else "vectors-step task":
           c["rss_base"] + c["rss_buffer"] * buffered}
    if o.runner in (None, "local"):
        out["sort"] = c["rss_sort"] * biggest + 4e6
    if o.strategy == "blocks":
        B = max(e["blocks"], 1)
        entries = e["pair_entries"]
        two = entries * (2.0 / B if B > 1 else 1.0)
        out["block-pair reducer"] = (c["rss_base"] + c["rss_entry"] * two
                                     + c["rss_chunk"] * o.buffer_entries)
    else:
        out["%s reducer" % ("prefix-pair" if o.strategy == "prefix" else "stripes")] = (
            c["rss_base"] + e["memory"])
    return out


#: CPU seconds of the prefix strategy's pair step per distinct prefix feature
#: as the plan extrapolates them (a group's records decoded and put in the
#: batch's matrix), beside its bytes and products: fitted on one run, the
#: 117,609 WordNet glosses at cosine 0.5 on the local runner (38 s of CPU; the
#: plan's 150,000 prefix features, of which 55,000 had a pair to score)
GROUP_CPU_S = 8e-5


def times(e, c, slots, cluster=None):
    """(wall seconds, CPU seconds) from each step's CPU model, ``k + c_bytes
    bytes (+ c_pairs products computed on the block pairs)``: the calibration's
    own for the steps it ran (``steps``: vectors, pairs, rows), else ``c0 slots
    + c_bytes bytes (+ c_pairs ...)``; of a step's CPU, the share ``par`` runs
    on ``min(slots, tasks)`` cores, the rest (the sort, the launcher's work)
    on one (a block pair's task on ``pair_threads`` cores where one block's
    pair runs on threads; the local runner's tasks of a step as the plan
    counts them).  The direct form's pair step (its mappers read the input: model
    ``direct``) has its own constants; a calibration without them takes the
    pairs step's and the vectors step's ``c_bytes`` for the ``parse`` bytes
    (what a vectors step's mappers would write), on ``min(slots, map tasks)``.
    On a ``cluster`` runner (its name, one of :data:`CLUSTER_RUNNERS`) the
    whole of a step's CPU runs on ``min(slots, tasks)`` cores, the pairs
    step's wall is at least its largest task's (:func:`largest_task_share`),
    and each step takes :data:`STEP_LAUNCH_S` more (once in all on
    :data:`ONE_APPLICATION`)."""
    per = c.get("steps") if isinstance(c.get("steps"), dict) else {}
    share = 1.0 if cluster else c["par"]
    each = STEP_LAUNCH_S if cluster and cluster not in ONE_APPLICATION else 0.0
    wall = STEP_LAUNCH_S if cluster in ONE_APPLICATION else 0.0
    cpu = 0.0

    def run(step_cpu, tasks, floor=0.0):
        par = share * step_cpu
        return step_cpu, max((step_cpu - par) + par / max(min(slots, tasks), 1), floor)

    for s in e["steps"]:
        model = s.get("model", s["step"])
        k, cb, cp = (per.get(model) or per.get(s["step"])
                     or (c["c0"] * slots, c["c_bytes"], c["c_pairs"]))
        step_cpu = k + cb * s["bytes"]
        tasks = s.get("reducers", e["reducers"])
        floor = 0.0
        if s["step"] == "pairs":
            step_cpu += cp * e["products_computed"] + GROUP_CPU_S * s.get("groups", 0)
            tasks = min(tasks, e["block_pairs"]) * e.get("pair_threads", 1)
            floor = step_cpu * largest_task_share(e) if cluster else 0.0
        parts = [(step_cpu, tasks, floor)]
        if s.get("parse") and model not in per:
            parts.append(((per.get("vectors") or (0.0, c["c_bytes"]))[1] * s["parse"],
                          e["map_tasks"]))
        wall += each
        for part_cpu, part_wall in (run(*p) for p in parts):
            cpu += part_cpu
            wall += part_wall
    return wall, cpu


def largest_task_share(e):
    """The share of the pairs step's work in its largest task: the largest
    prefix feature's group (of the prefix strategy), else one block pair off
    the diagonal (``2 / B^2`` of the products of ``B`` blocks' pairs)."""
    if "largest_group_share" in e:
        return e["largest_group_share"]
    b = max(e.get("blocks") or 1, 1)
    return 1.0 if b == 1 else min(2.0 / b ** 2, 1.0)


def prune_estimate(rows, cols, o, measure, diagonal):
    """The share of a block pair's products the job's pruning leaves live
    (:func:`mrjobs.pairs.kernel`'s gate: the job prunes a block pair where
    the live cells multiply at most ``LIVE_SHARE_MAX`` of the full product),
    from the sample's sub-sample: ``rows`` and ``cols`` are ``(X, stats)``,
    X a CSR of prepared weights.  None where the job does not prune (no
    --threshold, --no-prune, a measure without bounds).

    A vector's bound against a group of ``GROUP_ROWS`` vectors depends on
    the group's vectors, not on how many groups a block has, so the share
    carries over from the sample to the job's blocks (groups of the sample
    are drawn from the same distribution).  The job also skips the bounds of
    a block pair where computing them would cost more than they could save;
    the plan does not model that gate."""
    from mrjobs.pairs.pruning import PairPlan, PruneSpec, supports
    from mrjobs.pairs.chunks import product_bounds
    from mrjobs.pairs.kernel import GROUP_ROWS
    if o.threshold is None or getattr(o, "no_prune", False) or not supports(measure):
        return None
    (A, sa), (C, sc) = rows, cols
    full = float(product_bounds(A, C).sum())
    if full == 0:
        return 0.0
    plan = PairPlan(A, C, None, PruneSpec(measure, o.threshold, None, sa, sc, diagonal,
                                          False, diagonal, GROUP_ROWS))
    live = float(np.dot(plan.live_r.sum(axis=1), np.diff(A.indptr)))
    return min(live / full, 1.0)
