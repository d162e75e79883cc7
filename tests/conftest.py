"""What every test session shares: the report header naming the mrcodecs twin
in use (chosen once, in mrcodecs._impl), and the rules of the markers.

``make test`` runs the codec and job tests twice, the second time with
``MRCODECS_PUREPYTHON=1`` (the pure-Python twin); tests/codecs/test_twins.py
compares the two twins side by side in every run.

Markers (setup.cfg): ``slow`` marks a test that takes seconds rather than
milliseconds (it runs jobs in real processes, many configurations, or big
inputs); ``python -m pytest -m "not slow"`` is the unit tests, under a
minute.  Every ``engines`` test is slow.  ``smoke`` marks the slow tests that
``make test`` runs besides the unit tests (one real run for each runner, engine
and input path, and each kind of failure a user meets); ``make test-all`` runs
every test.  A ``smoke`` test that is not ``slow`` is a marking mistake, refused
here.
"""
import pytest

from mrcodecs import _impl


def pytest_report_header(config):
    return "mrcodecs twin: %s (%s)" % (_impl.NAME, _impl.REASON)


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("engines") is not None:
            item.add_marker(pytest.mark.slow)
        elif (item.get_closest_marker("smoke") is not None
                and item.get_closest_marker("slow") is None):
            raise pytest.UsageError("%s is marked smoke but not slow" % item.nodeid)
