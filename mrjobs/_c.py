"""The one seam between mrjobs and its optional C kernels.

The extension module ``_mrjobs_speedups`` (``mrjobs/csrc/``, built by
``pip install`` when a compiler is there) holds the block pair's product and
top-k selection (used by :mod:`mrjobs.pairs.kernel`) and the JSON output's
neighbours (used by :mod:`mrjobs.jobprotocols`); without it, their numpy and Python
twins give the same results.  ``MRCODECS_PUREPYTHON``, which makes mrcodecs
use its pure-Python twin, turns these off too: one switch for all of
mrsparse's C code.
"""
import os

from mrcodecs._impl import purepython_forced

__all__ = ["C", "NAME", "REASON"]


def _load():
    if purepython_forced():
        return None, "numpy", "MRCODECS_PUREPYTHON is set"
    try:
        import _mrjobs_speedups as c
    except ImportError as e:  # no compiler at install time, or shipped in a zip
        return None, "numpy", "the C extension is not importable (%s)" % e
    return c, "c", "the C extension %s" % os.path.basename(c.__file__)


#: the C kernels, or None; NAME is "c" or "numpy", REASON says why
C, NAME, REASON = _load()
