"""Real runs of the job: ``--compare`` (a run measured beside its plan) and
``--calibrate`` (the time constants of this machine; reading them:
:func:`mrjobs.plan.resources.load_calibration`)."""
import datetime
import json
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

__all__ = ["CALIBRATION_CORPORA", "measure_run", "calibrate"]

# -- real runs: --compare and --calibrate --------------------------------------------

class _StepTimes(logging.Handler):
    """Times of mrjob's 'Running step N of M' log records."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.starts = []
        self.cpu = []
        self.own = []
        self.runner = None

    def emit(self, record):
        if record.getMessage().startswith("Running step "):
            self.mark()

    def mark(self):
        self.starts.append(time.monotonic())
        # (not at the first step's start: the fork server may still be importing,
        # which that step's CPU then holds, as its time does)
        self.cpu.append(_children_cpu(self.runner if len(self.starts) > 2 else None))
        self.own.append(_own_cpu())


def _children_cpu(runner=None):
    """CPU seconds of the waited-for child processes (the local runner's tasks
    and sort, reaped at the end of each phase of a step), and of the local
    runner's forked tasks that ended (its fork server is reaped only at the
    end of the run)."""
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    forked = getattr(runner, "forked_cpu", None)
    return r.ru_utime + r.ru_stime + (forked() if forked else 0.0)


def _own_cpu():
    """CPU seconds of this process (the launcher: mrjob's runner, which
    splits each step's sorted input among the reducers)."""
    import resource
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure_run(args, num_cores=2, runner="local"):
    """Run the job on the local (or inline) runner, in a temporary directory
    that is removed afterwards, and measure it.

    Returns
    -------
    dict
        ``counters`` (mrjob's, a dict per step), ``step_bytes`` (the size of
        each step's sorted reducer input: the bytes shuffled into it),
        ``step_seconds``, ``seconds``, ``work`` (the group ``mrsparse work``
        summed over the steps), ``step_cpu`` (the tasks' and sorts' CPU
        seconds a step), ``launcher_cpu`` (this process's, a step), ``cpu_s``
        (all of it), ``temp_disk_bytes`` (the temp dir's peak, as the job
        leaves it by default: files removed once read; the larger of its size
        sampled every 50 ms and as the local runner noted it at the end of
        each phase), ``process_peaks``
        ({kind: peak RSS}, see :mod:`mrjobs.plan.procmem`) and
        ``peak_rss_bytes`` (the largest process the run started: the job's
        launcher is this process, which holds the plan too, so it is not
        measured).
    """
    from mrjobs.dot_products import MRSparseDotProducts
    from mrjobs.plan.procmem import ProcessPeaks
    from mrjobs.runtime.diskpeak import DiskPeak
    tmp = tempfile.mkdtemp(prefix="mrsparse-plan-")
    handler = _StepTimes()
    mrjob_log = logging.getLogger("mrjob")
    level = mrjob_log.level
    mrjob_log.addHandler(handler)
    mrjob_log.setLevel(logging.INFO)
    try:
        job = MRSparseDotProducts(list(args) + [
            "-r", runner, "--num-cores", str(num_cores), "--no-conf", "--local-tmp-dir", tmp])
        t0 = time.monotonic()
        handler.mark()
        with job.make_runner() as runner, DiskPeak(tmp, every=0.05) as disk, \
                ProcessPeaks() as procs:
            handler.runner = runner  # (its fork server ends with the run: 0 s after it)
            runner.run()
            handler.mark()
            counters = runner.counters()
            sizes = _step_bytes(runner)
            temp_peak = getattr(runner, "temp_peak_bytes", 0)
    finally:
        mrjob_log.removeHandler(handler)
        mrjob_log.setLevel(level)
        shutil.rmtree(tmp, ignore_errors=True)
    starts, cpu, own = handler.starts, handler.cpu, handler.own
    work = {}
    for step in counters:
        for name, n in step.get("mrsparse work", {}).items():
            work[name] = work.get(name, 0) + n
    peaks, largest = _peaks(procs)
    return {"counters": counters, "step_bytes": [sizes.get(i, 0) for i in range(len(counters))],
            "step_seconds": np.diff(starts[1:]).tolist(), "step_cpu": np.diff(cpu[1:]).tolist(),
            "launcher_cpu": np.diff(own[1:]).tolist(),
            "cpu_s": cpu[-1] - cpu[0] + own[-1] - own[0],
            "seconds": starts[-1] - t0, "work": work, "temp_disk_bytes": max(disk.peak, temp_peak),
            "process_peaks": peaks, "peak_rss_bytes": largest}


def _peaks(procs):
    """({kind: peak RSS}, the largest of a task or sort): mrjob's pool workers
    are forks of this process (kind ``other``, or ``launcher`` under ``python
    -m mrjobs.plan``): they hold the plan, not the job's work."""
    peaks = dict(procs.peaks)
    return peaks, max([v for k, v in peaks.items() if k == "sort" or k.startswith("step ")],
                      default=0)


def _step_bytes(runner):
    """{step: bytes into its reducers}: as the local runner noted them (it
    removes its sorted input files as soon as they are read), else the sorted
    input files' sizes (the inline runner keeps them until its cleanup)."""
    noted = getattr(runner, "shuffle_bytes", None)
    if noted is not None:
        return dict(noted)
    return {int(p.parent.parent.name): p.stat().st_size for p in
            Path(runner._get_local_tmp_dir()).glob("step/*/reducer/sorted-input")}


#: the calibration's corpora: (vectors, Zipf exponent, vocabulary); the 8,000
#: at Zipf 0.8 have rare features (few pairs for their bytes), which tells pairs
#: from bytes; the 20,000 and 50,000 give products enough to weigh beside the
#: steps' fixed costs, and block pairs as large as a big run's
CALIBRATION_CORPORA = ((2000, 1.1, 100000), (8000, 1.1, 100000), (8000, 0.8, 1000000),
                       (20000, 1.1, 100000), (50000, 1.1, 100000))


def calibrate(path, num_cores=2, corpora=CALIBRATION_CORPORA, log_to=sys.stderr):
    """Run the job on generated corpora (50 features a vector, cosine, top 10,
    default blocks) on the local runner, fit the time and memory constants
    (:mod:`mrjobs.plan.resources`) and write them, with the date and the
    machine, to ``path``."""
    from mrjobs.generate import write_corpus
    runs = []
    with tempfile.TemporaryDirectory(prefix="mrsparse-calibrate-") as d:
        for n, zipf, vocabulary in corpora:
            corpus = os.path.join(d, "c%d-%g.jsonl" % (n, zipf))
            write_corpus(corpus, vectors=n, zipf=zipf, vocabulary=vocabulary, seed=2,
                         progress=False)
            args = [corpus, "--measure", "cosine", "--top-k", "10"]
            run = measure_run(args, num_cores)
            e = _plan_of(args, num_cores)
            runs.append({"vectors": n, "zipf": zipf, "vocabulary": vocabulary,
                         "seconds": run["seconds"], "cpu_s": run["cpu_s"],
                         "step_bytes": run["step_bytes"], "step_seconds": run["step_seconds"],
                         "step_cpu": [a + b for a, b in zip(run["step_cpu"],
                                                            run["launcher_cpu"])],
                         "products_computed": run["work"].get("products computed", 0),
                         "block_pairs": run["work"].get("block pairs", 0),
                         "process_peaks": run["process_peaks"],
                         "temp_disk_bytes": run["temp_disk_bytes"],
                         "pair_entries": e["pair_entries"], "blocks": e["blocks"],
                         "kept_entries": e["kept_entries"], "reducers": e["reducers"],
                         "map_tasks": e["map_tasks"], "step_names": _model_names(e)})
            print("calibration: %d vectors (Zipf %g), %.1f s, step CPU %s s" % (
                n, zipf, run["seconds"], ", ".join("%.1f" % s for s in runs[-1]["step_cpu"])),
                file=log_to)
    constants = dict(_fit_time(runs, num_cores), **_fit_memory(runs))
    result = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "machine": _machine(), "slots": num_cores, "runner": "local",
              "model": "step CPU = c0 * slots + c_bytes * bytes (+ c_pairs * products "
                       "computed on the block pairs), the tasks' and the launcher's; a "
                       "step's wall: its share par over min(slots, tasks) cores, the rest "
                       "on one; memory: see mrjobs.plan.resources",
              "constants": constants, "runs": runs, "loadavg": list(os.getloadavg())}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(result, indent=2, default=float) + "\n", encoding="utf-8")
    return result


