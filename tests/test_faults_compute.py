"""Faults in the computation: pairs whose dot product underflows, weights that
overflow when summed or cast, a query id that is also in the corpus, numbers
that are not numbers, block records with shifted entries, the order of the
output, and Pearson's exact zeros.  Every job case runs under both
strategies on the inline runner; the local runner where it could differ."""
import json
import os
import uuid

import numpy as np
import pytest

from mrcodecs import DecodeError, ID_DTYPE
from mrcodecs.jobwire import Block, JobProtocol, block_pair_key, decode_block
from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.parsing import InputError
from mrjobs.testing import run_job, write_lines

STRATEGIES = ["blocks", "stripes"]
U = [uuid.UUID(int=i) for i in range(40)]


def line(doc, feats):
    return json.dumps({"id": str(U[doc]), "features": {str(U[f]): w for f, w in feats.items()}})


def run(strategy, lines, args=(), **kw):
    return run_job(MRSparseDotProducts, lines, ["--strategy", strategy] + list(args), **kw)


def rows(result):
    return {k: v for k, v in result.output}


# -- pairs whose dot product is exactly 0.0 ---------------------------------

UNDERFLOW_CASES = [
    ("dot", [line(1, {10: 1e-200}), line(2, {10: 1e-200})]),
    ("cosine", [line(1, {10: 1, 11: 1e-200}), line(2, {11: 1e-200, 12: 1})]),
    ("tanimoto", [line(1, {10: 1, 11: 1e-200}), line(2, {11: 1e-200, 12: 1})]),
    ("euclidean", [line(1, {10: 1, 11: 1e-200}), line(2, {11: 1e-200, 12: 1})]),
]


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("measure,lines", UNDERFLOW_CASES, ids=[c[0] for c in UNDERFLOW_CASES])
def test_pairs_whose_dot_underflows_get_a_score(strategy, measure, lines):
    got = rows(run(strategy, lines + [line(3, {20: 1.0}), line(4, {20: 2.0})],
                   ["--measure", measure, "--blocks", "2"] if strategy == "blocks"
                   else ["--measure", measure]))
    assert set(got[U[1]]) == {U[2]} and set(got[U[2]]) == {U[1]}
    assert got[U[1]][U[2]] == got[U[2]][U[1]]
    if measure in ("dot", "cosine", "tanimoto"):
        assert got[U[1]][U[2]] == 0.0
    assert got[U[3]] == {U[4]: {"dot": 2.0, "cosine": 1.0, "tanimoto": 2 / 3,
                                "euclidean": 0.5}[measure]}


@pytest.mark.parametrize("blocks", ["1", "3"])
def test_underflow_with_top_k_and_many_pairs(blocks):
    # positive weights everywhere: the repair runs only in block pairs that can
    # hold an exact zero; every pair sharing a feature is scored under both
    lines = [line(i, {10: 1e-170 if i % 2 else 1e-160, 11 + i % 3: 1.0}) for i in range(1, 13)]
    outs = [rows(run(s, lines, ["--measure", "dot"] + (["--blocks", blocks] if s == "blocks"
                                                       else [])))
            for s in STRATEGIES]
    assert outs[0] == outs[1]
    assert all(len(r) == 11 for r in outs[0].values())
