"""The local runner's numbers that others read: the bytes a task, how many
tasks a step gets (:func:`task_count`), the environment variable of its report
and the report (:func:`write_report`).

The planner and the dot-products job read them without importing
:mod:`mrjobs.runtime.localrunner`, whose import patches mrjob (it imports
:mod:`mrjob.bin` with a stand-in for ``pyspark``); this module imports nothing.
"""

__all__ = ["BALANCE_BYTES", "REPORT_ENV", "SPLIT_BYTES", "task_count", "write_report"]

#: the environment variable naming the file of the runner's report (see :mod:`mrjobs.runtime.localrunner`)
REPORT_ENV = "MRSPARSE_LOCAL_RUNNER_REPORT"

#: bytes of a step's input per task (about a CPU second of a vectors-step
#: mapper): below it, another task costs more to start than it would share
SPLIT_BYTES = 8 * 2**20

#: bytes of a step's input a core above which a step gets mrjob's two tasks
#: a core (they even out tasks of unequal cost); below, at most one a core:
#: tasks of equal size end no sooner for being more than the cores
BALANCE_BYTES = 64 * 2**20


def task_count(nbytes, cores, split_bytes, given=None):
    """Tasks for ``nbytes`` of a step's input.

    Parameters
    ----------
    nbytes : int
        Bytes of the step's input (for the map side, uncompressed files).
    cores : int
        The runner's cores (``--num-cores``).
    split_bytes : int or None
        Bytes a task, up to one task a core; None: mrjob's two tasks a core.
    given : int or None
        ``mapreduce.job.maps`` or ``.reduces``, which wins where set.

    >>> task_count(10**5, 2, SPLIT_BYTES), task_count(10**5, 2, None)
    (1, 4)
    >>> task_count(13 * 2**20, 2, SPLIT_BYTES), task_count(10**9, 2, SPLIT_BYTES)
    (2, 4)
    >>> task_count(10**5, 2, SPLIT_BYTES, given=3)
    3
    """
    if given:
        return given
    if split_bytes is None or nbytes > cores * BALANCE_BYTES:
        return 2 * cores
    return max(1, min(cores, -(-nbytes // split_bytes)))


def write_report(path, run, shuffle, peak):
    """Write the report at ``path``: the shuffle bytes of each step with
    reducers, numbered in order over the runs of this process that wrote it
    (a job of two runs: the prefix strategy's df count, then its own), and
    the largest temp-dir peak among them; ``run`` names this runner's."""
    import json
    import os
    runs = {}
    try:
        with open(path, encoding="utf-8") as f:
            noted = json.load(f)
        if noted.get("pid") == os.getpid():
            runs = noted.get("runs", {})
    except (OSError, ValueError):
        pass
    runs[run] = {"shuffle_bytes": {str(k): v for k, v in sorted(shuffle.items())},
                 "temp_peak_bytes": peak}
    steps = [v for r in runs.values() for _, v in sorted(
        r["shuffle_bytes"].items(), key=lambda kv: int(kv[0]))]
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"pid": os.getpid(), "runs": runs,
                   "shuffle_bytes": {str(i): v for i, v in enumerate(steps)},
                   "temp_peak_bytes": max(r["temp_peak_bytes"] for r in runs.values())}, f)
