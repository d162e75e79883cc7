"""The README's Python examples run as doctests, so they cannot go stale."""
import doctest
import os

README = os.path.join(os.path.dirname(__file__), "..", "README.md")


def test_readme_examples():
    failures, tried = doctest.testfile(README, module_relative=False, optionflags=doctest.ELLIPSIS)
    assert tried > 0
    assert failures == 0
