"""Shipping the pure-Python packages to the tasks.

Cluster tasks may have numpy and scipy but neither mrjob nor mrsparse.  mrjob
ships itself (``bootstrap_mrjob``); :meth:`mrjobs.base.SparseJob._runner_kwargs`
adds :func:`package_zip`, a zip of the packages ``mrcodecs`` and ``mrjobs``
built when the job is launched, to the runner's ``py_files``, which the bin
runners (local, hadoop, emr, dataproc) put on the tasks' ``PYTHONPATH`` and
the Spark runner passes to ``spark-submit --py-files``.  The optional C
extension ``_mrcodecs_speedups`` cannot be imported from a zip; without it
tasks use the pure-Python framing, which gives identical bytes.
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


def package_zip():
    """Path of a zip of ``mrcodecs`` and ``mrjobs`` (built once per process)."""
    if "path" not in _ZIP:
        tmp = tempfile.mkdtemp(prefix="mrsparse-py-files-")
        atexit.register(shutil.rmtree, tmp, True)
        path = os.path.join(tmp, "mrsparse.zip")
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            for pkg in (mrcodecs, sys.modules[__package__]):
                root = os.path.dirname(os.path.abspath(pkg.__file__))
                name = pkg.__name__
                for fn in sorted(os.listdir(root)):
                    if fn.endswith(".py"):
                        z.write(os.path.join(root, fn), "%s/%s" % (name, fn))
        _ZIP["path"] = path
    return _ZIP["path"]
