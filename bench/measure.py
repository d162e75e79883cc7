"""Measuring a job run: a child process, its descendants, its logs and files.

Wall time of the child; CPU = user + system time of the child and every
descendant it waited for (``os.wait4``: task processes, ``sort``); memory:
``VmHWM`` of every process of the tree, sampled from ``/proc``, the tree's
summed PSS, and ``wait4``'s exact max RSS; shuffle: the sizes of
``<tmp>/step/NNN/reducer/sorted-input``, where mrjob's inline and local
runners sort each step's map output (kept with ``--cleanup NONE``); output:
lines, entries, SHA-256 of the bytes, of the set of lines and of the
neighbour sets, and the sum of the scores.
"""
import hashlib
import json
import os
import select
import subprocess
import threading
import time
from pathlib import Path

import psutil

from mrjobs.plan.procmem import process_kind


def _vm_hwm(pid):
    """The peak resident set of a process so far (``VmHWM``), in bytes."""
    with open("/proc/%d/status" % pid, "rb") as f:
        return next(int(x.split()[1]) * 1024 for x in f if x.startswith(b"VmHWM:"))


def tree_memory(root, peaks, labels):
    """``(rss, pss)`` bytes of ``root`` and its descendants now; each process's
    ``VmHWM`` so far goes into ``peaks`` and its argv into ``labels`` (by pid)."""
    rss = pss = 0
    try:
        procs = [psutil.Process(root)] + psutil.Process(root).children(recursive=True)
    except psutil.Error:
        return rss, pss
    for p in procs:
        try:
            m, hwm = p.memory_full_info(), _vm_hwm(p.pid)
            if p.pid not in labels:
                labels[p.pid] = _argv(p)
        except (psutil.Error, OSError, StopIteration):
            continue  # gone
        rss, pss = rss + m.rss, pss + m.pss
        peaks[p.pid] = max(peaks.get(p.pid, 0), hwm)
    return rss, pss


def _argv(p):
    """A process's argv; for a task the local runner forked from its server
    (:mod:`mrjobs.runtime.taskfork`), which keeps the server's argv, one that
    names the task as its stderr does (mrjob's ``step/NNN/TYPE/NNNNN/stderr``)."""
    argv = p.cmdline()
    if task_label(argv) is None:
        try:
            kind = process_kind([], os.readlink("/proc/%d/fd/2" % p.pid))
        except OSError:
            kind = None
        if kind and kind.startswith("step "):
            _, step, phase = kind.split()
            return argv[:1] + ["(forked)", "--step-num=%s" % step, "--" + phase]
    return argv


