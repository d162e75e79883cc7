"""Which twin of mrcodecs runs this session: chosen once, in mrcodecs._impl.

``make test`` runs the codec and job tests twice, the second time with
``MRCODECS_PUREPYTHON=1`` (the pure-Python twin); tests/codecs/test_twins.py
compares the two twins side by side in every run.
"""
from mrcodecs import _impl


def pytest_report_header(config):
    return "mrcodecs twin: %s (%s)" % (_impl.NAME, _impl.REASON)
