"""Benchmarks of mrsparse: numbers that matter (bytes, speed) printed as a table,
written as JSON and drawn as a chart under ``bench/results/``.

Run one with ``python -m bench.<name>`` from the repository root
(``python -m bench.wire --help``).  Shared plumbing lives in :mod:`bench.common`.
"""
