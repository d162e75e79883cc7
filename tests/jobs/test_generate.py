"""The generator's queries (over the corpus's feature ids, drawn as its
vectors are), its determinism, and its streaming (chunks change no byte;
memory does not grow with the number of vectors)."""
import subprocess
import sys
import tracemalloc
import uuid

import numpy as np
import pytest

from mrjobs import generate
from mrjobs.generate import generate_arrays, generate_lines, generate_query_lines, main
from tests.jobs_helpers import read_corpus

ARGS = dict(vectors=500, features_per_vector=8, vocabulary=2000, zipf=1.1)


def _ids(a):
    return [uuid.UUID(bytes=row.tobytes()) for row in a]


def test_queries_are_over_the_corpus_feature_ids():
    corpus = generate_arrays(seed=5, **ARGS)
    vocabulary = set(_ids(corpus["feature_ids"]))
    qdocs, _, qfeats = read_corpus(list(generate_query_lines(300, seed=5, **ARGS)))
    assert len(qdocs) == 300 and not set(qdocs) & set(_ids(corpus["doc_ids"]))
    assert set(qfeats) <= vocabulary
    # another seed, another vocabulary
    _, _, feats = read_corpus(list(generate_query_lines(300, seed=6, **ARGS)))
    assert not set(feats) & vocabulary


def test_queries_are_drawn_as_the_corpus_vectors():
    n = 3000
    corpus = generate_arrays(n, 8, 2000, 1.1, seed=2)
    rank = {f: r for r, f in enumerate(_ids(corpus["feature_ids"]))}
    _, X, feats = read_corpus(list(generate_query_lines(n, n, 8, 2000, 1.1, seed=2)))
    qranks = np.array([rank[f] for f in feats])[X.indices]
    sizes = np.diff(X.indptr)
    csizes = np.diff(corpus["indptr"])
    # Poisson(8) sizes: means within 4 standard errors of each other
    assert abs(sizes.mean() - csizes.mean()) < 4 * np.sqrt(2 * 8 / n)
    # the same Zipf law: the share of entries among the 10 most popular ranks
    # and among ranks 100 to 999
    for lo, hi in ((0, 10), (100, 1000)):
        q = ((qranks >= lo) & (qranks < hi)).mean()
        c = ((corpus["indices"] >= lo) & (corpus["indices"] < hi)).mean()
        assert abs(q - c) < 0.02, (lo, hi, q, c)


def _cli(tmp_path, name, *args):
    out, qout = tmp_path / (name + ".jsonl"), tmp_path / (name + "-q.jsonl")
    argv = ["--vectors", "300", "--vocabulary", "1000", "--features-per-vector", "6",
            "-o", str(out), "--no-progress"] + list(args)
    if "--queries" in args:
        argv += ["--queries-output", str(qout)]
    main(argv)
    return out.read_bytes(), qout.read_bytes() if qout.exists() else None


def test_queries_are_deterministic_and_leave_the_corpus_unchanged(tmp_path):
    alone, none = _cli(tmp_path, "alone", "--seed", "3")
    assert none is None
    a = _cli(tmp_path, "a", "--seed", "3", "--queries", "40")
    b = _cli(tmp_path, "b", "--seed", "3", "--queries", "40")
    c = _cli(tmp_path, "c", "--seed", "4", "--queries", "40")
    assert a == b and a[0] == alone and a[1] != c[1]
    assert len(a[1].splitlines()) == 40


@pytest.mark.parametrize("argv", [["--queries", "3"], ["--queries-output", "q.jsonl"],
                                  ["--queries", "-1", "--queries-output", "q.jsonl"],
                                  ["--queries", "3", "--queries-output", "-"]])
def test_queries_options_go_together(argv, capsys):
    with pytest.raises(SystemExit):
        main(["--vectors", "3"] + argv)
    assert "--queries" in capsys.readouterr().err


@pytest.mark.parametrize("edge_cases", [False, True])
def test_the_chunk_size_changes_no_byte(monkeypatch, edge_cases):
    args = (450, 6, 300, 1.1)
    whole = list(generate_lines(*args, seed=8, edge_cases=edge_cases, progress=False))
    queries = list(generate_query_lines(70, *args, seed=8))
    monkeypatch.setattr(generate, "_CHUNK", 7)
    assert list(generate_lines(*args, seed=8, edge_cases=edge_cases, progress=False)) == whole
    assert list(generate_query_lines(70, *args, seed=8)) == queries
    assert len(whole) == 450 + 9 * edge_cases


def _peak(vectors):
    tracemalloc.start()
    try:
        for _ in generate_lines(vectors, 5, 5000, 1.1, seed=1, progress=False):
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_lines_are_streamed():
    # five times the vectors (five chunks instead of one), about the same peak
    # (the arrays of the whole corpus would take about five times as much)
    assert generate._CHUNK == 2000
    small, large = _peak(2000), _peak(10000)
    assert large < 1.5 * small, (small, large)


@pytest.mark.slow
def test_no_progress_bar_goes_to_a_log_file(tmp_path):
    # stderr a file, not a terminal: no bar (and none of its \r updates)
    # unless asked for
    def run(*flags):
        with open(tmp_path / "log", "w+b") as log:
            subprocess.run([sys.executable, "-m", "mrjobs.generate", "--vectors", "50000",
                            "--features-per-vector", "1", "--vocabulary", "100", "-o",
                            str(tmp_path / "c.jsonl")] + list(flags), stderr=log, check=True)
            log.seek(0)
            return log.read()
    assert run() == b""
    assert b"\r" in run("--progress")
