import pytest

from mrcodecs import framing, records, vector


@pytest.fixture(params=["c", "python"])
def framing_impl(request, monkeypatch):
    """Run a test with the C twin of the framing and with the pure-Python twin."""
    if request.param == "c":
        if not framing.SPEEDUPS:
            pytest.skip("_mrcodecs_speedups is not built")
    else:
        monkeypatch.setattr(records, "escape", framing.py_escape)
        monkeypatch.setattr(records, "escape_line", framing.py_escape_line)
        monkeypatch.setattr(framing, "_unescape_or_offset", framing._py_unescape_or_offset)
        monkeypatch.setattr(records, "uuid_from_bytes", vector.__dict__["_py_uuid_from_bytes"])
        monkeypatch.setattr(records, "_fast_line", lambda key, vector, allow_nonfinite: None)
        monkeypatch.setattr(records, "_fast_decode", lambda data: None)
    return request.param
