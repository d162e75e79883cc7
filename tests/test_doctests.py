"""The docstring examples of the packages run as doctests (numpydoc ``Examples``)."""
import doctest
import importlib
import pkgutil

import pytest

import mrcodecs
import mrjobs

# every module, those of subpackages (mrjobs.pairs.pruning, ...) included
MODULES = sorted(
    m.name
    for pkg in (mrcodecs, mrjobs)
    for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")
    if not m.name.endswith(".__main__")
) + ["bench.wire"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
