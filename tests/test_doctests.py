"""The docstring examples of the packages run as doctests (numpydoc ``Examples``)."""
import doctest
import importlib
import pkgutil

import pytest

import mrcodecs
import mrjobs

MODULES = sorted(
    "%s.%s" % (pkg.__name__, m.name)
    for pkg in (mrcodecs, mrjobs)
    for m in pkgutil.iter_modules(pkg.__path__)
) + ["bench.wire"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
