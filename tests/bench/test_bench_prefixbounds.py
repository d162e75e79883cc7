"""bench.prefixbounds on a small corpus: a tighter bound never sends more,
sending from the copy's feature on never more than whole vectors, and the
k-th best cosine is a dense product's."""
import numpy as np

from bench import prefixbounds

SAMPLE = "examples/sample.jsonl"


def test_tighter_bounds_send_no_more():
    m, names = prefixbounds.unit_rows(SAMPLE)
    for t in (0.3, 0.6):
        got = prefixbounds.copies(m, names, t)
        assert got["maxweight"][0] <= got["norm"][0]
        assert got["maxweight, hapax 0"][0] <= got["maxweight"][0]
        for n, sent, truncated in got.values():
            assert truncated <= sent and (n == 0) == (sent == 0)
    low, high = (prefixbounds.copies(m, names, t)["norm"][0] for t in (0.3, 0.6))
    assert high < low


def test_the_kth_best_is_a_dense_products():
    m, _ = prefixbounds.unit_rows(SAMPLE)
    dense = (m @ m.T).toarray()
    np.fill_diagonal(dense, -np.inf)
    kth = prefixbounds.kth_best(m, 3, chunk=50)
    for i in (0, 7, 100):
        row = dense[i][np.isfinite(dense[i]) & (dense[i] != 0)]
        want = np.sort(row)[-3] if row.shape[0] >= 3 else 0.0
        assert kth[i] == want
