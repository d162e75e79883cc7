"""VectorProtocol as an internal protocol through mrjob's inline and local runners."""
import collections
import uuid

import numpy as np
import pytest

from examples.mr_posting_lists import MRPostingLists

pytestmark = pytest.mark.twin

SPECIAL = [0x09, 0x0A, 0x0B, 0x0C, 0x0D]


def _sample(rng):
    """Lines of (doc, feature, weight); ids full of bytes that need escaping."""
    def special_uuid():
        b = rng.choice(SPECIAL + [0x00, 0x30, 0xFF], size=16).astype(np.uint8).tobytes()
        return uuid.UUID(bytes=b)

    docs = [special_uuid() for _ in range(30)] + [uuid.UUID(bytes=rng.bytes(16)) for _ in range(30)]
    features = [special_uuid() for _ in range(10)] + [uuid.UUID(bytes=bytes([s] * 16)) for s in SPECIAL]
    lines, expected = [], collections.defaultdict(lambda: collections.defaultdict(float))
    for _ in range(600):
        d = docs[rng.integers(len(docs))]
        f = features[rng.integers(len(features))]
        w = float(rng.integers(-1000, 1000)) / 8  # exact in binary: sums are order-independent
        lines.append(b"%s %s %r\n" % (str(d).encode(), str(f).encode(), w))
        expected[str(f)][str(d)] += w
    return lines, {f: dict(p) for f, p in expected.items()}


def _run(runner, lines, tmp_path):
    path = tmp_path / "input.txt"
    path.write_bytes(b"".join(lines))
    job = MRPostingLists(["-r", runner, "--no-conf", str(path)])
    with job.make_runner() as r:
        r.run()
        return {k: v for k, v in job.parse_output(r.cat_output())}


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.slow
def test_posting_lists_job(runner, tmp_path):
    lines, expected = _sample(np.random.default_rng(5))
    assert _run(runner, lines, tmp_path) == expected
