"""Shared helpers for the codec tests (mrjob's test_protocol style)."""
import uuid

import numpy as np
import pytest

import mrcodecs
from mrcodecs import DecodeError, EncodeError, SparseVector


def assert_round_trip_ok(protocol, key, value):
    line = protocol.write(key, value)
    assert isinstance(line, bytes)
    # key TAB value, or the value alone (a value protocol, key None)
    parts = line.split(b"\t", 1) if key is not None else [line]
    assert len(parts) == (1 if key is None else 2)
    for byte in b"\t\n\r":
        assert all(byte not in part for part in parts)
    # mrjob strips trailing CR/LF from every line before read(): must be a no-op
    assert line.rstrip(b"\r\n") == line
    k, v = protocol.read(line)
    assert k == key
    assert v == value
    return line


def assert_cant_encode(protocol, key, value, match):
    with pytest.raises(EncodeError, match=match):
        protocol.write(key, value)


def assert_cant_decode(protocol, line, match):
    with pytest.raises(DecodeError, match=match):
        protocol.read(line)


def random_vector(rng, n, dtype=np.float64):
    raw = rng.bytes(16 * n)
    ids = np.unique(np.frombuffer(raw, mrcodecs.ID_DTYPE))
    return SparseVector(ids, rng.standard_normal(ids.shape[0]).astype(dtype))


def random_uuid(rng):
    return uuid.UUID(bytes=rng.bytes(16))
