"""The errors that end a run, each told to the user as one line."""
import errno
import tempfile

__all__ = ["JobError", "TaskFailed", "TASK_FAILED", "INPUT_FAILED", "os_error_text"]

#: how a task's own error line starts (found in its stderr by the launcher)
TASK_FAILED = "mrsparse: task failed: "
#: how it starts where a bad input line stopped the task (``--strict``): the
#: same words as the inline runner's launcher says it in
INPUT_FAILED = "mrsparse: error: "


class JobError(Exception):
    """A problem that stops a job, told to the user as one line."""


class TaskFailed(JobError):
    """A task's own one-line error, told as ``mrsparse: task failed: ...``."""


#: errors of a write that found no room
_NO_ROOM = {getattr(errno, n) for n in ("ENOSPC", "EDQUOT", "EFBIG") if hasattr(errno, n)}


def os_error_text(e, tmp_dir=None):
    """One line for an :class:`OSError`: what, on which file, and for a full
    disk where the job's temporary files are."""
    if not e.strerror:
        return str(e)
    text = e.strerror + (" (%s)" % e.filename if e.filename else "")
    if e.errno in _NO_ROOM:
        text += (": the job's temporary files are in %s; free space there, or point TMPDIR "
                 "(or --local-tmp-dir) at a larger disk" % (tmp_dir or tempfile.gettempdir()))
    return text
