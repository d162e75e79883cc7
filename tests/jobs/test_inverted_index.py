"""MRInvertedIndex: posting lists equal the columns of the corpus matrix."""
import uuid

import numpy as np

from mrcodecs import VectorProtocol
from mrjobs.inverted_index import MRInvertedIndex
from mrjobs.testing import run_job
from tests.jobs_helpers import corpus, read_corpus
import pytest

pytestmark = [pytest.mark.twin, pytest.mark.versions]

LINES = corpus(n=200)


def columns(lines, max_df=None):
    docs, X, feats = read_corpus(lines)
    Xc = X.tocsc()
    out = {}
    for j, f in enumerate(feats):
        lo, hi = Xc.indptr[j], Xc.indptr[j + 1]
        if max_df is not None and hi - lo > max_df:
            continue
        out[f] = {docs[i]: w for i, w in zip(Xc.indices[lo:hi], Xc.data[lo:hi])}
    return out


def test_posting_lists_are_the_matrix_columns():
    result = run_job(MRInvertedIndex, LINES)
    got = dict(result.output)
    assert got == columns(LINES)
    # each posting list is written in document-id order
    for row in got.values():
        assert [d.bytes for d in row] == sorted(d.bytes for d in row)


def test_max_df_and_compact_output():
    result = run_job(MRInvertedIndex, LINES, ["--max-df", "10", "--output-format", "compact"])
    p = VectorProtocol()
    got = {k: v.to_dict() for k, v in map(p.read, result.lines)}
    want = columns(LINES, max_df=10)
    assert got == want
    dropped = result.counters["mrsparse df-cut"]["features dropped"]
    assert dropped == len(columns(LINES)) - len(want) > 0


def test_tiny_mapper_buffer_gives_same_index():
    assert (run_job(MRInvertedIndex, LINES, ["--buffer-entries", "7"]).lines
            == run_job(MRInvertedIndex, LINES).lines)


def test_float32_weights():
    got = dict(run_job(MRInvertedIndex, LINES, ["--float32"]).output)
    want = columns(LINES)
    for f, row in want.items():
        np.testing.assert_allclose([got[f][d] for d in row], list(row.values()), rtol=1e-7)


def test_duplicate_vector_ids_are_summed_and_counted():
    f = uuid.UUID(int=77)
    d = uuid.UUID(bytes=b"\x0d" * 16)
    lines = ['{"id": "%s", "features": {"%s": 1.5}}' % (d, f)] * 2
    result = run_job(MRInvertedIndex, lines)
    assert dict(result.output) == {f: {d: 3.0}}
    assert result.counters["mrsparse input"]["duplicate vector id (weights summed)"] == 1
