"""mrjobs: the mrsparse jobs (inverted index, all-pairs sparse dot products and
similarities) for mrjob, on the wire format of :mod:`mrcodecs`.

mrjob 0.7.4, its last release, imports ``pipes`` and ``distutils``, which
Python 3.11 deprecates; the import below takes their DeprecationWarnings once,
quietly, so that a user's own test run (pytest turns warnings on) does not
show them for code that is not theirs.  Run as a program (``python -m
mrjobs.<job>``, the launcher), it takes the standard library's ``distutils``
where there is one (up to Python 3.11), not setuptools' copy, which the
``distutils-precedence.pth`` hook of setuptools would otherwise load with
all of setuptools and pkg_resources (about half a CPU second) for mrjob's two
names; the tasks do the same through ``SETUPTOOLS_USE_DISTUTILS=stdlib``.
"""
import importlib
import sys
import warnings


def _import_mrjob_basics():
    hooks = []
    if sys.argv[:1] == ["-m"] and sys.version_info < (3, 12):
        hooks = [(i, f) for i, f in enumerate(sys.meta_path)
                 if type(f).__name__ == "DistutilsMetaFinder"]
    for _, finder in reversed(hooks):
        sys.meta_path.remove(finder)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            importlib.import_module("mrjob.util")  # imports pipes and distutils.spawn
            importlib.import_module("mrjob.compat")  # imports distutils.version
    finally:
        for i, finder in hooks:
            sys.meta_path.insert(i, finder)


_import_mrjob_basics()


def __getattr__(name):
    """``mrjobs.neighbours`` (:func:`mrjobs.api.matrices.neighbours`), imported when first
    used: a task importing the jobs does not import the API."""
    if name == "neighbours":
        from mrjobs.api import neighbours
        return neighbours
    raise AttributeError("module 'mrjobs' has no attribute %r" % name)
