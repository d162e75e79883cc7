"""The block record (codecs/SPEC.md 3.4): stored vectors, round trips on both
framing twins, and every decoding error it promises."""
import itertools
import json
import os
import struct

import numpy as np
import pytest

from mrcodecs import DecodeError, EncodeError, escape
from mrcodecs import unescape as mrcodecs_unescape
from mrcodecs.jobwire import (Block, JobProtocol, Stripe, block_pair_key, block_pair_of,
                              decode_block, decode_record, encode_block)
from mrcodecs.block_record import decode_places, encode_places
from mrjobs.jobprotocols import JSONStripeProtocol
from tests.codec_helpers import assert_round_trip_ok

pytestmark = pytest.mark.twin

VECTORS = os.path.join(os.path.dirname(__file__), "..", "..", "codecs", "vectors")


def _manifest():
    with open(os.path.join(VECTORS, "manifest.json")) as f:
        return json.load(f)


def _block_of(case):
    vectors = case["vectors"]
    feats = [f for _, e in vectors for f, _ in e]
    return Block(
        np.array([bytes.fromhex(v) for v, _ in vectors], "S16").reshape(-1),
        np.array([len(e) for _, e in vectors], np.uint32),
        np.array(feats, np.uint32) if case.get("indexed") else
        np.array([bytes.fromhex(f) for f in feats], "S16").reshape(-1),
        np.array([float.fromhex(w) for _, e in vectors for _, w in e], case["dtype"]),
        None if case["stats"] is None else np.array([float.fromhex(s) for s in case["stats"]]),
        case["side"])


@pytest.mark.parametrize("case", _manifest()["blocks"], ids=lambda c: c["name"])
def test_stored_block_vectors_decode_and_encode_byte_exact(case):
    with open(os.path.join(VECTORS, case["name"] + ".line"), "rb") as f:
        line = f.read()
    block = _block_of(case)
    key, value = JobProtocol().read(line)
    assert block_pair_of(key) == tuple(case["pair"])
    assert value == block
    assert JobProtocol().write(key, block) == line


def random_block(rng, n, dtype=np.float64, stats=True, side=0, indexed=False):
    lengths = rng.integers(0, 6, n).astype(np.uint32)
    m = int(lengths.sum())
    ids = np.frombuffer(rng.bytes(16 * n), "S16")
    feats = (rng.integers(0, 2**32, m, dtype=np.uint32) if indexed
             else np.frombuffer(rng.bytes(16 * m), "S16"))
    # ascending within each vector, as the layout requires
    feats = feats[np.lexsort((feats, np.repeat(np.arange(n), lengths)))]
    w = rng.standard_normal(m).astype(dtype)
    return Block(ids, lengths, feats, w, rng.random(n) if stats else None, side)


@pytest.mark.parametrize("n", [0, 1, 2, 17, 300])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_round_trip(n, dtype):
    rng = np.random.default_rng(n)
    for stats, side, indexed in itertools.product((True, False), (0, 1), (False, True)):
            b = random_block(rng, n, dtype, stats, side, indexed)
            data = encode_block(b)
            assert b"\t" not in data and b"\n" not in data and b"\r" not in data
            assert decode_block(data) == b
            assert decode_record(data) == b
            assert_round_trip_ok(JobProtocol(), block_pair_key(3, 7), b)
            # an indexed block: a varint of 1-5 bytes a feature id, after their
            # byte count, not 16 bytes
            places = len(encode_places(b.features, b.lengths)) + 4 if indexed else 16 * b.nnz
            assert len(mrcodecs_unescape(data)) == 10 + n * (20 + 8 * stats) + places + (
                b.nnz * np.dtype(dtype).itemsize)
            assert not indexed or places <= 4 + 5 * b.nnz


def test_a_vectors_places_travel_as_their_differences():
    # places 0..2**32-1 at the edges of each varint size; differences below 128
    # take one byte
    edges = [0, 1, 127, 128, 2**14 - 1, 2**14, 2**21, 2**28 - 1, 2**28, 2**32 - 1]
    places = np.array(edges, np.uint32)
    for lengths in ([10], [1] * 10, [3, 0, 7]):
        lengths = np.array(lengths, np.uint32)
        data = encode_places(places, lengths)
        got = decode_places(np.frombuffer(data, np.uint8), lengths, 0, "places")
        assert got.dtype == np.uint32 and got.tolist() == edges
    dense = np.arange(1000, 1100, dtype=np.uint32)
    assert len(encode_places(dense, np.array([100]))) == 2 + 99


def test_job_protocol_still_carries_stripes():
    s = Stripe(np.array([b"\x0a" * 16], "S16"), np.array([1.5]), None, 2.0, True)
    assert_round_trip_ok(JobProtocol(), b"\x0d" * 16, s)


def test_json_wire_twin_carries_the_same_block():
    rng = np.random.default_rng(1)
    for dtype in (np.float64, np.float32):
        for indexed in (False, True):
            b = random_block(rng, 9, dtype, indexed=indexed)
            assert_round_trip_ok(JSONStripeProtocol(), block_pair_key(0, 2), b)


