"""mrjobs.neighbours: the dot products job from Python on a scipy matrix with
ids of any kind; checked against scipy, against the command line's bytes on
the same input, and on bad ids and bad weights."""
import json
import os
import subprocess
import sys
import uuid

import numpy as np
import pytest
import scipy.sparse as sp

import mrjobs
from mrjobs.api import NAMESPACE, IdMap, Neighbours, uuid_of, write_matrix
from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.testing import run_job

pytestmark = pytest.mark.versions

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def matrix(rows=120, cols=40, density=0.15, seed=1):
    m = sp.random(rows, cols, density=density, random_state=seed, format="csr")
    m.data = np.round(m.data * 8 + 1) / 4  # exact in binary: ties broken by the job's rule
    return m


def cosine_oracle(m, q=None):
    """Dense cosine scores of the rows of ``q`` (default ``m``) against those of
    ``m``, with numpy alone; the diagonal out when ``q`` is ``m``."""
    a = m.toarray()
    na = a / np.maximum(np.linalg.norm(a, axis=1), 1e-300)[:, None]
    b = na if q is None else q.toarray() / np.maximum(
        np.linalg.norm(q.toarray(), axis=1), 1e-300)[:, None]
    s = b @ na.T
    if q is None:
        np.fill_diagonal(s, 0.0)
    return s


def assert_top_k(result, scores, k):
    got = result.matrix.toarray()
    for i in range(scores.shape[0]):
        want = np.sort(scores[i][scores[i] > 1e-12])[::-1][:k]
        have = np.sort(got[i][got[i] != 0])[::-1]
        np.testing.assert_allclose(have, want, rtol=1e-12, err_msg="row %d" % i)


def test_top_k_of_a_matrix_with_string_ids_matches_numpy():
    m = matrix()
    ids = ["doc-%03d" % i for i in range(m.shape[0])]
    result = mrjobs.neighbours(m, ids, measure="cosine", top_k=4)
    assert result.ids == ids == result.neighbour_ids
    assert result.matrix.shape == (m.shape[0], m.shape[0])
    assert_top_k(result, cosine_oracle(m), 4)
    row = result.rows()[ids[0]]
    assert [s for _, s in row] == sorted((s for _, s in row), reverse=True)
    assert all(isinstance(n, str) for n, _ in row)


def test_threshold_keeps_exactly_the_pairs_above_it():
    m = matrix(seed=4)
    result = mrjobs.neighbours(m, measure="cosine", threshold=0.5)
    scores = cosine_oracle(m)
    got = result.matrix.toarray()
    assert result.ids == list(range(m.shape[0]))
    np.testing.assert_array_equal(got != 0, scores >= 0.5)
    np.testing.assert_allclose(got[scores >= 0.5], scores[scores >= 0.5], rtol=1e-12)


def test_queries_are_the_rows_and_the_corpus_the_columns():
    m, q = matrix(seed=5), matrix(rows=7, seed=6)
    qids = [uuid.UUID(int=i + 1) for i in range(7)]
    result = mrjobs.neighbours(m, measure="cosine", top_k=3, queries=(q, qids))
    assert result.ids == qids and result.neighbour_ids == list(range(m.shape[0]))
    assert result.matrix.shape == (7, m.shape[0])
    assert_top_k(result, cosine_oracle(m, q), 3)
    with pytest.raises(ValueError, match=r"queries=\(matrix, ids\)"):
        mrjobs.neighbours(m, top_k=3, queries=q)


def test_pairs_in_take_features_of_any_kind():
    vectors = [("a", {"x": 1.0, "y": 2.0}), ("b", {"x": 1.0, 7: 1.0}), ("c", {7: 3.0})]
    result = mrjobs.neighbours(vectors, measure="dot")
    assert result.rows() == {"a": [("b", 1.0)], "b": [("c", 3.0), ("a", 1.0)],
                             "c": [("b", 3.0)]}


