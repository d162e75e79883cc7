"""``distutils.spawn.find_executable``, as in the standard library of Python 3.11."""
import os
import sys

__all__ = ["find_executable"]


def find_executable(executable, path=None):
    """The path of ``executable`` in the directories of ``path`` (default
    $PATH), or None.  A file that exists counts; it need not be executable."""
    _, ext = os.path.splitext(executable)
    if sys.platform == "win32" and ext != ".exe":
        executable = executable + ".exe"
    if os.path.isfile(executable):
        return executable
    if path is None:
        path = os.environ.get("PATH", None)
        if path is None:
            try:
                path = os.confstr("CS_PATH")
            except (AttributeError, ValueError):
                path = os.defpath
    if not path:
        return None
    for p in path.split(os.pathsep):
        f = os.path.join(p, executable)
        if os.path.isfile(f):
            return f
    return None
