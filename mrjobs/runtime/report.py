"""What a run tells at its end: a failed task's own line (mrjob's account of
it held back), the output in order on stdout, the cleanup to come."""
import glob
import logging
import os

from mrjobs.runtime.errors import TASK_FAILED

__all__ = ["FailureReport", "task_failure_line", "cat_output_in_order", "log_cleanup"]

log = logging.getLogger(__name__)


class FailureReport(logging.Filter):
    """Holds back mrjob's multi-line account of a failed task while a job runs
    (the task's own ``mrsparse: task failed:`` line says it in one); released
    when no such line is found."""

    def __init__(self):
        super().__init__()
        self.held = []
        self.handlers = []

    def filter(self, record):
        if ".mrsparse-incomplete-" in record.getMessage():
            return False  # where the committer's temporary output is: said after the commit
        if record.levelno >= logging.ERROR and record.name.startswith("mrjob"):
            self.held.append(record)
            return False
        return True

    def __enter__(self):
        self.handlers = list(logging.getLogger("mrjob").handlers)
        for h in self.handlers:
            h.addFilter(self)
        return self

    def __exit__(self, *exc):
        for h in self.handlers:
            h.removeFilter(self)
        return False

    def release(self):
        for record in self.held:
            logging.getLogger(record.name).handle(record)
        self.held = []


def task_failure_line(runner):
    """The first ``mrsparse: task failed:`` line in the stderr of the failed
    step's tasks (inline and local runners), or None."""
    step_dir = getattr(runner, "_step_dir", None)
    if step_dir is None:
        return None
    steps = sorted(glob.glob(os.path.join(runner._get_local_tmp_dir(), "step", "[0-9]*")))
    for path in sorted(glob.glob(os.path.join(steps[-1], "*", "*", "stderr"))) if steps else ():
        try:
            with open(path, "rb") as f:
                for line in f:
                    if line.startswith(TASK_FAILED.encode()):
                        return line[len(TASK_FAILED):].decode("utf-8", "replace").rstrip()
        except OSError:
            continue
    return None


def cat_output_in_order(runner):
    """The output's part files in name order (mrjob's ``cat_output`` takes them
    in the order the filesystem lists them), skipping names that start with
    ``_`` or ``.`` as Hadoop does.  The reducers of the inline and local
    runners take consecutive ranges of keys: the output is then sorted by key."""
    out = runner.get_output_dir()
    names = sorted(p for p in runner.fs.ls(out)
                   if not any(n.startswith(("_", ".")) for n in p[len(out):].split("/")))
    for i, path in enumerate(names):
        if i:
            yield b""  # the end of the previous file, as in cat_output
        yield from runner.fs.cat(path)


def log_cleanup(runner):
    """Say what the coming cleanup removes (it can take a while)."""
    tmp = getattr(runner, "_local_tmp_dir", None)
    if not tmp or not os.path.isdir(tmp):
        return
    size = 0
    for root, _, files in os.walk(tmp):
        for f in files:
            try:
                size += os.path.getsize(os.path.join(root, f))
            except OSError:
                pass
    if size > 64 * 2**20:
        log.info("removing %.0f MB of temporary files in %s", size / 2**20, tmp)
