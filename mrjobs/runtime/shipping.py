"""Shipping the pure-Python packages to the tasks.

Cluster tasks may have numpy and scipy but neither mrjob nor mrsparse.  mrjob
ships itself (``bootstrap_mrjob``); :meth:`mrjobs.job.SparseJob._runner_kwargs`
adds :func:`package_zip`, a zip of the packages ``mrcodecs`` and ``mrjobs``
built when the job is launched, to the runner's ``py_files``, which the bin
runners (local, hadoop, emr, dataproc) put on the tasks' ``PYTHONPATH`` and
the Spark runner passes to ``spark-submit --py-files``.  The optional C
extension ``_mrcodecs_speedups`` cannot be imported from a zip; without it
tasks use the pure-Python framing, which gives identical bytes.  The zip also carries
small stand-ins for ``distutils`` and ``pipes``, which mrjob 0.7.4 imports in
every task and which Python 3.12 and 3.13 no longer have.
"""
import atexit
import os
import shutil
import sys
import tempfile
import zipfile

import mrcodecs

__all__ = ["package_zip"]

_ZIP = {}


def package_files(pkg):
    """``[(path, name in the zip)]`` of the ``.py`` files of a package and its
    subpackages (folders with an ``__init__.py``), in a fixed order."""
    root = os.path.dirname(os.path.abspath(pkg.__file__))
    files = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if os.path.exists(os.path.join(folder, d, "__init__.py")))
        rel = os.path.relpath(folder, root)
        prefix = pkg.__name__ if rel == "." else "%s/%s" % (pkg.__name__, rel.replace(os.sep, "/"))
        files += [(os.path.join(folder, fn), "%s/%s" % (prefix, fn))
                  for fn in sorted(names) if fn.endswith(".py")]
    return files

#: task-side stand-ins for standard modules that mrjob imports (see package_zip)
SHIMS = ("pipes.py", "distutils/__init__.py", "distutils/version.py", "distutils/spawn.py")


def package_zip():
    """Path of a zip of ``mrcodecs`` and ``mrjobs``, subpackages included (built
    once per process)."""
    if "path" not in _ZIP:
        tmp = tempfile.mkdtemp(prefix="mrsparse-py-files-")
        atexit.register(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, "mrsparse.zip")
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            # mrjobs: the package of this module, initialised before it
            for pkg in (mrcodecs, sys.modules[__name__.split(".")[0]]):
                for source, name in package_files(pkg):
                    z.write(source, name)
            # mrjob 0.7.4 imports distutils (gone in Python 3.12) and pipes (gone
            # in 3.13) in every task: shims at the zip's root, each deferring to
            # the real module where the task's Python still has it
            shims = os.path.join(os.path.dirname(os.path.abspath(mrcodecs.__file__)), "_shims")
            for fn in SHIMS:
                z.write(os.path.join(shims, fn), fn)
        _ZIP["path"] = path
    return _ZIP["path"]
