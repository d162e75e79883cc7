"""``distutils`` for mrjob 0.7.4 in a task on Python 3.12+ (see ../README.md).

The real package (standard library up to 3.11) takes this one's place when
it exists (setuptools, when installed, serves ``distutils`` before this is
ever found); else the submodules here provide ``version.LooseVersion`` and
``spawn.find_executable``, all mrjob uses.
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
    sys.modules[name] = module  # the import of this shim returns the real package
    spec.loader.exec_module(module)
    return module


_load_real(__name__, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
