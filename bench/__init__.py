"""Benchmarks of mrsparse (``python -m bench.<name> --help``): tables on stdout, JSON and
charts in ``bench/results/``; shared plumbing in :mod:`bench.common`."""
