"""The local runner (``-r local``) of the mrsparse jobs: mrjob's, with as many
tasks as the work at hand needs.

mrjob's :class:`~mrjob.local.LocalMRJobRunner` cuts every step's input into
two splits per core, whatever its size (a ``TODO`` in ``mrjob/sim.py`` leaves
``mapreduce.job.maps`` and ``.reduces`` unread), so a job of 50 vectors
starts as many task processes as one of 50,000, and each costs its imports.
:class:`LocalRunner` keeps that runner (alias ``local``: the same options,
files, logs and counters) and changes only how many tasks a step gets, where
the job allows it (option ``split_bytes``, which the job sets when its output
does not depend on the partitioning):

* ``mapreduce.job.maps`` / ``mapreduce.job.reduces`` (``--jobconf``, also per
  step) give the number of map / reduce splits, as on Hadoop;
* else a split per ``split_bytes`` of the step's input, at least one and at
  most one a core; above ``BALANCE_BYTES`` a core, mrjob's two a core
  (:func:`~mrjobs.runtime.localsettings.task_count`).

mrjob's runners import ``pyspark``, where it is installed, to look for
``spark-submit``; this one leaves that import to a Spark step.  Where a step
has a single task, it runs without a process pool; the first step's map
splits of an uncompressed input are mrjob's, cut reading only near each cut
and copied in the kernel (:func:`input_cuts`); a step
without a mapper hands the previous step's part files to the sort as they are
(mrjob copies them line by line), and a single reduce split is the sorted
file itself.  Without ``split_bytes`` the splits are mrjob's, byte for byte.
On Linux each task is forked from a server that has done its imports
(:mod:`mrjobs.runtime.taskfork`), else started as a fresh interpreter; the
run's task processes are run and ended by
:class:`~mrjobs.runtime.taskprocesses.TaskProcesses`.

Temporary disk: mrjob keeps every file of every step until the job ends
(the first step's copy of the input, each step's map output, its sorted
input and the reducers' splits of it, each intermediate output), about ten
times the input for the dot products job.  Where ``cleanup`` removes the
local temp dir anyway (mrjob's default ``ALL``, or ``TMP``/``LOCAL_TMP``),
this runner removes each of those files as soon as the job is done with it,
after the phase that read it succeeded (a failed task's input stays for its
error report): a task's input after the task, the map output after the
sort, the sorted input once split, an intermediate step's output once the
next step has read it (not a ``--step-output-dir`` the user asked for).
The peak is then about two copies of the largest step's shuffle
(:func:`mrjobs.plan.resources.temp_disk_bytes` estimates it).  Task logs
(``stderr``) stay: the counters are read from them.  Where the environment
variable ``MRSPARSE_LOCAL_RUNNER_REPORT`` names a file, the runner writes to
it, after each step, the bytes shuffled into each step so far and the temp
dir's peak (JSON: ``shuffle_bytes``, ``temp_peak_bytes``): the benchmarks
read them, since the files they were measured on are gone.
"""
import importlib
import importlib.util
import logging
import os
import stat
import sys
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path


class _Pyspark:
    """Stands in for ``pyspark`` in :mod:`mrjob.bin`, which imports it (a
    third of a CPU second) only to look for ``spark-submit`` beside it: the
    module is imported where that look needs it."""

    def __bool__(self):
        return importlib.util.find_spec("pyspark") is not None

    def __getattr__(self, name):
        return getattr(importlib.import_module("pyspark"), name)


def _import_local_runner():
    if "mrjob.bin" not in sys.modules and "pyspark" not in sys.modules:
        sys.modules["pyspark"] = None  # an ImportError for mrjob.bin's try
        try:
            import mrjob.bin
        finally:
            del sys.modules["pyspark"]
        mrjob.bin.pyspark = _Pyspark()
    return importlib.import_module("mrjob.local").LocalMRJobRunner


LocalMRJobRunner = _import_local_runner()

from mrjob.cat import is_compressed  # noqa: E402  (mrjob.bin first)
from mrjob.conf import combine_local_envs  # noqa: E402
from mrjob.sim import _symlink_or_copy  # noqa: E402

from mrjobs.runtime.diskpeak import tree_size  # noqa: E402
from mrjobs.runtime.localsettings import REPORT_ENV, task_count, write_report  # noqa: E402
from mrjobs.runtime.paths import HadoopInputs  # noqa: E402
from mrjobs.runtime.taskfork import TaskForker, enabled, preload_modules  # noqa: E402
from mrjobs.runtime.taskprocesses import TaskProcesses  # noqa: E402
from mrjobs.runtime.tempdisk import removes_local_tmp  # noqa: E402

__all__ = ["LocalRunner", "split_bounds"]