def _plan_of(args, num_cores):
    """The plan of a calibration run (its block count and block entries)."""
    from mrjobs.plan.cli import parse_options, plan
    o = parse_options(args + ["-r", "local", "--num-cores", str(num_cores),
                                     "--calibration", os.devnull])
    return plan(o)


def _model_names(e):
    """The time model of each of a plan's steps (``vectors``, ``direct``,
    ``pairs``, ``rows``, ...)."""
    return [s.get("model", s["step"]) for s in e["steps"]]


#: the steps that compute the block pairs' products
PRODUCT_STEPS = ("pairs", "direct")


def _names(r):
    """A calibration run's step model names (the vectors step's form when
    the run predates them)."""
    return r.get("step_names") or ["vectors", "pairs", "rows"][:len(r["step_bytes"])]


def _fit_time(runs, slots):
    """The time constants: each step's CPU seconds (not wall: the machine may
    be busy) fitted by non-negative least squares, over all steps (c0,
    c_bytes, c_pairs: for the steps the calibration does not run) and per
    step (``steps``: {name: [k, c_bytes, c_pairs]}); ``par`` from each step's
    wall beside its CPU."""
    from scipy.optimize import nnls
    a, t, per = [], [], {}
    for r in runs:
        for name, b, cpu in zip(_names(r), r["step_bytes"], r["step_cpu"]):
            row = [1.0, b, r["products_computed"] if name in PRODUCT_STEPS else 0]
            a.append(row)
            t.append(cpu)
            per.setdefault(name, ([], []))[0].append(row)
            per[name][1].append(cpu)
    (k0, cb, cp), _ = nnls(np.array(a), np.array(t))
    steps = {}
    for name, (rows, cpus) in per.items():
        x = np.array(rows)
        products = name in PRODUCT_STEPS
        fit, _ = nnls(x if products else x[:, :2], np.array(cpus))
        steps[name] = [float(v) for v in fit] + ([] if products else [0.0])
    out = {"c0": k0 / slots, "c_bytes": cb, "c_pairs": cp, "steps": steps}
    par = _parallel_share(runs, slots)
    if par is not None:
        out["par"] = par
    return out


