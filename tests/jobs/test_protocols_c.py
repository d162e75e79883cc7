"""The JSON output's neighbours written in C (``_mrjobs_speedups``) and in
Python (:class:`mrjobs.jobprotocols.NeighboursJSONProtocol`): the same bytes, which
are the bytes ``json.dumps`` writes."""
import json
import uuid

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mrjobs.jobprotocols
from mrcodecs.jobwire import Stripe
from mrjobs.jobprotocols import NeighboursJSONProtocol

pytestmark = pytest.mark.asan

c = pytest.importorskip("_mrjobs_speedups", reason="the C kernels are not built")


def _both(ids, scores, monkeypatch, key=uuid.UUID(int=7).bytes):
    stripe = Stripe(np.array(ids, "S16"), np.array(scores, np.float64))
    monkeypatch.setattr(mrjobs.jobprotocols._c, "C", c)
    fast = NeighboursJSONProtocol().write(key, stripe)
    monkeypatch.setattr(mrjobs.jobprotocols._c, "C", None)
    slow = NeighboursJSONProtocol().write(key, stripe)
    return fast, slow


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.binary(min_size=16, max_size=16),
                          st.floats(allow_nan=True, allow_infinity=True)), max_size=40),
       st.binary(min_size=16, max_size=16))
def test_c_and_python_write_the_same_bytes(entries, key):
    # (the C path writes the whole line, the key's UUID too, in one buffer)
    with pytest.MonkeyPatch.context() as mp:
        ids = [i for i, _ in entries]
        scores = [s for _, s in entries]
        if all(np.isfinite(scores)) and len(set(ids)) == len(ids):
            fast, slow = _both(ids, scores, mp, key)
            assert fast == slow
            head, body = fast.split(b"\t", 1)
            assert json.loads(head) == str(uuid.UUID(bytes=key))
            assert json.loads(body) == {str(uuid.UUID(bytes=i)): s for i, s in entries}
        else:  # what json.dumps of a dict does: the last score of an id, NaN refused
            last = dict(zip(ids, scores))
            if all(np.isfinite(list(last.values()))):
                fast, slow = _both(ids, scores, mp)
                assert fast == slow
                assert json.loads(fast.split(b"\t", 1)[1]) == {
                    str(uuid.UUID(bytes=i)): s for i, s in last.items()}
            else:
                with pytest.raises(ValueError):
                    _both(ids, scores, mp)


def test_c_leaves_repeats_and_non_finite_scores_to_the_caller():
    ids = np.array([uuid.UUID(int=1).bytes, uuid.UUID(int=2).bytes], "S16")
    assert c.neighbours_json(ids, np.array([1.0, np.inf])) is None
    assert c.neighbours_json(ids[[0, 0]], np.array([1.0, 2.0])) is None
    assert c.neighbours_json(ids, np.array([1.0, 2.0])) == (
        b'"00000000-0000-0000-0000-000000000001": 1.0, '
        b'"00000000-0000-0000-0000-000000000002": 2.0')
    assert c.neighbours_json(ids[:0], np.empty(0)) == b""
    assert c.neighbours_json(ids[:1], np.array([0.5]), uuid.UUID(int=255).bytes) == (
        b'"00000000-0000-0000-0000-0000000000ff"\t'
        b'{"00000000-0000-0000-0000-000000000001": 0.5}')
    assert c.neighbours_json(ids[:0], np.empty(0), bytes(16)) == (
        b'"00000000-0000-0000-0000-000000000000"\t{}')
    assert c.neighbours_json(ids[[0, 0]], np.array([1.0, 2.0]), bytes(16)) is None
    with pytest.raises(ValueError, match="16 id bytes a score"):
        c.neighbours_json(ids, np.array([1.0]))
    with pytest.raises(ValueError, match="a key of 16 bytes"):
        c.neighbours_json(ids, np.array([1.0, 2.0]), bytes(15))


def test_strided_stripes_are_written_as_the_python_twin_writes_them(monkeypatch):
    ids = np.array([uuid.UUID(int=i).bytes for i in range(1, 7)], "S16")
    stripe = Stripe(ids[::2], (np.arange(6.0) / 7)[::2])  # views with a stride
    assert not stripe.ids.flags.c_contiguous
    key = uuid.UUID(int=7).bytes
    monkeypatch.setattr(mrjobs.jobprotocols._c, "C", c)
    fast = NeighboursJSONProtocol().write(key, stripe)
    monkeypatch.setattr(mrjobs.jobprotocols._c, "C", None)
    assert fast == NeighboursJSONProtocol().write(key, stripe) and fast.count(b": ") == 3


def test_keys_of_other_kinds_are_written_or_refused_as_the_python_twin_does(monkeypatch):
    # a key of a subclass of bytes, and one of 15 bytes: as uuid.UUID(bytes=key)
    # takes or refuses it
    stripe = Stripe(np.array([uuid.UUID(int=1).bytes], "S16"), np.array([0.25]))
    key = np.bytes_(uuid.UUID(int=9).bytes)
    monkeypatch.setattr(mrjobs.jobprotocols._c, "C", c)
    fast = NeighboursJSONProtocol().write(key, stripe)
    monkeypatch.setattr(mrjobs.jobprotocols._c, "C", None)
    assert fast == NeighboursJSONProtocol().write(key, stripe)
    assert fast.startswith(b'"00000000-0000-0000-0000-000000000009"\t{')
    for module in (c, None):
        monkeypatch.setattr(mrjobs.jobprotocols._c, "C", module)
        with pytest.raises(ValueError):
            NeighboursJSONProtocol().write(bytes(15), stripe)


def _doubles(rng, n):
    """Doubles of every kind: random bits (every exponent, subnormals), scores
    in [-1, 1], integers, short decimals, decimals of each length of 1 to 17
    digits, powers of 2 and 10 and their neighbours (where shortest digits
    and their rounding are hardest)."""
    pow10 = 10.0 ** np.arange(-323, 309)
    lengths = [rng.integers(10 ** (d - 1), 10 ** d, n // 20) / 10.0 ** rng.integers(0, 25, n // 20)
               for d in range(1, 18)]
    pow2 = np.ldexp(1.0, np.arange(-1074, 1024))
    parts = [rng.integers(0, 2**64, n, dtype=np.uint64).view(np.float64),
             rng.integers(0, 2**52, n // 4, dtype=np.uint64).view(np.float64),
             rng.random(n) * 2 - 1, rng.integers(-2**53, 2**53, n).astype(np.float64),
             rng.integers(0, 10**6, n) / 10.0 ** rng.integers(0, 20, n),
             pow10, np.nextafter(pow10, np.inf), np.nextafter(pow10, 0), pow2,
             np.nextafter(pow2, np.inf), np.nextafter(pow2, 0), *lengths,
             np.array([0.0, -0.0, 1e16, 9999999999999998.0, 1e-4, 0.00011, 1e-5, 5e-324,
                       np.finfo(np.float64).max, 0.1, 1 / 3, 2 / 3])]
    a = np.concatenate(parts)
    return a[np.isfinite(a)]


@pytest.mark.slow
def test_scores_are_written_as_repr_writes_them():
    # the C writer's own shortest digits (Ryu) against CPython's repr (dtoa)
    a = _doubles(np.random.default_rng(2026), 200_000)
    got = c.repr_floats(a)
    want = [repr(x) for x in a.tolist()]
    assert [(x, g) for x, g, w in zip(a.tolist(), got, want) if g != w] == []
    with pytest.raises(ValueError, match="not finite"):
        c.repr_floats(np.array([1.0, np.nan]))