def _exit_waiter(pid):
    """``wait(seconds)``: sleeps ``seconds``, or less where the child ``pid``
    exits first (a pidfd, on Linux), so that a run's wall is not rounded up
    to the next memory sample (by up to ``sample_interval``: a second-long run
    sampled each second measured up to twice its time); ``wait(None)``
    releases the pidfd."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # (not Linux, or a kernel before 5.3)
        fd = None

    def wait(seconds):
        if seconds is None:
            if fd is not None:
                os.close(fd)
        elif fd is None:
            time.sleep(seconds)
        else:
            select.select([fd], [], [], seconds)
    return wait


def run_measured(cmd, stdout_path, sample_interval, cwd=None):
    """Run ``cmd`` with stdout to a file; a dict of ``returncode``, ``wall_s``,
    ``user_s``, ``sys_s``, ``cpu_s``, ``max_rss_bytes``, ``tree_rss_peak_bytes``,
    ``tree_pss_peak_bytes``, ``process_peaks`` (``[(argv, VmHWM)]``),
    ``samples`` and ``stderr`` (``[(seconds, line)]``)."""
    lines, peaks, labels = [], {}, {}
    peak_rss = peak_pss = samples = 0
    with open(stdout_path, "wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, cwd=cwd)
        reader = threading.Thread(target=lambda: lines.extend(
            (time.perf_counter() - t0, raw.decode("utf-8", "replace").rstrip())
            for raw in proc.stderr), daemon=True)
        reader.start()
        exited = _exit_waiter(proc.pid)
        try:
            while True:
                pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    wall = time.perf_counter() - t0
                    break
                rss, pss = tree_memory(proc.pid, peaks, labels)
                peak_rss, peak_pss, samples = max(peak_rss, rss), max(peak_pss, pss), samples + 1
                exited(sample_interval)
        finally:
            exited(None)
        proc.returncode = os.waitstatus_to_exitcode(status)
        reader.join()
    return {"returncode": proc.returncode, "wall_s": wall, "user_s": ru.ru_utime,
            "sys_s": ru.ru_stime, "cpu_s": ru.ru_utime + ru.ru_stime,
            "max_rss_bytes": ru.ru_maxrss * 1024, "tree_rss_peak_bytes": peak_rss,
            "tree_pss_peak_bytes": peak_pss, "samples": samples, "stderr": lines,
            "process_peaks": [(labels.get(p), b) for p, b in peaks.items()]}


def run_checked(cmd, stdout_path, sample_interval):
    """:func:`run_measured` from the repository root; RuntimeError if it fails."""
    m = run_measured(cmd, stdout_path, sample_interval, cwd=Path(__file__).parent.parent)
    if m["returncode"] != 0:
        raise RuntimeError("%s failed (exit %d):\n%s" % (" ".join(cmd), m["returncode"], "\n".join(
            line for _, line in m["stderr"][-30:])))
    return m


def task_label(argv):
    """``"step N mapper|reducer|combiner"`` for a task process's argv, None for
    any other process (the runner, ``sort``, the shell wrapper)."""
    if not argv or os.path.basename(argv[0]) in ("sh", "bash", "dash"):
        return None
    step = phase = None
    for a in argv:
        if a.startswith("--step-num="):
            step = int(a.split("=", 1)[1]) + 1
        elif a in ("--mapper", "--reducer", "--combiner"):
            phase = a[2:]
    return None if step is None or phase is None else "step %d %s" % (step, phase)


def process_name(argv):
    """A task label, else the program (``sort``, ``python -m mrjobs.x``)."""
    label = task_label(argv)
    if label is not None or not argv:
        return label or "?"
    name = os.path.basename(argv[0])
    if name.startswith("python") and len(argv) > 2 and argv[1] == "-m":
        return "%s -m %s" % (name, argv[2])
    return name


def task_peaks(process_peaks):
    """``({"step N reducer": largest VmHWM}, task processes seen)``, in step order."""
    by, n = {}, 0
    for argv, b in process_peaks:
        label = task_label(argv)
        if label is not None:
            n += 1
            by[label] = max(by.get(label, 0), b)
    return {k: by[k] for k in sorted(by, key=lambda s: (int(s.split()[1]), s))}, n


def parse_counters(stderr_lines):
    """mrjob's logged counters: a list (one dict per step) of {group: {name: n}}."""
    steps, group = [], None
    for _, line in stderr_lines:
        if line.startswith("Running step "):
            steps.append({})
            group = None
        elif line.startswith("\t\t") and "=" in line and steps and group is not None:
            name, _, value = line.strip().rpartition("=")
            if value.isdigit():
                steps[-1][group][name] = int(value)
        elif line.startswith("\t") and not line.startswith("\t\t") and steps:
            group = line.strip()
            steps[-1].setdefault(group, {})
    return steps


def step_times(stderr_lines, wall):
    """Wall seconds of each step, from the times of mrjob's 'Running step' lines."""
    starts = [t for t, line in stderr_lines if line.startswith("Running step ")]
    return [e - s for s, e in zip(starts, starts[1:] + [wall])]


def shuffle_bytes(tmp_root):
    """Sizes of ``step/NNN/reducer/sorted-input`` under the runner's tmp dir, by step."""
    sizes = {int(p.parent.parent.name): p.stat().st_size
             for p in Path(tmp_root).glob("*/step/*/reducer/sorted-input")}
    return [sizes[k] for k in sorted(sizes)]


def read_output(path):
    """``output_lines``, ``output_pairs``, ``output_bytes``, ``output_sha256``,
    ``lines_sha256`` (the set of lines), ``neighbours_sha256`` (each key and
    its set of neighbours) and ``score_sum`` of the job's JSON output."""
    h, line_digests, whole_lines, pairs, total = hashlib.sha256(), [], [], 0, 0.0
    with open(path, "rb") as f:
        for line in f:
            h.update(line)
            whole_lines.append(hashlib.sha256(line.rstrip(b"\r\n")).digest())
            key, tab, value = line.partition(b"\t")
            if tab:
                row = json.loads(value)
                pairs += len(row)
                total += sum(row.values())
                line_digests.append(hashlib.sha256(
                    key + b"\t" + ",".join(sorted(row)).encode()).digest())
    return {"output_lines": len(line_digests), "output_pairs": pairs,
            "output_bytes": Path(path).stat().st_size, "output_sha256": h.hexdigest(),
            "lines_sha256": hashlib.sha256(b"".join(sorted(whole_lines))).hexdigest(),
            "neighbours_sha256": hashlib.sha256(b"".join(sorted(line_digests))).hexdigest(),
            "score_sum": total}
