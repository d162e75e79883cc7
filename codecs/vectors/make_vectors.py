"""Write the stored test vectors of the mrcodecs wire format.

Run once when a layout is *added* (``python codecs/vectors/make_vectors.py``);
never to "fix" a failing test: the stored files pin the layout, and a test that
fails against them means the encoder changed the bytes on the wire.

Each case is a line ``<name>.line`` (the exact bytes one record takes on the
wire, without the newline) described in ``manifest.json``: the key, the
entries and the weight dtype.  Invalid lines live in ``invalid/`` with the
start of the error message their decoding must raise.
"""
import json
import os
import struct
import sys
import uuid

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from mrcodecs import SparseVector, VectorProtocol  # noqa: E402
from mrcodecs.jobwire import Block, JobProtocol, Stripe, StripeProtocol, block_pair_key  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def f64(b):
    return struct.unpack("<d", b)[0]


def f32(b):
    return float(struct.unpack("<f", b)[0])


CASES = [
    ("empty_f64", uuid.UUID(int=0), [], "float64"),
    # a key whose bytes are the five escaped values, ending in CR
    ("one_entry_special_key", uuid.UUID(bytes=b"\x09\x0a\x0b\x0c\x0d" + bytes(range(0x30, 0x3a)) + b"\x0d"),
     [(uuid.UUID(int=0x0A), 1.0)], "float64"),
    ("float32_three", uuid.UUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8"),
     [(uuid.UUID(int=1), 0.5), (uuid.UUID(int=2), -2.0), (uuid.UUID(int=0x0D0D), f32(b"\x09\x0a\x0d\x0b"))],
     "float32"),
    # ids covering all 256 byte values; weights whose bytes are the escaped values
    ("all_bytes_f64", uuid.UUID(bytes=bytes(range(240, 256))),
     [(uuid.UUID(bytes=bytes(range(16 * i, 16 * i + 16))), f64(bytes([9 + (i % 5)] * 6) + b"\xf0\x3f"))
      for i in range(16)], "float64"),
    ("last_byte_escaped", uuid.UUID(int=0x0D),
     [(uuid.UUID(int=0x0B), f64(b"\x00" * 7 + b"\x0b"[0:1]))], "float64"),
]

INVALID = [
    ("no_tab", b"\x00" * 16, "cannot decode line: expected key TAB value, found no TAB"),
    ("short_key", b"\x00" * 15 + b"\t\x01\x00\x00\x00\x00", "cannot decode UUID key: expected 16 bytes"),
    ("bad_escape", b"\x00" * 16 + b"\t\x01\x00\x00\x00\x00\x0b9",
     "cannot decode vector value: expected an escape sequence 0x0B 0x30..0x34"),
    ("escape_at_end", b"\x00" * 16 + b"\t\x01\x00\x00\x00\x00\x0b",
     "cannot decode vector value: expected an escape sequence 0x0B 0x30..0x34"),
    ("raw_cr", b"\x00" * 16 + b"\t\x01\x00\x00\x00\x00\r",
     "cannot decode vector value: expected an escape sequence 0x0B 0x30..0x34"),
    ("unknown_kind", b"\x00" * 16 + b"\t\x07\x00\x00\x00\x00",
     "cannot decode vector value: expected kind byte 0x01 (float64) or 0x02 (float32)"),
    ("truncated", b"\x00" * 16 + b"\t\x01\x00\x00\x00\x02" + b"\x01" * 30,
     "cannot decode vector value: header at byte offset 1 says 2 entries of float64"),
    ("short_header", b"\x00" * 16 + b"\t\x01\x00", "cannot decode vector value: expected a 5-byte header"),
]


# Stripe records (jobwire): (name, raw key, ids, values, dtype, stats, self_stat, query)
STRIPES = [
    ("stripe_plain", b"\x0d" * 16, [b"\x09" * 16, b"\x0b" * 15 + b"\x0d"], [0.5, -1.25], "float64",
     None, None, False),
    ("stripe_f32_stats_query", bytes(range(16)), [bytes(range(16, 32))], [2.0], "float32",
     [9.0], 3.0, True),
]

