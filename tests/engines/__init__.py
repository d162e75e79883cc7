"""Real engines for the tests: the Hadoop launcher, its jars and configuration,
and :mod:`tests.engines.support` (corpus, fixtures, runner helpers)."""
