"""``pipes`` for mrjob 0.7.4 in a task on Python 3.13+ (see README.md here).

The real module (standard library up to 3.12, or standard-pipes) takes this
one's place when it exists; else this provides ``quote``, all mrjob uses.
"""
import importlib.machinery
import importlib.util
import os
import sys


def _load_real(name, here):
    """Import ``name`` from sys.path without the entry ``here``; None if absent."""
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec(name, path)
    if spec is None:
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # the import of this shim returns the real module
    spec.loader.exec_module(module)
    return module


if _load_real(__name__, os.path.dirname(os.path.abspath(__file__))) is None:
    from shlex import quote  # noqa: F401 -- pipes.quote has been shlex.quote since 3.3

    __all__ = ["quote"]
