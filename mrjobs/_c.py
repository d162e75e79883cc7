"""The one seam between mrjobs and its optional C kernels.

The extension module ``_mrjobs_speedups`` (``mrjobs/csrc/``, built by
``pip install`` when a compiler is there) holds the block pair's product and
top-k selection (used by :mod:`mrjobs.pairs.kernel`), the rows step's merge
(:mod:`mrjobs.scoring`), the JSON and compact input's fast paths (:mod:`mrjobs.parsing`)
and the JSON output's neighbours (:mod:`mrjobs.jobprotocols`); without it,
their numpy and Python twins give the same results.  It is loaded as
mrcodecs loads its own (:func:`mrcodecs._impl.load_extension`):
``MRCODECS_PUREPYTHON``, which makes mrcodecs use its pure-Python twin,
turns these off too -- one switch for all of mrsparse's C code -- and an
extension built from older sources, without one of :data:`FUNCTIONS`, is
not used.
"""
from mrcodecs._impl import load_extension

__all__ = ["C", "FUNCTIONS", "NAME", "REASON"]

#: what the jobs call of the extension
FUNCTIONS = ("pair_topk", "dots", "kept_offer", "kept_take", "top_k_rows", "merge_top_k",
             "neighbours_json", "parse_json_line", "parse_json_sorted", "parse_compact_sorted")

#: the C kernels, or None; NAME is "c" or "numpy", REASON says why
C, REASON = load_extension("_mrjobs_speedups", FUNCTIONS)
NAME = "numpy" if C is None else "c"
