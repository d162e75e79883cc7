"""What the runner of a job is made with: the package zip for fresh task
processes, the task environment, the committer's temporary output, and where
the task Python already has our very files, nothing shipped."""
import os
import shlex
import sys

from mrjobs.runtime.commit import FsOutputCommitter, OutputCommitter
from mrjobs.runtime.shipping import package_zip
from mrjobs.runtime.tasks import probe_task_python

__all__ = ["runner_class", "runner_kwargs", "probe", "task_python", "TASK_ENV", "LAUNCH_DIR", "OWN_MODULES",
           "MRJOB_IMPORTS"]

#: Environment of every task process (a user's --cmdenv wins).  mrjob imports
#: ``distutils`` in every task; setuptools' distutils hook (on by default
#: where setuptools is installed) answers that import by loading setuptools
#: and pkg_resources, about half a CPU second a task.  Off, the standard
#: library's distutils (up to Python 3.11) or the shim in the package zip
#: (3.12 and later) serves mrjob's two names.  A task is one process a core
#: (the runner runs as many side by side as there are cores), and none calls
#: BLAS: numpy's OpenBLAS would start a thread a core in each, at its import,
#: whose spinning takes CPU from the task beside it (about 0.08 CPU s an
#: empty task) -- one thread, as for OpenMP and MKL.
TASK_ENV = {"SETUPTOOLS_USE_DISTUTILS": "stdlib", "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

#: environment of the inline and local runners' tasks: the launcher's directory
LAUNCH_DIR = "MRSPARSE_LAUNCH_DIR"

#: what a task imports besides :meth:`SparseJob.task_modules`: our packages,
#: and the modules mrjob imports in every task that the package zip also
#: carries stand-ins for (:mod:`mrjobs.runtime.shipping`)
OWN_MODULES = ("mrjob", "mrjobs", "mrcodecs")
MRJOB_IMPORTS = ("pipes", "distutils.spawn", "distutils.version")


def runner_class(alias):
    """mrsparse's own runner for ``-r alias`` (:mod:`mrjobs.runtime.inlinerunner`,
    :mod:`mrjobs.runtime.localrunner`, :mod:`mrjobs.runtime.sparkrunner`,
    :mod:`mrjobs.runtime.hadooprunner`), or
    None where mrjob's is used."""
    if alias in (None, "inline"):  # (None: mrjob's default, inline)
        from mrjobs.runtime.inlinerunner import InlineRunner
        return InlineRunner
    if alias == "local":
        from mrjobs.runtime.localrunner import LocalRunner
        return LocalRunner
    if alias == "spark":
        from mrjobs.runtime.sparkrunner import SparkRunner
        return SparkRunner
    if alias == "hadoop":
        from mrjobs.runtime.hadooprunner import HadoopRunner
        return HadoopRunner
    return None


def runner_kwargs(job, kwargs, alias, launcher=None):
    """mrjob's runner arguments ``kwargs`` of ``job`` for the runner ``alias``,
    with what our runs add (``launcher``: the :class:`~mrjobs.runtime.launch.Launch`
    under way, whose committer and task guard the runner writes to)."""
    if alias != "inline":
        # the inline runner imports the job in-process and only warns
        # about py_files; every other runner starts fresh task processes
        kwargs["py_files"] = list(kwargs.get("py_files") or []) + [package_zip()]
        kwargs["cmdenv"] = dict(TASK_ENV, **(kwargs.get("cmdenv") or {}))
    if (alias == "spark" and not kwargs.get("python_bin")
            and (kwargs.get("spark_master") or "local").startswith("local")):
        # a local Spark master runs the tasks on this machine: with the
        # launching interpreter, which has numpy and scipy
        kwargs["python_bin"] = [sys.executable]
    committer = launcher.committer if launcher else None
    if launcher and job.second_run():
        # a first run's output goes to the runner's temporary place: the
        # second run reads it and writes the output (mrjobs.runtime.launch)
        committer, kwargs["output_dir"] = None, None
    if committer:  # the output is moved into place when the job succeeds
        local = isinstance(committer, OutputCommitter) and not isinstance(
            committer, FsOutputCommitter)
        kwargs["output_dir"] = ("file://" + committer.tmp if local and alias not in
                                ("inline", "local") else committer.tmp)
    guard = launcher.guard if launcher else None
    if guard and guard.env:
        kwargs["cmdenv"] = dict(kwargs.get("cmdenv") or {}, **guard.env)
    if alias in ("inline", "local"):
        # where relative input paths start from (for a --strict line number)
        kwargs["cmdenv"] = dict(kwargs.get("cmdenv") or {}, **{LAUNCH_DIR: os.getcwd()})
    if not kwargs.get("cleanup_on_failure"):
        # mrjob keeps a failed or stopped run's temporary files for its logs;
        # ours gives the task's error as it fails, and leaves nothing behind:
        # not its local temporary files (nor the setup wrapper's lock in
        # /tmp), not Hadoop's working files (a cluster's logs are YARN's)
        kwargs["cleanup_on_failure"] = ["LOCAL_TMP"] + (["HADOOP_TMP"] if alias == "hadoop"
                                                        else [])
    if alias == "local":
        if kwargs.get("split_bytes") is None:
            kwargs["split_bytes"] = job.split_bytes()
        ship_only_what_tasks_lack(job, kwargs)
    return kwargs


def ship_only_what_tasks_lack(job, kwargs):
    """Where the task Python finds the very mrjob, mrjobs and mrcodecs
    files this launcher runs (and the modules mrjob imports), the tasks
    import those: the zips, and the setup script that puts them on the
    tasks' path, would only add a shell, a Python start and the
    compilation of every module from the zip to each task."""
    found, missing = probe(job, task_python(kwargs), kwargs.get("cmdenv"))
    if isinstance(missing, str) or any(m in missing for m in OWN_MODULES + MRJOB_IMPORTS):
        return
    mine = {m: os.path.realpath(sys.modules[m].__file__) for m in OWN_MODULES}
    if any(found.get(m) != path for m, path in mine.items()):
        return
    if kwargs.get("bootstrap_mrjob") is None:
        kwargs["bootstrap_mrjob"] = False
    if not kwargs["bootstrap_mrjob"]:
        zip_path = package_zip()
        kwargs["py_files"] = [f for f in kwargs.get("py_files") or [] if f != zip_path]


def probe(job, python, cmdenv):
    """:func:`~mrjobs.runtime.tasks.probe_task_python` for the task modules, ours
    and mrjob's imports, in the tasks' environment, once per interpreter."""
    cache = job.task_python_probes
    key = tuple(python)
    if key not in cache:
        modules = tuple(dict.fromkeys(tuple(job.task_modules()) + OWN_MODULES
                                      + MRJOB_IMPORTS))
        cache[key] = probe_task_python(python, modules, dict(os.environ, **(cmdenv or {})))
    return cache[key]


def task_python(kwargs):
    """The task Python a local runner made with ``kwargs`` runs (a command list)."""
    python = kwargs.get("task_python_bin") or kwargs.get("python_bin") or [sys.executable]
    return shlex.split(python) if isinstance(python, str) else list(python)
