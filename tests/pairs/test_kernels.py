"""The selection kernels of mrjobs.pairs.idarrays against plain Python references:
each group's k best (score descending, ties by smaller other), with ties,
-0.0, groups of every size around k, integer and S16 keys."""
import numpy as np
import pytest

from mrjobs.pairs.idarrays import (group_order, order_within_groups, top_k_candidates,
                            top_k_groups, top_k_order)


def _reference_groups(groups, others, scores, k):
    """Indices ordered by (group, -score, other), at most k a group."""
    idx = sorted(range(len(scores)), key=lambda i: (groups[i], -scores[i], others[i]))
    out, count = [], {}
    for i in idx:
        count[groups[i]] = count.get(groups[i], 0) + 1
        if k is None or count[groups[i]] <= k:
            out.append(i)
    return out


def _reference_order(ids, scores, k):
    idx = sorted(range(len(scores)), key=lambda i: (-scores[i], ids[i]))
    return idx if k is None else idx[:k]


def _data(rng, n, n_groups, ties):
    groups = rng.integers(0, n_groups, n)
    others = rng.permutation(4 * n + 1)[:n]
    if ties:
        scores = rng.integers(-2, 3, n).astype(float)
        scores[rng.random(n) < 0.2] = -0.0
    else:
        scores = rng.random(n)
    return groups, others, scores


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [None, 1, 2, 3, 7, 50, 1000])
@pytest.mark.parametrize("ties", [False, True])
def test_top_k_groups_matches_the_reference(seed, k, ties):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 600))
    groups, others, scores = _data(rng, n, int(rng.integers(1, 40)), ties)
    got = top_k_groups(groups, others, scores, k).tolist()
    assert got == _reference_groups(groups.tolist(), others.tolist(), scores.tolist(), k)


@pytest.mark.parametrize("k", [1, 3, 10])
def test_top_k_groups_with_s16_keys_and_float32_scores(k):
    rng = np.random.default_rng(7)
    n = 500
    pool = np.frombuffer(rng.bytes(16 * 20), "S16")
    groups = pool[rng.integers(0, 20, n)]
    others = np.frombuffer(rng.bytes(16 * n), "S16")
    scores = rng.integers(0, 4, n).astype(np.float32)
    got = top_k_groups(groups, others, scores, k).tolist()
    assert got == _reference_groups(groups.tolist(), others.tolist(), scores.tolist(), k)


def test_top_k_groups_of_groups_of_every_size_around_k():
    # sizes k - 1 .. k + 2 and far larger, in the same call: several size classes
    k = 4
    sizes = [1, 3, 4, 5, 6, 9, 17, 33, 200]
    groups = np.repeat(np.arange(len(sizes))[::-1], sizes)
    rng = np.random.default_rng(3)
    others = rng.permutation(groups.shape[0])
    scores = rng.integers(0, 3, groups.shape[0]).astype(float)
    got = top_k_groups(groups, others, scores, k).tolist()
    assert got == _reference_groups(groups.tolist(), others.tolist(), scores.tolist(), k)


def test_top_k_groups_with_nan_and_infinite_scores_keeps_the_sort_order():
    groups = np.array([0, 0, 0, 0, 1, 1])
    others = np.array([1, 2, 3, 4, 5, 6])
    scores = np.array([np.inf, 1.0, -np.inf, np.nan, -np.inf, -np.inf])
    expected = np.lexsort((others, -scores, groups))
    assert top_k_groups(groups, others, scores).tolist() == expected.tolist()
    assert top_k_groups(groups, others, scores, 2).tolist() == [0, 1, 4, 5]
    finite_inf = top_k_groups(groups[:3], others[:3], scores[:3], 1).tolist()
    assert finite_inf == [0]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [1, 2, 5, 40, 100])
def test_top_k_candidates_holds_the_k_best_and_whatever_ties_the_kth(seed, k):
    rng = np.random.default_rng(seed)
    groups, _, scores = _data(rng, 400, 12, ties=seed % 2 == 1)
    order = group_order(groups)
    g, s = groups[order], scores[order]
    starts = np.flatnonzero(np.append(True, g[1:] != g[:-1]))
    keep = top_k_candidates(starts, s, k)
    sizes = np.diff(np.append(starts, g.shape[0]))
    if keep is None:
        assert sizes.max() <= k
        return
    assert sizes.max() > k
    for a, b in zip(starts, np.append(starts[1:], g.shape[0])):
        seg = s[a:b]
        kth = np.sort(seg)[::-1][min(k, b - a) - 1]
        assert keep[a:b].tolist() == (seg >= kth).tolist()


def test_top_k_candidates_is_none_when_no_group_exceeds_k():
    assert top_k_candidates(np.array([0, 2]), np.array([1.0, 2.0, 3.0]), 2) is None


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8])
def test_group_order_is_a_stable_sort(dtype):
    rng = np.random.default_rng(5)
    for high in (3, 70_000 if dtype != np.uint8 else 200):
        groups = rng.integers(0, high, 1000).astype(dtype)
        assert group_order(groups).tolist() == np.argsort(groups, kind="stable").tolist()
    negative = np.array([2, -1, 2, 0])
    assert group_order(negative).tolist() == [1, 3, 0, 2]


def test_order_within_groups_keeps_groups_in_place():
    starts = np.array([0, 3, 4])
    others = np.array([9, 8, 7, 1, 6, 5, 4])
    scores = np.array([1.0, 2.0, 1.0, 5.0, -0.0, 0.0, 3.0])
    assert order_within_groups(starts, others, scores).tolist() == [1, 2, 0, 3, 6, 5, 4]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [None, 1, 3, 10, 1000])
def test_top_k_order_matches_the_reference(seed, k):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 400))
    ids = np.frombuffer(rng.bytes(16 * n), "S16")
    scores = (rng.integers(-2, 3, n).astype(float) if seed % 2 else rng.random(n))
    if n and seed % 3 == 0:
        scores[0], scores[-1] = -0.0, 0.0
    got = top_k_order(ids, scores, k).tolist()
    assert got == _reference_order(ids.tolist(), scores.tolist(), k)