def test_the_same_lines_as_the_command_line_on_the_written_matrix(tmp_path):
    m = matrix(seed=7)
    ids = list(range(1000, 1000 + m.shape[0]))
    path = str(tmp_path / "corpus.mrs")
    written = write_matrix(path, m, ids)
    assert written.ids == ids
    cli = subprocess.run([sys.executable, "-m", "mrjobs.dot_products", path, "--measure",
                          "jaccard", "--top-k", "5", "-r", "inline", "--quiet"],
                         capture_output=True, cwd=ROOT, check=True).stdout
    result = mrjobs.neighbours(m, ids, measure="jaccard", top_k=5)
    assert result.lines == cli.splitlines() and result.lines  # in its order too
    back = Neighbours.from_lines(cli.decode().splitlines(), ids)
    assert (back.matrix != result.matrix).nnz == 0 and back.rows() == result.rows()


@pytest.mark.slow
@pytest.mark.smoke
def test_the_local_runner_gives_the_inline_lines():
    m = matrix(seed=8)
    inline = mrjobs.neighbours(m, top_k=3, max_df=60)
    local = mrjobs.neighbours(m, top_k=3, max_df=60, runner="local")
    assert local.lines == inline.lines and local.lines


def test_the_prefix_strategy_gives_the_same_lines():
    m = matrix(seed=9)
    blocks = mrjobs.neighbours(m, threshold=0.2)
    prefix = mrjobs.neighbours(m, threshold=0.2, strategy="prefix")
    assert prefix.lines == blocks.lines and blocks.lines
    assert (prefix.matrix != blocks.matrix).nnz == 0


def test_ids_map_to_uuids_deterministically_and_back():
    assert uuid_of(7) == uuid.uuid5(uuid.uuid5(uuid.NAMESPACE_URL, "mrsparse:ids"), "int:7")
    assert uuid_of("7") == uuid.uuid5(NAMESPACE, "str:7") != uuid_of(7)
    assert uuid_of(np.int64(7)) == uuid_of(7) and uuid_of(np.str_("7")) == uuid_of("7")
    u = uuid.UUID(int=5)
    assert uuid_of(u) is u
    ids = IdMap([3, "3", u])
    assert [ids.id_of(k.bytes) for k in ids.uuids] == [3, "3", u]


@pytest.mark.parametrize("ids, said", [
    ([1, 2, 1], r"ids\[2\] \(1\) is given twice"),
    ([1, uuid_of(1)], r"ids\[1\] .* gets the same UUID as ids\[0\] \(1\)"),
    ([1.5, 2], r"ids\[0\]: an id is an int, a str or a uuid.UUID, not float"),
    ([True, 2], r"ids\[0\]: .* not bool"),
])
def test_ids_that_cannot_key_a_row_are_refused_naming_it(ids, said):
    with pytest.raises((ValueError, TypeError), match=said):
        mrjobs.neighbours(sp.identity(len(ids), format="csr"), ids, top_k=1)


def test_bad_shapes_and_weights_are_refused_naming_the_row(tmp_path):
    with pytest.raises(ValueError, match="2 ids for a matrix of 3 rows"):
        mrjobs.neighbours(sp.identity(3, format="csr"), ["a", "b"])
    bad = sp.csr_matrix(np.array([[1.0, 0.0], [np.nan, 1.0]]))
    with pytest.raises(ValueError, match=r"ids\[1\] \('b'\): weights must be finite"):
        write_matrix(str(tmp_path / "x"), bad, ["a", "b"])
    with pytest.raises(TypeError, match=r"ids\[1\] \('b'\): a feature: an id is an int, a "
                                        r"str or a uuid.UUID, not float"):
        write_matrix(str(tmp_path / "y"), [("a", {1: 1.0}), ("b", {2.5: 1.0})])
    with pytest.raises(ValueError, match="output_format"):
        mrjobs.neighbours(sp.identity(2, format="csr"), output_format="compact")


def test_an_output_line_of_another_corpus_is_refused():
    line = '"%s"\t{"%s": 0.5}' % (uuid.UUID(int=1), uuid.UUID(int=2))
    with pytest.raises(ValueError, match="output line 1 names an id not given"):
        Neighbours.from_lines([line], [1, 2])


