"""The inline runner (``-r inline``, the default) of the mrsparse jobs:
mrjob's, reading the input files Hadoop would read
(:class:`mrjobs.runtime.paths.HadoopInputs`)."""
import sys

from mrjob.inline import InlineMRJobRunner

from mrjobs.runtime.paths import HadoopInputs

__all__ = ["InlineRunner"]


class InlineRunner(HadoopInputs, InlineMRJobRunner):
    """mrjob's inline runner; an input directory's hidden files are skipped,
    and a failed step is told as on the local runner: by the launcher's one
    line alone."""

    alias = "inline"

    def _log_counters(self, step_num):
        """The counters of a step, as mrjob logs them -- not those of a step
        that failed (mrjob logs them while the error goes up; the local
        runner, which reads them from the finished tasks, does not)."""
        if sys.exc_info()[1] is None:
            super()._log_counters(step_num)

    def _log_cause_of_error(self, ex):
        """Nothing: mrjob's "Error while reading from <a task's split of the
        input>", with blank lines, came before the launcher's own line,
        which names the input file and line."""
