"""A run's job key, claimed before it is used.

mrjob names a run after its *job key*, ``label.owner.YYYYmmdd.HHMMSS.micro``
(the script's name, the user, the time to the microsecond): the local
temporary directory ``<local_tmp_dir>/<job key>``, the attempt ids of the
inline and local runners, Hadoop's temporary paths.  Nothing makes the key
unique but the clock, and mrjob removes a temporary directory that is already
there under that name before it makes its own
(``MRJobRunner._get_local_tmp_dir``).  Two runs started together -- a shell
loop with ``&``, ``xargs -P``, two tests side by side -- pass the same
imports in step and can read the same microsecond: then the second deleted
the first's temporary files under it, or failed with "File exists".

:func:`claimed_key` gives a runner class whose key is claimed as it is made:
the key's local temporary directory is created with one ``mkdir`` (atomic:
of any number of runs, one gets a name), and a run that finds its name taken
takes the next microsecond's key.  The key keeps mrjob's form; the directory
is the one mrjob would have made, and goes at the runner's cleanup as before,
with the one file mrjob leaves behind under the key: its setup wrapper's
lock, ``/tmp/wrapper.lock.<job key>``, which every task of a run that ships
files or has ``--setup`` commands makes and no one removed.
"""
import functools
import logging
import os
import tempfile

__all__ = ["claimed_key"]

#: mrjob's runner log, which says where the temporary directory is (with -v)
log = logging.getLogger("mrjob.runner")


class _ClaimedKey:
    """Mixed in before a mrjob runner class (see the module)."""

    def _make_unique_job_key(self, label=None, owner=None):
        root = self._opts.get("local_tmp_dir") or tempfile.gettempdir()
        os.makedirs(root, exist_ok=True)
        while True:
            key = super()._make_unique_job_key(label, owner)
            path = os.path.join(root, key)
            try:
                os.mkdir(path)
            except FileExistsError:  # another run's, this microsecond: the next
                continue
            log.info("Creating temp directory %s", path)
            self._local_tmp_dir = path  # mrjob's _get_local_tmp_dir returns it as it is
            return key

    def _cleanup_local_tmp(self):
        super()._cleanup_local_tmp()
        try:  # (the path mrjob.bin writes into its setup wrapper)
            os.remove("/tmp/wrapper.lock.%s" % self._job_key)
        except OSError:  # none: no task ran here, or no wrapper
            pass


@functools.cache
def claimed_key(runner_cls):
    """``runner_cls`` (a mrjob runner class) with its job key claimed: a
    subclass of the same name and alias."""
    if issubclass(runner_cls, _ClaimedKey):
        return runner_cls
    return type(runner_cls.__name__, (_ClaimedKey, runner_cls),
                {"__module__": runner_cls.__module__, "__doc__": runner_cls.__doc__})