@pytest.mark.parametrize("indexed", [False, True])
def test_truncated_or_padded_records_never_decode(indexed):
    b = random_block(np.random.default_rng(2), 5, indexed=indexed)
    data = encode_block(b)
    for cut in range(len(data)):
        piece = data[:cut]
        if piece.endswith(b"\x0b"):
            continue  # a cut inside an escape pair is a framing error, tested elsewhere
        with pytest.raises(DecodeError, match="cannot decode block value"):
            decode_block(piece)
    with pytest.raises(DecodeError, match="header says 5 vectors"):
        decode_block(data + b"\x00")


def _raw_block(kind=0x22, flags=0, n=1, m=1, lengths=(1,)):
    body = (struct.pack(">BBII", kind, flags, n, m) + b"\x01" * 16 * n
            + np.array(lengths, "<u4").tobytes() + b"\x02" * 16 * m + b"\x00" * 8 * m)
    return escape(body)


def _indexed(places, lengths=(1,)):
    """An indexed block record of one vector whose places are the bytes ``places``."""
    m = sum(lengths)
    body = (struct.pack(">BBII", 0x22, 0x08, len(lengths), m) + b"\x01" * 16 * len(lengths)
            + np.array(lengths, "<u4").tobytes() + struct.pack(">I", len(places)) + places
            + b"\x00" * 8 * m)
    return escape(body)


@pytest.mark.parametrize("data, message", [
    (_raw_block(kind=0x21), "expected kind byte 0x22 \\(block\\) at byte offset 0, found 0x21"),
    (_raw_block(flags=0x10), "unknown flag bits 0x10"),
    (_raw_block(flags=0x08), "header says 1 vectors and 1 entries with flags 0x08, which take "
                             "33686060 bytes after unescaping, found 54"),
    (_indexed(b"\x85"), "its 1 bytes of feature places at byte offset 34 after unescaping hold "
                        "0 whole varints, not the 1 entries"),
    (_indexed(b"\x05\x01\x02", (2,)), "hold 3 whole varints, not the 2 entries"),
    (_indexed(b"\x80" * 5 + b"\x01"), "the varint of entry 0 at byte offset 34 is 6 bytes long"),
    (_indexed(b"\x80\x80\x80\x80\x10"), "the place of entry 0 \\(at byte offset 34\\) is past "
                                         "2\\*\\*32"),
    (_indexed(b"\x05\x00", (2,)), "feature id 1 \\(of vector 0\\) at byte offset 35 after "
                                  "unescaping is not greater than the one before it"),
    (_raw_block(n=1, m=2, lengths=(1,)), "lengths at byte offset 26 add up to 1 entries, but the "
                                         "header says 2"),
    (escape(b"\x22\x00\x00"), "expected a 10-byte header"),
])
def test_decoding_errors_say_what_and_where(data, message):
    with pytest.raises(DecodeError, match=message):
        decode_block(data)


def test_lengths_must_add_up():
    # right total size, but the lengths say 2 + 0 while the header says 1 + 1
    body = (struct.pack(">BBII", 0x22, 0, 2, 2) + b"\x01" * 32
            + np.array([2, 1], "<u4").tobytes() + b"\x02" * 32 + b"\x00" * 16)
    with pytest.raises(DecodeError, match="lengths at byte offset 42 add up to 3 entries, but "
                                          "the header says 2"):
        decode_block(escape(body))


def test_encoding_errors():
    b = random_block(np.random.default_rng(3), 3)
    with pytest.raises(EncodeError, match="lengths add up"):
        encode_block(Block(b.ids, b.lengths + 1, b.features, b.weights))
    with pytest.raises(EncodeError, match="float64 or float32"):
        encode_block(Block(b.ids, b.lengths, b.features, b.weights.astype(np.float16)))
    with pytest.raises(EncodeError, match="3 ids, 2 stats"):
        encode_block(Block(b.ids, b.lengths, b.features, b.weights, np.ones(2)))


def test_every_registered_record_has_a_json_twin_and_round_trips():
    from mrcodecs.jobwire import RECORDS, record_type
    from mrjobs.jobprotocols import JSON_TWINS
    rng = np.random.default_rng(3)
    samples = {Stripe: Stripe(np.array([b"\x0a" * 16], "S16"), np.array([1.5]), None, 2.0, True),
               Block: random_block(rng, 4, np.float64)}
    # a record added to the registry without a sample, or without a JSON twin, fails here
    assert {r.cls for r in RECORDS.values()} == set(samples) == set(JSON_TWINS)
    for kind, r in RECORDS.items():
        value = samples[r.cls]
        assert record_type(value) is r
        assert decode_record(r.encode(value)) == value
        assert r.encode(value)[:1] == bytes([kind])
        for protocol in (JobProtocol(), JSONStripeProtocol()):
            assert_round_trip_ok(protocol, b"\x09" * 16, value)


def test_an_indexed_blocks_places_ascend_within_a_vector():
    b = Block(np.array([b"\x01" * 16, b"\x02" * 16], "S16"), np.array([2, 1], np.uint32),
              np.array([5, 3, 1], np.uint32), np.array([1.0, 2.0, 3.0]))
    with pytest.raises(EncodeError, match="a vector's feature places are not ascending"):
        encode_block(b)
    # (a vector's first place may be below the last of the vector before it)
    b.features = np.array([3, 5, 1], np.uint32)
    assert decode_block(encode_block(b)) == b
    with pytest.raises(EncodeError, match="S16 or uint32"):
        encode_block(Block(b.ids, b.lengths, b.features.astype(np.int64), b.weights))
