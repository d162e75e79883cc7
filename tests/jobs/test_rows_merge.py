"""The rows step's merge of many vectors at once (mrjobs.scoring.RowMerger,
with the C kernels a row at a time by merge_top_k but for rows with a NaN)
against one vector at a time (merge_rows): the same rows, in the same order,
whatever the batch size."""
import numpy as np
import pytest

from mrcodecs.jobwire import Stripe
from mrjobs.scoring import RowMerger, merge_rows

pytestmark = pytest.mark.asan  # (merge_top_k, C)


def _pieces(rng, n_vectors, kind="float64"):
    ids = rng.integers(0, 256, (60, 16), dtype=np.uint8).view("S16").ravel()
    out = []
    for v in range(n_vectors):
        pieces = []
        for _ in range(int(rng.integers(0, 4))):  # (a vector with no piece gets no row)
            n = int(rng.integers(0, 12))
            others = rng.choice(ids, n, replace=False)
            # few distinct scores: ties broken by id
            scores = rng.integers(-3, 4, n) / 4.0
            if kind == "nan":  # some rows with a NaN: the batches' own order
                scores[rng.random(n) < 0.05] = np.nan
            elif kind == "signed zeros":
                scores[scores == 0] = np.where(rng.random(n) < 0.5, -0.0, 0.0)[scores == 0]
            pieces.append(Stripe(others, scores.astype(kind if kind == "float32" else float)))
        out.append((b"%016d" % v, pieces))
    return out


@pytest.mark.parametrize("kind", ["float64", "float32", "nan", "signed zeros"])
@pytest.mark.parametrize("k", [None, 1, 3, 50])
@pytest.mark.parametrize("limit", [1, 7, 10**6])
def test_row_merger_gives_merge_rows_rows(k, limit, kind):
    vectors = _pieces(np.random.default_rng(k or 0), 40, kind)
    want = [(doc, merge_rows(pieces, k, limit)) for doc, pieces in vectors]
    want = [(doc, row.ids.tolist(), row.values.tolist()) for doc, row in want if row is not None]
    merger, got = RowMerger(k, limit), []
    for doc, pieces in vectors:
        got += merger.add(doc, pieces)
    got += merger.flush()
    got = [(doc, row.ids.tolist(), row.values.tolist()) for doc, row in got]
    # (NaN != NaN: compared as text; -0.0 and 0.0 by their signs too)
    assert repr(got) == repr(want)
    assert merger.flush() == []


@pytest.mark.parametrize("k", [20, 50])
def test_a_row_already_in_order_and_one_that_is_not(k):
    # a vector's one piece already in its row's order (a whole row from the
    # pair kernel) is taken as it is, cut to k; one piece out of order is
    # ordered and cut: merge_rows' rows either way
    rng = np.random.default_rng(k)
    vectors = []
    for v, n in enumerate([0, 1, 2, k - 1, k, k + 5] * 3):
        ids = np.unique(rng.integers(0, 256, (n, 16), dtype=np.uint8).view("S16").ravel())
        row = merge_rows([Stripe(ids, rng.integers(-3, 4, ids.shape[0]) / 4.0)], None, 10**6)
        ids, scores = row.ids.copy(), row.values.copy()
        if v % 3 == 1 and ids.shape[0] > 1:  # two neighbours swapped: out of order
            ids[[0, -1]], scores[[0, -1]] = ids[[-1, 0]], scores[[-1, 0]]
        vectors.append((b"%016d" % v, [Stripe(ids, scores)]))
    merger, got = RowMerger(k, 10**6), []
    for doc, pieces in vectors:
        got += merger.add(doc, pieces)
    got += merger.flush()
    want = [(doc, merge_rows(pieces, k, 10**6)) for doc, pieces in vectors]
    assert [(doc, row.ids.tolist(), row.values.tolist()) for doc, row in got] == [
        (doc, row.ids.tolist(), row.values.tolist()) for doc, row in want if row is not None]


@pytest.mark.parametrize("k", [None, 1, 3, 50])
@pytest.mark.parametrize("limit", [1, 7, 10**6])
def test_repeated_neighbours_keep_their_best_before_the_cut(k, limit):
    # each vector's neighbours, each with its best score, then some again
    # with lower ones (the prefix strategy's pairs met again): the rows are
    # those of the best scores alone, the repeats counted
    rng = np.random.default_rng(7 + (k or 0))
    ids = rng.integers(0, 256, (60, 16), dtype=np.uint8).view("S16").ravel()
    merger, got, want, again = RowMerger(k, limit, repeats=True), [], [], 0
    for v in range(30):
        doc = b"%016d" % v
        n = int(rng.integers(1, 12))
        others = rng.choice(ids, n, replace=False)
        best = rng.integers(0, 8, n) / 4.0
        pieces = [Stripe(others, best)]
        for _ in range(int(rng.integers(0, 3))):
            some = rng.random(n) < 0.5
            lower = best[some] - rng.integers(0, 3, int(some.sum())) / 4.0
            pieces.append(Stripe(others[some], lower))
            again += int(some.sum())
        rng.shuffle(pieces)
        row = merge_rows([Stripe(others, best)], k, limit)
        want.append((doc, row.ids.tolist(), row.values.tolist()))
        got += merger.add(doc, pieces)
    got += merger.flush()
    assert [(d, r.ids.tolist(), r.values.tolist()) for d, r in got] == want
    assert merger.repeats_dropped == again
