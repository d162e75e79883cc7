"""Plumbing shared by the benchmarks: machine facts, timing, tables, JSON, charts.

A benchmark module builds its rows, prints them with :func:`print_table`,
saves them with :func:`write_results` and draws them with :func:`pyplot` and
:func:`save_figure`.  Nothing here asserts on speed: benchmarks report.

Examples
--------
>>> rows = [{"fmt": "a", "mbps": 1234.5}, {"fmt": "bb", "mbps": 7.25}]
>>> print(format_table(rows, [("fmt", "format"), ("mbps", "MB/s", "{:,.1f}")]))
format     MB/s
------  -------
a       1,234.5
bb          7.2
"""
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

__all__ = [
    "REPO_ROOT",
    "RESULTS_DIR",
    "machine_info",
    "write_results",
    "format_table",
    "print_table",
    "pass_fail",
    "seconds_per_pass",
    "passes_for",
    "pyplot",
    "save_figure",
]

#: the repository root (the folder that holds ``bench/``)
REPO_ROOT = Path(__file__).resolve().parent.parent
#: where results go unless a benchmark is told otherwise (``--out``)
RESULTS_DIR = Path(__file__).resolve().parent / "results"


# -- machine facts ------------------------------------------------------------

def _cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _mem_total_bytes():
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _git(*args):
    try:
        out = subprocess.run(
            ("git",) + args, cwd=REPO_ROOT, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _version(dist):
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def machine_info(packages=("numpy", "mrjob", "ujson")):
    """Facts about this machine and run, to store next to the numbers.

    Parameters
    ----------
    packages : sequence of str
        Distributions whose installed versions to record (None if absent).

    Returns
    -------
    dict
        ``cpu_model``, ``cpu_count``, ``cpus_usable``, ``mem_total_bytes``,
        ``platform``, ``python``, ``versions``, ``date`` (UTC, ISO 8601),
        ``git_commit`` (None before the first commit), ``git_dirty``,
        ``loadavg`` (1, 5, 15 min: how busy the machine was).
    """
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count()
    status = _git("status", "--porcelain")
    return {
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable,
        "mem_total_bytes": _mem_total_bytes(),
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
    """``json.dump`` default: numpy scalars and arrays, paths."""
    if hasattr(obj, "tolist"):  # numpy scalar or array
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError("not JSON serializable: %s %.60r" % (type(obj).__name__, obj))


def write_results(name, data, directory=None):
    """Write ``<directory>/<name>.json`` and return its path.

    The file holds ``{"benchmark": name, "machine": machine_info(), **data}``
    (a ``machine`` entry in ``data`` wins).  Floats that are not finite are
    written as ``null`` so the file stays strict JSON.

    Parameters
    ----------
    name : str
        File stem, e.g. ``"wire"``.
    data : dict
        The results; numpy scalars and arrays are converted.
    directory : path-like, optional
        Default :data:`RESULTS_DIR`; created if missing.
    """
    directory = Path(directory) if directory is not None else RESULTS_DIR
    directory.mkdir(parents=True, exist_ok=True)
    payload = {"benchmark": name, "machine": machine_info()}
    payload.update(data)
    text = json.dumps(_finite(payload), indent=2, default=_jsonable, allow_nan=False)
    path = directory / ("%s.json" % name)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(text + "\n", encoding="utf-8")
    tmp.replace(path)  # readers never see half a file
    return path


def _finite(obj):
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


# -- tables -------------------------------------------------------------------

def _column(spec):
    if isinstance(spec, str):
        return spec, spec, "{}"
    key = spec[0]
    header = spec[1] if len(spec) > 1 else key
    fmt = spec[2] if len(spec) > 2 else "{}"
    return key, header, fmt


def _cell(value, fmt):
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "PASS" if value else "FAIL"
    if isinstance(value, float) and not math.isfinite(value):
        return "-"
    return fmt.format(value)


def format_table(rows, columns):
    """Render ``rows`` (dicts) as an aligned plain-text table.

    Parameters
    ----------
    rows : iterable of dict
    columns : sequence
        Each a key, or ``(key, header)``, or ``(key, header, format_string)``.
        Numbers are right-aligned, text left-aligned; a missing value or a
        non-finite float prints as ``-``, a bool as ``PASS``/``FAIL``.
    """
    cols = [_column(c) for c in columns]
    rows = list(rows)
    cells = [[_cell(r.get(k), f) for k, _, f in cols] for r in rows]
    right = [
        all(isinstance(r.get(k), (int, float)) and not isinstance(r.get(k), bool)
            for r in rows if r.get(k) is not None)
        for k, _, _ in cols
    ]
    widths = [
        max([len(h)] + [len(c[i]) for c in cells]) for i, (_, h, _) in enumerate(cols)
    ]

    def line(values):
        return "  ".join(
            v.rjust(w) if r else v.ljust(w) for v, w, r in zip(values, widths, right)
        ).rstrip()

    out = [line([h for _, h, _ in cols]), "  ".join("-" * w for w in widths)]
    out.extend(line(c) for c in cells)
    return "\n".join(out)


def print_table(rows, columns, title=None, file=None):
    """Print :func:`format_table` of ``rows``, with an optional title line."""
    file = file if file is not None else sys.stdout
    if title:
        print("\n" + title, file=file)
    print(format_table(rows, columns), file=file)
    file.flush()


def pass_fail(ok):
    """``"PASS"`` or ``"FAIL"``."""
    return "PASS" if ok else "FAIL"


# -- timing -------------------------------------------------------------------

def seconds_per_pass(run, passes=1):
    """Wall and CPU time of ``run()`` per call, over ``passes`` back-to-back calls.

    Returns
    -------
    (float, float)
        ``(wall, cpu)`` seconds per call.  CPU time is this process's
        (``time.process_time``): on a shared machine it leaves out the time the
        process waited for a core, so for single-threaded code it estimates the
        wall time on an idle machine.

    Young garbage is collected first so that one measurement does not pay
    for the garbage of the one before.
    """
    gc.collect(0)
    c0 = time.process_time()
    t0 = time.perf_counter()
    for _ in range(passes):
        run()
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    return wall / passes, cpu / passes


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


def save_figure(fig, name, directory=None, dpi=110):
    """Save ``fig`` as ``<directory>/<name>.png``, close it, return the path."""
    directory = Path(directory) if directory is not None else RESULTS_DIR
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / ("%s.png" % name)
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    fig.canvas.figure.clf()
    pyplot().close(fig)
    return path