log = logging.getLogger(__name__)

class LocalRunner(HadoopInputs, LocalMRJobRunner):
    """mrjob's local runner with tasks sized to the work (see the module);
    an input directory's hidden files skipped (:class:`~mrjobs.runtime.paths.HadoopInputs`)."""

    alias = "local"

    OPT_NAMES = LocalMRJobRunner.OPT_NAMES | {"split_bytes"}

    def _sized(self):
        return self._opts.get("split_bytes") is not None

    def _given_tasks(self, step_num, name):
        """``mapreduce.job.<name>`` (or its Hadoop 1 name) for the step, where
        the splits are sized."""
        if not self._sized():
            return None
        jobconf = self._jobconf_for_step(step_num)
        value = next((jobconf[k] for k in _JOBCONF[name] if jobconf.get(k) is not None), None)
        try:
            return max(int(value), 1) if value is not None else None
        except ValueError:
            log.warning("mapreduce.job.%s=%r is not a number: ignored", name, value)
            return None

    def _pick_mapper_split_size(self, input_paths, step_num):
        if not self._sized():
            return super()._pick_mapper_split_size(input_paths, step_num)
        compressed = [p for p in input_paths if is_compressed(p)]
        nbytes = sum(os.stat(p)[stat.ST_SIZE] for p in input_paths if p not in compressed)
        n = task_count(nbytes, self._num_cores(), self._opts["split_bytes"],
                       self._given_tasks(step_num, "maps"))
        return -(-nbytes // max(n - len(compressed), 1))

    def _split_mapper_input(self, input_paths, step_num):
        """A step without a mapper (or combiner) reads the previous step's part
        files as they are: each is a split, linked, not copied."""
        step = self._get_step(step_num)
        input_paths = list(input_paths)
        if step_num == 0 and self._sized() and not self._uses_input_manifest() and not any(
                is_compressed(p) for p in input_paths):
            return self._cut_input(input_paths, step_num)
        if (not self._sized() or step_num == 0 or "mapper" in step or "combiner" in step
                or self._uses_input_manifest()):
            return super()._split_mapper_input(input_paths, step_num)
        splits = []
        for task_num, path in enumerate(input_paths):
            dest = self._task_input_path("mapper", step_num, task_num)
            self.fs.mkdir(os.path.dirname(dest))
            _symlink_or_copy(os.path.abspath(path), dest)
            splits.append(dict(file=path, start=0, length=os.stat(path)[stat.ST_SIZE]))
        return splits

    def _cut_input(self, input_paths, step_num):
        """mrjob's splits of uncompressed input files (a split ends with the
        line that brings it to the split size), found by reading only near
        each cut and copied in the kernel where it can (mrjob reads and
        writes every line in Python: a quarter of a second for 50 MB)."""
        split_size = self._pick_mapper_split_size(input_paths, step_num)
        splits = []
        for path in input_paths:
            with open(path, "rb") as src:
                bounds = input_cuts(src, os.stat(path)[stat.ST_SIZE], split_size)
                for start, end in zip(bounds, bounds[1:]):
                    dest = self._task_input_path("mapper", step_num, len(splits))
                    self.fs.mkdir(os.path.dirname(dest))
                    with open(dest, "wb") as out:
                        _copy_range(src, out, start, end - start)
                    splits.append(dict(file=path, start=start, length=end - start))
        return splits

    def _split_reducer_input(self, step_num):
        """Reduce splits of whole keys, as mrjob's, but as many as the work
        needs; a single split is the sorted file itself."""
        if not self._sized():
            return super()._split_reducer_input(step_num)
        path = self._sorted_reducer_input_path(step_num)
        nbytes = os.stat(path)[stat.ST_SIZE]
        n = task_count(nbytes, self._num_cores(), self._opts["split_bytes"],
                       self._given_tasks(step_num, "reduces"))
        if n == 1:
            dest = self._task_input_path("reducer", step_num, 0)
            self.fs.mkdir(os.path.dirname(dest))
            os.replace(path, dest)
            _symlink_or_copy(dest, path)  # where mrjob and its logs look for it
            return 1
        with open(path, "rb") as src:
            bounds = split_bounds(src, nbytes, n)
            for count, (start, end) in enumerate(zip(bounds, bounds[1:])):
                dest = self._task_input_path("reducer", step_num, count)
                self.fs.mkdir(os.path.dirname(dest))
                with open(dest, "wb") as out:
                    _copy_range(src, out, start, end - start)
        self._free(step_num, "reducer", "sorted-input")  # all in the splits now
        return len(bounds) - 1

    def _run_mappers_and_combiners(self, step_num, map_splits):
        step = self._get_step(step_num)
        if not self._sized() or "mapper" in step or "combiner" in step:
            super()._run_mappers_and_combiners(step_num, map_splits)
            if "mapper" in step:  # the mappers read their inputs (copies or links)
                self._free(step_num, "mapper", "input")
                self._free_step_output(step_num - 1)
            return
        for task_num, split in enumerate(map_splits):  # links, no process to start
            self._run_mapper_and_combiner_func(step_num, task_num, split)()

    #: {step: bytes of its sorted reducer input}: the bytes shuffled into
    #: each step that has reducers, kept when the file goes (read by the planner)
    shuffle_bytes = None
    #: the temp dir's largest size at the ends of the phases (map, sort,
    #: split, reduce), just before their inputs go: its peak, but for a
    #: ``sort``'s own temporary files (read by the planner)
    temp_peak_bytes = 0

    def _run_streaming_step(self, step, step_num):
        super()._run_streaming_step(step, step_num)
        path = os.environ.get(REPORT_ENV)
        if path:
            write_report(path, self._job_key, self.shuffle_bytes or {},
                         self.temp_peak_bytes)

    def _sort_reducer_input(self, step_num, num_map_tasks):
        super()._sort_reducer_input(step_num, num_map_tasks)
        if self.shuffle_bytes is None:
            self.shuffle_bytes = {}
        self.shuffle_bytes[step_num] = os.path.getsize(self._sorted_reducer_input_path(step_num))
        for task_type in ("mapper", "combiner"):  # all sorted into one file
            self._free(step_num, task_type, "input", "output")
        self._free_step_output(step_num - 1)

    def _run_reducers(self, step_num, num_reducer_tasks):
        super()._run_reducers(step_num, num_reducer_tasks)
        self._free(step_num, "reducer", "input", "sorted-input")

    # -- temporary disk (see the module) ----------------------------------------

    def _frees_early(self):
        return removes_local_tmp(self._opts)

    def _free(self, step_num, task_type, *names):
        """Remove the files ``names`` of each task of a kind in a step (and,
        for the name ``sorted-input``, the step's sorted reducer input); links
        are removed, never what they point to.  The temp dir's size is noted
        first (:attr:`temp_peak_bytes`)."""
        self.temp_peak_bytes = max(self.temp_peak_bytes,
                                   tree_size(self._get_local_tmp_dir()))
        if not self._frees_early():
            return
        base = Path(self._step_dir(step_num), task_type)
        tasks = [d for d in base.iterdir() if d.name.isdigit()] if base.is_dir() else []
        for name in names:  # (not a glob: it skips a link whose target went first)
            for path in [base / name] if name == "sorted-input" else [d / name for d in tasks]:
                _remove(path)

    def _free_step_output(self, step_num):
        """Remove an intermediate step's output (read by the step after it)
        when it lies in the job's temp dir."""
        if (step_num < 0 or step_num >= self._num_steps() - 1 or not self._frees_early()
                or self._opts.get("step_output_dir")):
            return
        for path in Path(self._output_dir_for_step(step_num)).glob("part-*"):
            _remove(path)

    # -- the task processes ---------------------------------------------------------

    def forked_cpu(self):
        """CPU seconds of this run's fork server and of the forked tasks that
        ended (this process's ``RUSAGE_CHILDREN`` holds them once the run
        ends): what a step's CPU adds between steps (:mod:`mrjobs.plan.realruns`)."""
        forker = self._task_processes().forker
        return forker.usage() if forker is not None else 0.0

    def _run(self):
        """mrjob's run, its tasks forked from a server that has done their
        imports (:mod:`mrjobs.runtime.taskfork`) where they can be (not
        through mrjob's setup wrapper: then no server is started)."""
        forker = None
        python, env = self._task_python_bin(), combine_local_envs(os.environ, self._cmdenv())
        self._create_setup_wrapper_scripts()  # (mrjob's run makes them once: made here first)
        if len(python) == 1 and enabled(env) and not self._setup_wrapper_script_path:
            try:
                forker = TaskForker(python[0], env, preload_modules(self._script_path))
            except OSError as e:
                log.debug("no task fork server (%s): each task a fresh interpreter", e)
        self._task_processes().forker = forker
        try:
            super()._run()
        finally:
            tasks = self._task_processes()
            tasks.forker = None
            if forker is not None:
                forker.close()
                log.debug("%d task(s) forked, %d fresh", tasks.forked, tasks.fresh)

    def _invoke_task_func(self, task_type, step_num, task_num):
        """Runs a task's process as mrjob's does, but as one of this run's
        :class:`TaskProcesses`, which the run can end."""
        task = dict(task_type=task_type, step_num=step_num, task_num=task_num,
                    num_steps=self._num_steps())
        return partial(self._task_processes().invoke, task,
                       self._substep_args(step_num, task_type))

    def _task_processes(self):
        if getattr(self, "_tasks", None) is None:
            self._tasks = TaskProcesses()
        return self._tasks

    def _run_multiple(self, funcs, num_processes=None):
        """Run the step's tasks, up to a core's worth at once: one runs here,
        more on threads of this process, each waiting for its task's process.

        Not mrjob's process pool: a signal to the process group (``timeout``,
        systemd, a container stop) ended its idle workers, one of them holding
        the pool's queue lock, and ``Pool.terminate()`` then waited for that
        lock forever.  On any error, Ctrl-C or signal here the tasks not yet
        started never start and the running ones are ended before it goes on."""
        funcs = list(funcs)
        if len(funcs) == 1:
            funcs[0]()
            return
        tasks = self._task_processes()
        pool = ThreadPoolExecutor(max_workers=self._num_cores(), thread_name_prefix="mrsparse-task")
        futures = [pool.submit(f) for f in funcs]
        try:
            for future in futures:
                future.result()
        except BaseException:
            for future in futures:
                future.cancel()
            tasks.stop(futures)
            raise
        finally:
            pool.shutdown(wait=True)


_JOBCONF = {"maps": ("mapreduce.job.maps", "mapred.map.tasks"),
            "reduces": ("mapreduce.job.reduces", "mapred.reduce.tasks")}


def split_bounds(f, nbytes, n):
    r"""Byte offsets ``[0, ..., nbytes]`` cutting a sorted file of lines into at
    most ``n`` parts of whole keys, the k-th cut at the first key change at or
    after ``k * nbytes / n``: only the lines near a cut are read (mrjob reads
    and copies every line in Python).

    >>> import io
    >>> data = b"a\t1\na\t2\nb\t3\nc\t4\nc\t5\n"
    >>> split_bounds(io.BytesIO(data), len(data), 2), split_bounds(io.BytesIO(data), len(data), 3)
    ([0, 12, 20], [0, 8, 20])
    >>> split_bounds(io.BytesIO(b"a\t1\na\t2\n"), 8, 2)
    [0, 8]
    """
    bounds = [0]
    for k in range(1, n):
        at = max(k * nbytes // n, bounds[-1] + 1)
        if at >= nbytes:
            break
        f.seek(_line_start(f, at - 1))
        key = _reducer_key(f.readline())
        cut = f.tell()
        for line in iter(f.readline, b""):
            if _reducer_key(line) != key:
                break
            cut = f.tell()
        if cut >= nbytes:
            break
        bounds.append(cut)
    bounds.append(nbytes)
    return bounds


def _line_start(f, pos, window=1 << 16):
    """Offset of the start of the line that holds byte ``pos``."""
    end = pos
    while end > 0:
        begin = max(0, end - window)
        f.seek(begin)
        newline = f.read(end - begin).rfind(b"\n")
        if newline >= 0:
            return begin + newline + 1
        end = begin
    return 0


def input_cuts(f, size, split_size):
    r"""Byte offsets ``[0, ..., size]`` of mrjob's map splits of an
    uncompressed file of ``size`` bytes: a split takes lines until it holds
    at least ``split_size`` bytes (one empty split for an empty file).

    >>> import io
    >>> input_cuts(io.BytesIO(b"aa\nb\ncc\nd"), 9, 3), input_cuts(io.BytesIO(b""), 0, 3)
    ([0, 3, 8, 9], [0, 0])
    """
    bounds = [0]
    while True:
        start = bounds[-1]
        end = size if start + split_size >= size else _line_end(f, start + split_size - 1, size)
        bounds.append(end)
        if end >= size:
            return bounds


def _line_end(f, pos, size, window=1 << 16):
    """Offset just past the first newline at or after byte ``pos`` (``size``
    if there is none)."""
    while pos < size:
        f.seek(pos)
        chunk = f.read(window)
        if not chunk:
            break
        newline = chunk.find(b"\n")
        if newline >= 0:
            return pos + newline + 1
        pos += len(chunk)
    return size


def _copy_range(src, out, start, length):
    """Copy ``length`` bytes of ``src`` from ``start`` into ``out`` (in the
    kernel where it can)."""
    done = 0
    try:
        while done < length:
            got = os.copy_file_range(src.fileno(), out.fileno(), length - done, start + done)
            if not got:
                break
            done += got
    except (AttributeError, OSError):
        pass
    if done < length:
        src.seek(start + done)
        remaining = length - done
        while remaining:
            chunk = src.read(min(remaining, 1 << 22))
            if not chunk:
                break
            out.write(chunk)
            remaining -= len(chunk)


def _remove(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _reducer_key(line):
    return line.split(b"\t", 1)[0]

