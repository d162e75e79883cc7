"""The examples: generator determinism and shape, the sample, make run."""
import hashlib
import json
import os
import subprocess
import sys
import uuid

import numpy as np
import pytest
import scipy.sparse as sp

from mrjobs.generate import generate_arrays, generate_lines, main as generate_main
from examples.strongest_pairs import SAMPLE, strongest_pairs
from tests.jobs_helpers import oracle, read_corpus

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_generator_is_deterministic_and_seeded(tmp_path):
    a, b, c = (tmp_path / n for n in "abc")
    generate_main(["--vectors", "50", "--vocabulary", "300", "--seed", "4", "-o", str(a)])
    generate_main(["--vectors", "50", "--vocabulary", "300", "--seed", "4", "-o", str(b)])
    generate_main(["--vectors", "50", "--vocabulary", "300", "--seed", "5", "-o", str(c)])
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()
    assert len(a.read_text().splitlines()) == 50


def test_generator_shape_is_zipfian():
    arr = generate_arrays(4000, 50, 100000, 1.1, seed=1)
    nnz_per_vector = np.diff(arr["indptr"])
    assert 49 < nnz_per_vector.mean() < 51  # Poisson(50) distinct features
    df = np.bincount(arr["indices"], minlength=100000)
    # Zipf(1.1): doubling the rank divides the frequency by about 2^1.1 = 2.14
    # (ranks where a feature is far from being in every vector)
    ratio = df[100:200].sum() / df[200:400].sum() * 2
    assert 1.9 < ratio < 2.4
    assert df[0] > 0.9 * 4000  # the most popular feature is in nearly every vector


def test_tsv_and_json_lines_describe_the_same_corpus():
    j = list(generate_lines(40, 5, 50, seed=2, edge_cases=True))
    t = list(generate_lines(40, 5, 50, seed=2, fmt="tsv", edge_cases=True))
    dj, xj, fj = read_corpus(j)
    dt, xt, ft = read_corpus(t)
    assert dj == dt and fj == ft and (xj != xt).nnz == 0


def test_sample_is_the_documented_generator_output():
    lines = list(generate_lines(300, 12, 2000, 1.1, 42, edge_cases=True, progress=False))
    with open(SAMPLE, encoding="utf-8") as f:
        assert f.read() == "".join(line + "\n" for line in lines)
    assert all(json.loads(line)["id"] for line in lines)


def test_strongest_pairs_match_scipy():
    ranked, counters = strongest_pairs(SAMPLE, "cosine", 10)
    with open(SAMPLE, encoding="utf-8") as f:
        want = oracle(f.read().splitlines(), "cosine")
    pairs = sorted({(min(a.bytes, b.bytes), max(a.bytes, b.bytes)): s
                    for a, row in want.items() for b, s in row.items()}.values(), reverse=True)
    np.testing.assert_allclose([s for s, _, _ in ranked], pairs[:10], rtol=1e-9)
    assert counters["mrsparse input"]["vectors read"] == 309


@pytest.mark.slow
def test_make_run_command_prints_the_table():
    run = subprocess.run([sys.executable, "-m", "examples.strongest_pairs", "--pairs", "3"],
                         cwd=ROOT, capture_output=True, text=True, check=True)
    out = run.stdout
    assert run.stderr == ""          # not mrjob's "No configs specified for inline runner"
    assert "3 strongest pairs by cosine among 309 vectors" in out
    assert len([l for l in out.splitlines() if l.startswith(("   1 ", "   2 ", "   3 "))]) == 3


@pytest.mark.slow
def test_generator_lines_are_its_arrays():
    # the lines, read back by the standard-library reader of the tests, are
    # exactly the CSR matrix generate_arrays returns for the same arguments
    args = (2000, 50, 100000, 1.1)
    lines = list(generate_lines(*args, seed=1, progress=False))
    a = generate_arrays(*args, seed=1)
    docs, X, feats = read_corpus(lines)
    assert docs == [uuid.UUID(bytes=row.tobytes()) for row in a["doc_ids"]]
    column = {uuid.UUID(bytes=row.tobytes()): j for j, row in enumerate(a["feature_ids"])}
    want = sp.csr_matrix((a["weights"], a["indices"], a["indptr"]), shape=(args[0], args[2]))
    want = want[:, [column[f] for f in feats]]
    assert X.shape == want.shape and X.nnz == want.nnz == a["indices"].shape[0]
    assert (X != want).nnz == 0  # weights written with repr: exact
    assert hashlib.sha256("\n".join(lines).encode()).hexdigest() == hashlib.sha256(
        "\n".join(generate_lines(*args, seed=1, progress=False)).encode()).hexdigest()


@pytest.mark.slow
def test_strongest_pairs_offers_every_measure():
    # loglikelihood needs --num-features: the example counts the sample's features
    out = subprocess.run([sys.executable, "-m", "examples.strongest_pairs", "--pairs", "2",
                          "--measure", "loglikelihood"], cwd=ROOT, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    assert "2 strongest pairs by loglikelihood" in out.stdout


@pytest.mark.slow
def test_generator_runs_from_any_directory(tmp_path):
    # installed with mrsparse: no checkout on the path, another working dir
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, "-m", "mrjobs.generate", "--vectors", "3",
                          "--vocabulary", "40", "--seed", "7", "-o", "c.jsonl"],
                         cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "c.jsonl").read_text().splitlines() == list(
        generate_lines(3, 50, 40, seed=7, progress=False))
    # the old name, from the checkout's root, writes the same
    old = subprocess.run([sys.executable, "-m", "examples.generate", "--vectors", "3",
                          "--vocabulary", "40", "--seed", "7"], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True).stdout
    assert old.splitlines() == (tmp_path / "c.jsonl").read_text().splitlines()
