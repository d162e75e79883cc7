"""The Hadoop runner (``-r hadoop``) of the mrsparse jobs: mrjob's, whose
removal of Hadoop's working files after a failed or stopped run
(``--cleanup-on-failure HADOOP_TMP``, the jobs' default:
:func:`mrjobs.runtime.runnerargs.runner_kwargs`) says in one line where it
could not, instead of logging a traceback (a ``--hadoop-bin`` that does not
run failed the run before anything was written, and then its cleanup)."""
import logging

from mrjob.hadoop import HadoopJobRunner

__all__ = ["HadoopRunner"]

log = logging.getLogger(__name__)


class HadoopRunner(HadoopJobRunner):
    """mrjob's Hadoop runner; its working files are removed quietly."""

    def _cleanup_hadoop_tmp(self):
        path = self._hadoop_tmp_dir
        if not path:
            return
        try:
            if self.fs.exists(path):
                log.info("Removing Hadoop's temp directory %s...", path)
                self.fs.rm(path)
        except Exception as e:  # (what mrjob catches here, logged with its traceback)
            log.warning("could not remove Hadoop's temp directory %s (%s)", path,
                        str(e).splitlines()[0] if str(e) else type(e).__name__)
