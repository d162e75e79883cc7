"""The Spark runner (``-r spark``) of the mrsparse jobs: mrjob's, which also
removes its local Spark temp directory.

With a local master (``local[N]``, ``local-cluster``) and no
``--spark-tmp-dir``, mrjob's Spark runner keeps each step's output and
counters in ``<temp dir>/<job key>-spark``, beside its own temp directory,
and never removes it: every run leaves one behind, as large as the job's
last step output.  :class:`SparkRunner` removes it with the other local
temporary files, under the same cleanup modes (``ALL``, ``TMP``,
``LOCAL_TMP``; ``--cleanup NONE`` keeps it).  A temp dir on a cluster's
filesystem (a URI) is left to mrjob.

mrjob creates that local directory only where it puts the output there: a run
with ``--output-dir`` failed in its first step (mrjob's Spark harness makes
its counters' directory inside it with ``os.mkdir``).  :class:`SparkRunner`
creates it before the steps.
"""
import logging
import os
import shutil

from mrjob.parse import is_uri
from mrjob.spark.runner import SparkMRJobRunner

__all__ = ["SparkRunner"]

log = logging.getLogger(__name__)


class SparkRunner(SparkMRJobRunner):
    """mrjob's Spark runner; its local ``-spark`` temp directory is removed
    with its other local temp files."""

    def _run(self):
        path = self._spark_tmp_dir
        if not is_uri(path):
            os.makedirs(path, exist_ok=True)
        super()._run()

    def _cleanup_local_tmp(self):
        super()._cleanup_local_tmp()
        path = getattr(self, "_spark_tmp_dir", None)
        if path and not is_uri(path) and os.path.isdir(path):
            log.debug("Removing Spark temp directory %s...", path)
            shutil.rmtree(path, ignore_errors=True)