def _parallel_share(runs, slots):
    """The median share of a step's CPU that ran in parallel, from
    wall = (1 - par) cpu + par cpu / m over the steps long enough to show it
    (m: the step's tasks, at most the slots)."""
    from mrjobs.runtime.localsettings import SPLIT_BYTES, task_count
    shares = []
    for r in runs:
        for name, b, cpu, wall in zip(_names(r), r["step_bytes"], r["step_cpu"],
                                      r["step_seconds"]):
            m = min(slots, task_count(b, slots, SPLIT_BYTES))
            if name in PRODUCT_STEPS:
                m = min(m, max(r["block_pairs"], 1))
            if m > 1 and cpu > 1.0:
                shares.append((cpu - wall) / (cpu - cpu / m))
    return float(np.clip(np.median(shares), 0.0, 1.0)) if shares else None


def _fit_memory(runs):
    """rss_base (a task's Python with the job's imports:
    :func:`_task_base_rss`), and from the largest run (the one a big run
    resembles) rss_sort (the sort's peak over its input, the largest step's
    bytes), rss_entry (a block-pair reducer's peak beyond rss_base and a
    chunk, over its two blocks' entries) and rss_buffer (the peak beyond
    rss_base of a task that buffers vectors into blocks -- a map task of the
    direct form, else a vectors-step reducer -- over the entries it buffers)."""
    from mrjobs.plan.resources import DEFAULTS
    r = max(runs, key=lambda r: r["vectors"])
    peaks = r["process_peaks"]
    out = {}
    names = _names(r)
    pair_key = "step %d reducer" % next(
        (i for i, n in enumerate(names) if n in PRODUCT_STEPS), 1)
    base = out["rss_base"] = _task_base_rss() or DEFAULTS["rss_base"]
    if peaks.get("sort") and max(r["step_bytes"]):
        out["rss_sort"] = peaks["sort"] / max(r["step_bytes"])
    two = r["pair_entries"] * (2.0 / r["blocks"] if r["blocks"] > 1 else 1.0)
    pair = peaks.get(pair_key)
    if pair and two:
        out["rss_entry"] = max((pair - base - DEFAULTS["rss_chunk"] * 1e6) / two, 0.0)
    # the tasks that buffer vectors into blocks: the direct form's mappers,
    # else the vectors step's reducers
    direct = names[0] == "direct"
    buffering = peaks.get("step 0 mapper" if direct else "step 0 reducer")
    if buffering and r.get("kept_entries"):
        tasks = (r.get("map_tasks") if direct else r.get("reducers")) or 1
        buffered = min(1e6, r["kept_entries"] / max(tasks, 1))
        out["rss_buffer"] = max((buffering - base) / buffered, 0.0)
    return out


def _task_base_rss():
    """Peak RSS (bytes) of a task's Python once it has imported what a
    block-pair reducer runs on (numpy, scipy.sparse, the job), before any
    data; None where it cannot be read."""
    # VmHWM: the process's own peak (Linux's ru_maxrss keeps the peak of the
    # process it was forked from, across exec)
    code = ("import mrjobs.dot_products, numpy, scipy.sparse; "
            "print(next(l.split()[1] for l in open('/proc/self/status') "
            "if l.startswith('VmHWM:')))")
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True).stdout
        return float(int(out.split()[-1]) * 1024)
    except (OSError, ValueError, IndexError, subprocess.CalledProcessError):
        return None


def _machine():
    import scipy
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cpu_model": cpu, "cpu_count": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version(), "numpy": np.__version__,
            "scipy": scipy.__version__}
