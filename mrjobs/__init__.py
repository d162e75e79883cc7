"""mrjobs: the mrsparse jobs (inverted index, all-pairs sparse dot products and
similarities) for mrjob, on the wire format of :mod:`mrcodecs`.

mrjob 0.7.4, its last release, imports ``pipes`` and ``distutils``, which
Python 3.11 deprecates; the import below takes their DeprecationWarnings once,
quietly, so that a user's own test run (pytest turns warnings on) does not
show them for code that is not theirs.
"""
import importlib
import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    importlib.import_module("mrjob.util")  # imports pipes and distutils.spawn
    importlib.import_module("mrjob.compat")  # imports distutils.version