# Block records (jobwire): (name, pair, [(vector id, [(feature id, weight)])], dtype, stats, side)
BLOCKS = [
    ("block_two_vectors", (0, 1),
     [(b"\x0a" * 16, [(b"\x09" * 16, 0.5), (b"\x0d" * 15 + b"\x0b", -2.0)]),
      (bytes(range(16)), [(b"\x0c" * 16, 3.25)])], "float64", None, 0),
    ("block_f32_stats_side", (2, 2**32 - 1),
     [(b"\x00" * 16, [(b"\x01" * 16, 1.5)]), (b"\xff" * 16, [])], "float32", [9.0, 0.0], 1),
    # feature ids as places in a table both ends hold (flag 0x08): 4 bytes each
    ("block_indexed", (0, 0),
     [(b"\x0a" * 16, [(0, 0.5), (9, -2.0)]), (bytes(range(16)), [(2**32 - 1, 3.25)])],
     "float64", None, 0),
]

# Invalid block records, read with JobProtocol: (name, pair, block case name, lengths, error)
INVALID_BLOCKS = [
    # block_two_vectors with its lengths [2, 1] changed to [1, 2]: they still add
    # up, but the second vector's ids are out of order
    ("block_shifted_lengths", (0, 1), "block_two_vectors", [1, 2],
     "cannot decode record value: feature id 2 (of vector 1) at byte offset 82"),
]


def _block(vectors, dtype, stats, side, lengths=None):
    return Block(
        np.array([v for v, _ in vectors], dtype="S16").reshape(-1),
        np.array(lengths or [len(e) for _, e in vectors], dtype=np.uint32),
        np.array([f for _, e in vectors for f, _ in e],
                 dtype=np.uint32 if vectors and any(isinstance(f, int) for _, e in vectors
                                                    for f, _ in e) else "S16").reshape(-1),
        np.array([w for _, e in vectors for _, w in e], dtype=dtype),
        None if stats is None else np.array(stats, dtype=np.float64),
        side,
    )


def main():
    proto = VectorProtocol()
    manifest = {"valid": [], "invalid": []}
    for name, key, entries, dtype in CASES:
        vec = SparseVector.from_dict(dict(entries), dtype=np.dtype(dtype))
        line = proto.write(key, vec)
        with open(os.path.join(HERE, name + ".line"), "wb") as f:
            f.write(line)
        manifest["valid"].append({
            "name": name,
            "key": str(key),
            "dtype": dtype,
            "entries": [[str(u), w.hex()] for u, w in entries],
        })
    manifest["stripes"] = []
    for name, key, ids, values, dtype, stats, self_stat, query in STRIPES:
        stripe = Stripe(
            np.array(ids, dtype="S16"),
            np.array(values, dtype=dtype),
            None if stats is None else np.array(stats, dtype=np.float64),
            self_stat,
            query,
        )
        with open(os.path.join(HERE, name + ".line"), "wb") as f:
            f.write(StripeProtocol().write(key, stripe))
        manifest["stripes"].append({
            "name": name, "key": key.hex(), "ids": [i.hex() for i in ids],
            "values": [float(v).hex() for v in values], "dtype": dtype,
            "stats": None if stats is None else [float(v).hex() for v in stats],
            "self_stat": None if self_stat is None else float(self_stat).hex(), "query": query,
        })
    manifest["blocks"] = []
    for name, (i, j), vectors, dtype, stats, side in BLOCKS:
        block = _block(vectors, dtype, stats, side)
        with open(os.path.join(HERE, name + ".line"), "wb") as f:
            f.write(JobProtocol().write(block_pair_key(i, j), block))
        manifest["blocks"].append({
            "name": name, "pair": [i, j], "dtype": dtype, "side": side,
            "indexed": any(isinstance(f, int) for _, e in vectors for f, _ in e),
            "vectors": [[v.hex(), [[f if isinstance(f, int) else f.hex(), float(w).hex()]
                                   for f, w in e]] for v, e in vectors],
            "stats": None if stats is None else [float(v).hex() for v in stats],
        })
    os.makedirs(os.path.join(HERE, "invalid"), exist_ok=True)
    for name, line, message in INVALID:
        with open(os.path.join(HERE, "invalid", name + ".line"), "wb") as f:
            f.write(line)
        manifest["invalid"].append({"name": name, "error": message})
    manifest["invalid_blocks"] = []
    by_name = {b[0]: b for b in BLOCKS}
    for name, (i, j), case, lengths, message in INVALID_BLOCKS:
        _, _, vectors, dtype, stats, side = by_name[case]
        with open(os.path.join(HERE, "invalid", name + ".line"), "wb") as f:
            f.write(JobProtocol().write(block_pair_key(i, j),
                                        _block(vectors, dtype, stats, side, lengths)))
        manifest["invalid_blocks"].append({"name": name, "error": message})
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