def test_to_pandas_is_one_row_a_pair_ranked():
    pd = pytest.importorskip("pandas")
    result = mrjobs.neighbours([("a", {1: 1.0}), ("b", {1: 2.0}), ("c", {1: 3.0})],
                               measure="dot", top_k=2)
    frame = result.to_pandas()
    assert isinstance(frame, pd.DataFrame)
    assert frame.values.tolist() == [["a", "c", 3.0, 1], ["a", "b", 2.0, 2],
                                     ["b", "c", 6.0, 1], ["b", "a", 2.0, 2],
                                     ["c", "b", 6.0, 1], ["c", "a", 3.0, 2]]


@pytest.mark.slow
@pytest.mark.smoke
def test_the_notebook_example_finds_what_sp_matmul_rs_finds():
    # docs/api/python.md: the same matrix, the local runner, top-5 cosine
    sp_matmul_topn = pytest.importorskip("sp_matmul_rs").sp_matmul_topn
    m = sp.random(300, 1000, density=0.01, random_state=7, format="csr")
    ids = ["doc-%d" % i for i in range(300)]
    result = mrjobs.neighbours(m, ids, measure="cosine", top_k=5, runner="local")
    norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
    x = sp.csr_matrix(sp.diags(1 / np.where(norms > 0, norms, 1)) @ m)
    peer = sp.csr_matrix(sp_matmul_topn(x, x.T, top_n=6, sort=True))
    peer.setdiag(0)
    peer.eliminate_zeros()
    ours = result.matrix
    for i in range(300):
        theirs = peer[i]
        order = np.argsort(-theirs.data, kind="stable")[:5]
        want = dict(zip(theirs.indices[order].tolist(), theirs.data[order].tolist()))
        have = dict(zip(ours[i].indices.tolist(), ours[i].data.tolist()))
        assert have.keys() == want.keys(), i
        np.testing.assert_allclose([have[j] for j in want], list(want.values()), rtol=1e-9)


def test_json_and_compact_inputs_give_the_same_lines(tmp_path):
    from mrjobs.api import matrices

    m, ids = matrix(seed=9), ["r%d" % i for i in range(120)]
    lines = {}
    for fmt in ("compact", "json"):
        path = str(tmp_path / ("corpus." + fmt))
        write_matrix(path, m, ids, format=fmt)
        lines[fmt] = sorted(matrices._run(["-r", "inline", "--top-k", "3", path])[0])
    assert lines["json"] == lines["compact"] and lines["json"]


def test_a_run_that_skips_a_line_written_for_it_is_an_error(tmp_path):
    # every line the API writes is a vector: one skipped is the engine's
    # misreading (Spark's text input on compact records), never a quiet gap
    from mrjobs.api import matrices

    path = tmp_path / "corpus.json"
    write_matrix(str(path), matrix(seed=10), format="json")
    with open(path, "ab") as f:
        f.write(b"not a vector\n")
    with pytest.raises(RuntimeError, match="did not read the vectors written for it: skipped 1 "
                                           "bad input line"):
        matrices._run(["-r", "inline", "--top-k", "3", str(path)])


def test_the_command_lines_ids_of_any_kind_are_the_apis():
    # the same pairs, keyed by their ids: --ids any on the command line and
    # mrjobs.neighbours map ids alike, and from_lines reads either output
    pairs = [("apple pie", {"sweet": 2, "apple": 3}), (17, {"apple": 1, "tree": 2}),
             ("17", {"apple": 1, "tree": 2, "pie": 1}), ("crumble", {"sweet": 1, "apple": 2})]
    lines = [json.dumps({"id": i, "features": f}) for i, f in pairs]
    named = run_job(MRSparseDotProducts, lines, ["--measure", "cosine", "--top-k", "2",
                                                 "--ids", "any"])
    result = mrjobs.neighbours(pairs, [i for i, _ in pairs], measure="cosine", top_k=2)
    back = Neighbours.from_lines(named.lines, [i for i, _ in pairs])
    assert back.rows() == result.rows() and len(back.rows()) == 4
    assert dict(named.output)[17] == [[i, s] for i, s in result.rows()[17]]
