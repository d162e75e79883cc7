"""The dot products job's strategies by their ``--strategy`` name: each a
:class:`~mrjobs.strategies.contract.Strategy` built on the job's
:class:`~mrjobs.strategies.contract.Context`."""
from mrjobs.strategies.blocks import BlocksStrategy
from mrjobs.strategies.prefix import PrefixStrategy
from mrjobs.strategies.stripes import StripesStrategy

__all__ = ["STRATEGIES"]

STRATEGIES = {"blocks": BlocksStrategy, "prefix": PrefixStrategy, "stripes": StripesStrategy}
