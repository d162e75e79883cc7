"""Plumbing shared by the benchmarks: options, machine facts, timing, tables, JSON,
charts.  Nothing here asserts on speed: benchmarks report.

>>> rows = [{"fmt": "a", "mbps": 1234.5}, {"fmt": "bb", "mbps": 7.25}]
>>> print(format_table(rows, [("fmt", "format"), ("mbps", "MB/s", "{:,.1f}")]))
format     MB/s
------  -------
a       1,234.5
bb          7.2
"""
import argparse
import datetime
import gc
import json
import math
import os
import platform
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

#: the repository root (the folder that holds ``bench/``)
REPO_ROOT = Path(__file__).resolve().parent.parent
#: where results go unless a benchmark is told otherwise (``--out``)
RESULTS_DIR = Path(__file__).resolve().parent / "results"
#: ``BENCH_QUICK=1 make bench`` runs every benchmark in its quick mode
QUICK_ENV = "BENCH_QUICK"


def quick_default():
    """True when the environment asks for quick runs (``BENCH_QUICK=1``)."""
    return os.environ.get(QUICK_ENV, "").lower() in ("1", "yes", "true")


def logger():
    """A ``log(message)`` printing the seconds since it was made; ``log.elapsed()``."""
    started = time.perf_counter()

    def log(msg):
        print("[%6.1fs] %s" % (time.perf_counter() - started, msg), flush=True)
    log.elapsed = lambda: time.perf_counter() - started
    return log


def arg_parser(prog, description, outputs):
    """An ArgumentParser with the options every benchmark has: ``--quick``
    (default from ``BENCH_QUICK``), ``--out`` (for ``outputs``), ``--no-chart``."""
    ap = argparse.ArgumentParser(prog=prog, description=description)
    ap.add_argument("--quick", action="store_true", default=quick_default(),
                    help="a small, fast run (default when %s=1)" % QUICK_ENV)
    ap.add_argument("--out", type=Path, help="directory for %s (default bench/results; "
                    "quick runs: .cache/bench/results-quick)" % outputs)
    ap.add_argument("--no-chart", action="store_true", help="draw no chart")
    return ap


def parse(ap, argv=None):
    """``ap.parse_args(argv)``; quick runs write elsewhere than the committed results."""
    args = ap.parse_args(argv)
    if args.out is None:
        args.out = REPO_ROOT / ".cache" / "bench" / "results-quick" if args.quick else RESULTS_DIR
    return args


def finish(name, data, args, log, chart=None):
    """Write ``<name>.json``, draw ``chart(title_date)`` unless ``--no-chart``, say
    where both went and how long the benchmark took."""
    print("\nwrote %s" % write_results(name, dict(data, elapsed_s=log.elapsed()), args.out))
    if chart and not args.no_chart:
        print("wrote %s" % chart(time.strftime("%Y-%m-%d") + (", quick" if args.quick else "")))
    print("total %.1f s (%.1f min)" % (log.elapsed(), log.elapsed() / 60))


# -- machine facts ------------------------------------------------------------

def _first_field(path, prefix):
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return next((x.split(":", 1)[1].strip() for x in f if x.startswith(prefix)), None)
    except OSError:
        return None


def _git(*args):
    try:
        out = subprocess.run(("git",) + args, cwd=REPO_ROOT, capture_output=True, text=True)
    except OSError:
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _version(dist):
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def machine_info(packages=("numpy", "scipy", "mrjob", "ujson", "sparse-dot-topn",
                           "sp-matmul-rs")):
    """Facts about this machine and run to store next to the numbers: CPU, memory,
    platform, Python, package versions, date (UTC), git commit and whether the
    tree was dirty, load averages (how busy the machine was)."""
    mem = _first_field("/proc/meminfo", "MemTotal:")
    status = _git("status", "--porcelain")
    return {
        "cpu_model": _first_field("/proc/cpuinfo", "model name") or platform.machine(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "mem_total_bytes": int(mem.split()[0]) * 1024 if mem else None,
        "platform": platform.platform(),
        "python": "%s %s" % (platform.python_implementation(), platform.python_version()),
        "versions": {name: _version(name) for name in packages},
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": None if status is None else bool(status),
        "loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
    }


# -- results ------------------------------------------------------------------

def _jsonable(obj):
    if hasattr(obj, "tolist"):  # numpy scalar or array
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError("not JSON serializable: %s %.60r" % (type(obj).__name__, obj))


def _finite(obj):
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def write_results(name, data, directory=None):
    """Write ``{"benchmark": name, "machine": machine_info(), **data}`` to
    ``<directory>/<name>.json`` (strict JSON: non-finite floats become null;
    numpy values converted) and return its path."""
    directory = Path(directory) if directory is not None else RESULTS_DIR
    directory.mkdir(parents=True, exist_ok=True)
    payload = {"benchmark": name, "machine": machine_info(), **data}
    text = json.dumps(_finite(json.loads(json.dumps(payload, default=_jsonable))), indent=2,
                      allow_nan=False)
    path = directory / ("%s.json" % name)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(text + "\n", encoding="utf-8")
    tmp.replace(path)  # readers never see half a file
    return path


# -- tables -------------------------------------------------------------------

def _cell(value, fmt):
    if value is None or isinstance(value, float) and not math.isfinite(value):
        return "-"
    if isinstance(value, bool):
        return "PASS" if value else "FAIL"
    return fmt.format(value)


def format_table(rows, columns):
    """``rows`` (dicts) as an aligned plain-text table.  ``columns``: each a key,
    ``(key, header)`` or ``(key, header, format)``.  Numbers right-aligned;
    missing or non-finite values print ``-``, bools ``PASS``/``FAIL``."""
    cols = [(c,) if isinstance(c, str) else tuple(c) for c in columns]
    cols = [(c[0], c[1] if len(c) > 1 else c[0], c[2] if len(c) > 2 else "{}") for c in cols]
    rows = list(rows)
    cells = [[_cell(r.get(k), f) for k, _, f in cols] for r in rows]
    right = [all(isinstance(r.get(k), (int, float)) and not isinstance(r.get(k), bool)
                 for r in rows if r.get(k) is not None) for k, _, _ in cols]
    widths = [max([len(h)] + [len(c[i]) for c in cells]) for i, (_, h, _) in enumerate(cols)]

    def line(values):
        return "  ".join(v.rjust(w) if r else v.ljust(w)
                         for v, w, r in zip(values, widths, right)).rstrip()
    return "\n".join([line([h for _, h, _ in cols]), "  ".join("-" * w for w in widths)]
                     + [line(c) for c in cells])


def print_table(rows, columns, title=None, file=None):
    """Print :func:`format_table` of ``rows``, with an optional title line."""
    print(("\n%s\n" % title if title else "") + format_table(rows, columns),
          file=file or sys.stdout, flush=True)


def ratio(a, b):
    """``a / b``, or None where either is missing (or ``b`` is 0)."""
    return a / b if a is not None and b else None


def pass_fail(ok):
    """``"PASS"`` or ``"FAIL"``."""
    return "PASS" if ok else "FAIL"


def check(cid, target, measured, ok):
    """A target's row: ``id``, ``target``, ``measured`` (text), ``pass`` (bool or None)."""
    return {"id": cid, "target": target, "measured": measured, "pass": ok}


def print_checks(checks, file=None):
    """Print the targets: id, PASS/FAIL, target, what was measured."""
    print_table(checks, [("id", "check"), ("pass", "result"), ("target", "target"),
                         ("measured", "measured")], title="Targets", file=file)


def size_label(n):
    """``"1.23 GB"``, ``"45 MB"`` or ``"6.7 MB"``."""
    return "%.2f GB" % (n / 1e9) if n >= 1e9 else "%.0f MB" % (n / 1e6) if n >= 1e7 else (
        "%.1f MB" % (n / 1e6))


# -- timing -------------------------------------------------------------------

def seconds_per_pass(run, passes=1):
    """``(wall, cpu)`` seconds per call of ``run()`` over ``passes`` calls (CPU:
    ``time.process_time``, which leaves out waiting for a core).  Young garbage
    is collected first, so one measurement does not pay for the last one's."""
    gc.collect(0)
    c0, t0 = time.process_time(), time.perf_counter()
    for _ in range(passes):
        run()
    return (time.perf_counter() - t0) / passes, (time.process_time() - c0) / passes


def passes_for(seconds_one_pass, min_time):
    """How many passes make a measurement last at least ``min_time`` seconds."""
    if min_time <= 0 or seconds_one_pass >= min_time:
        return 1
    return max(1, math.ceil(min_time / max(seconds_one_pass, 1e-9)))


# -- charts -------------------------------------------------------------------

def pyplot():
    """``matplotlib.pyplot`` with the non-interactive Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_series(ax, points, **style):
    """Plot ``[(x, y)]`` sorted by x, leaving out points whose y is None or 0."""
    points = sorted((x, y) for x, y in points if y)
    if points:
        ax.plot([p[0] for p in points], [p[1] for p in points], **style)


def log_axes(ax, xlabel, ylabel, title=None, logx=True, logy=True):
    """Label an axis pair; log scales; a light grid."""
    ax.set_xscale("log" if logx else "linear")
    ax.set_yscale("log" if logy else "linear")
    ax.set(xlabel=xlabel, ylabel=ylabel)
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.25)


def save_figure(fig, name, directory=None, dpi=110):
    """Save ``fig`` as ``<directory>/<name>.png``, close it, return the path."""
    directory = Path(directory) if directory is not None else RESULTS_DIR
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / ("%s.png" % name)
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    pyplot().close(fig)
    return path
