"""numpy kernels shared by the jobs: sorting ids, summing by id, top-k.

Ids are ``S16`` arrays (16 big-endian UUID bytes each); numpy compares them
as unsigned bytes, so a stable argsort sorts them in UUID order.  Nothing
here loops over entries in Python.
"""
import numpy as np

__all__ = ["sort_sum", "merge_sum", "group_starts", "group_order", "top_k_order",
           "top_k_groups", "top_k_candidates"]


def group_starts(sorted_ids):
    """Indices where a new id begins in a sorted array (``S16`` ids, or any
    other keys).

    Examples
    --------
    >>> import numpy as np
    >>> group_starts(np.array([b"a", b"a", b"b"], dtype="S16")).tolist()
    [0, 2]
    """
    n = sorted_ids.shape[0]
    if n == 0:
        return np.empty(0, np.intp)
    new = np.empty(n, bool)
    new[0] = True
    np.not_equal(sorted_ids[1:], sorted_ids[:-1], out=new[1:])
    return np.flatnonzero(new)


def sort_sum(ids, values, stats=None):
    """Sort by id and sum the values of repeated ids (in float64).

    Parameters
    ----------
    ids : numpy.ndarray
        ``S16`` ids, any order, repeats allowed.
    values : numpy.ndarray
        One number per id.
    stats : numpy.ndarray or None
        One statistic per id; equal for equal ids, so the first is kept.

    Returns
    -------
    (ids, values, stats, repeats)
        Sorted unique ids, float64 sums, the matching stats (or None) and
        the number of entries merged away.

    Examples
    --------
    >>> import numpy as np
    >>> i, v, s, r = sort_sum(np.array([b"b", b"a", b"b"], dtype="S16"), np.array([1., 2., 3.]))
    >>> i.tolist(), v.tolist(), r
    ([b'a', b'b'], [2.0, 4.0], 1)
    """
    n = ids.shape[0]
    values = values.astype(np.float64, copy=False)
    if n <= 1:
        return ids, values, stats, 0
    order = np.argsort(ids, kind="stable")
    ids = ids[order]
    values = values[order]
    starts = group_starts(ids)
    if starts.shape[0] == n:
        return ids, values, None if stats is None else stats[order], 0
    values = np.add.reduceat(values, starts)
    stats = None if stats is None else stats[order][starts]
    return ids[starts], values, stats, n - starts.shape[0]


def merge_sum(ids, values, stats=None):
    """Sum the values of repeated ids in a canonical order -- by id, then by
    value -- so that the sums do not depend on the order the entries came
    in (the order of a shuffle); in float64, overflow to +-inf left for the
    caller to count.  How the lines of a duplicate vector id are merged.

    Parameters
    ----------
    ids : numpy.ndarray
        ``S16`` ids, any order, repeats allowed.
    values : numpy.ndarray
        One number per id.
    stats : numpy.ndarray or None
        One statistic per id; equal for equal ids, so the first is kept.

    Returns
    -------
    (ids, values, stats, sizes)
        Sorted unique ids, float64 sums (``inf`` where a sum overflows), the
        matching stats (or None) and the number of entries summed into each.

    Examples
    --------
    >>> import numpy as np
    >>> i, v, s, n = merge_sum(np.array([b"b", b"a", b"b", b"b"], dtype="S16"),
    ...                        np.array([1e16, 2., 1., -1e16]))
    >>> i.tolist(), v.tolist(), n.tolist()
    ([b'a', b'b'], [2.0, 0.0], [1, 3])
    """
    values = values.astype(np.float64, copy=False)
    n = ids.shape[0]
    order = np.argsort(ids, kind="stable")
    starts = group_starts(ids[order])
    if starts.shape[0] == n:  # no repeats (the common case): one sort
        return ids[order], values[order], None if stats is None else stats[order], \
            np.ones(n, np.intp)
    order = np.lexsort((values, ids))
    ids, values = ids[order], values[order]
    sizes = np.diff(np.append(starts, n))
    with np.errstate(over="ignore", invalid="ignore"):
        values = np.add.reduceat(values, starts)
    return ids[starts], values, None if stats is None else stats[order][starts], sizes


def top_k_order(ids, scores, k=None):
    """Indices of the best entries: score descending, ties by id ascending.

    Parameters
    ----------
    ids, scores : numpy.ndarray
        ``S16`` ids and float scores, same length.
    k : int or None
        Keep at most ``k`` indices (all if None).

    Examples
    --------
    >>> import numpy as np
    >>> ids = np.array([b"c", b"a", b"b"], dtype="S16")
    >>> top_k_order(ids, np.array([1.0, 2.0, 2.0]), 2).tolist()
    [1, 2]
    """
    n = scores.shape[0]
    if k is not None and k < n:
        # argpartition narrows the candidates to those tied with the k-th
        # score or better; the exact, tie-broken order is then sorted.
        kth = np.partition(-scores, k - 1)[k - 1]
        cand = np.flatnonzero(-scores <= kth)
    else:
        cand = np.arange(n)
    if cand.shape[0] and not np.isnan(scores[cand]).any():
        # sorted by score; only runs of equal scores are sorted by id
        cand_scores = scores[cand]
        by_score = np.argsort(-cand_scores)
        order = cand[_break_ties(by_score, np.zeros(1, np.intp), ids[cand], cand_scores)]
    else:
        by_id = cand[np.argsort(ids[cand], kind="stable")]
        order = by_id[np.argsort(-scores[by_id], kind="stable")]
    return order if k is None else order[:k]


def top_k_groups(groups, others, scores, k=None):
    """Indices of each group's best entries, grouped: groups ascending, then
    score descending, ties by ``others`` ascending; at most ``k`` per group.

    The same indices as ``numpy.lexsort((others, -scores, groups))`` cut to
    ``k`` a group, in about linear time: the entries are grouped (a radix
    sort for small integer groups), each group's ``k``-th best score is
    found by ``numpy.partition`` and only the entries tied with it or better
    are ordered, group by group (:func:`top_k_candidates`,
    :func:`order_within_groups`).

    Parameters
    ----------
    groups, others : numpy.ndarray
        Group keys and the entries' own ids (``S16`` or integers whose order
        is the ids' order), same length.
    scores : numpy.ndarray
        Float scores.
    k : int or None
        Keep at most ``k`` entries per group (all if None).

    Examples
    --------
    >>> import numpy as np
    >>> g = np.array([1, 0, 1, 1, 0]); o = np.array([5, 6, 4, 3, 2])
    >>> top_k_groups(g, o, np.array([1.0, 2.0, 2.0, 1.0, 2.0]), 2).tolist()
    [4, 1, 2, 3]
    """
    n = scores.shape[0]
    if n == 0 or np.isnan(scores).any():
        order = np.lexsort((others, -scores, groups))
    else:
        order = group_order(groups)
        starts = group_starts(groups[order])
        if k is not None and n > k:
            keep = top_k_candidates(starts, scores[order], k)
            if keep is not None:
                order = order[keep]
                starts = group_starts(groups[order])
        order = order[order_within_groups(starts, others[order], scores[order])]
    if k is None or not order.shape[0]:
        return order
    g = groups[order]
    starts = group_starts(g)
    first = np.repeat(starts, np.diff(np.append(starts, g.shape[0])))
    return order[np.arange(g.shape[0]) - first < k]


def _size_classes(sizes, which):
    """For each class of groups whose sizes are within a factor of two (of
    the groups ``which`` selects): (group indices, width, slot of each group
    in the class or -1)."""
    cls = np.frexp(np.maximum(sizes - 1, 0).astype(np.float64))[1]
    for c in np.unique(cls[which]).tolist():
        sel = np.flatnonzero(which & (cls == c))
        slot = np.full(sizes.shape[0], -1)
        slot[sel] = np.arange(sel.shape[0])
        yield sel, int(sizes[sel].max()), slot


def _padded(starts, sizes, values, fill, which):
    """Yield (groups, array, group of each entry) by size classes of the
    groups ``which`` selects: one 2-D array a class, one row per group (its
    values, then ``fill``)."""
    n = values.shape[0]
    entry_group = np.repeat(np.arange(sizes.shape[0]), sizes)
    pos = np.arange(n) - starts[entry_group]
    for sel, width, slot in _size_classes(sizes, which):
        member = slot[entry_group] >= 0
        dense = np.full((sel.shape[0], width), fill, dtype=values.dtype)
        dense[slot[entry_group[member]], pos[member]] = values[member]
        yield sel, dense, entry_group


def top_k_candidates(starts, scores, k):
    """Mask of the grouped entries (groups begin at ``starts``) that score at
    least their group's ``k``-th best score (every entry of a group of at
    most ``k``); None when no group has more than ``k`` entries.

    Each group's ``k``-th best is found by ``numpy.partition`` in linear
    time; groups of similar sizes (within a factor of two) share one padded
    array, so there is no Python loop over groups.  Scores must not be NaN.

    Examples
    --------
    >>> import numpy as np
    >>> top_k_candidates(np.array([0, 2]), np.array([2.0, 2.0, 3.0, 0.5, 3.0, 1.0]), 1).tolist()
    [True, True, True, False, True, False]
    """
    n = scores.shape[0]
    sizes = np.diff(np.append(starts, n))
    big = sizes > k
    if not big.any():
        return None
    kth = np.full(sizes.shape[0], -np.inf)
    for sel, dense, entry_group in _padded(starts, sizes, scores, -np.inf, big):
        width = dense.shape[1]
        kth[sel] = np.partition(dense, width - k, axis=1)[:, width - k]
    return scores >= kth[entry_group]


def order_within_groups(starts, others, scores):
    """The permutation that orders each group of grouped entries (groups
    begin at ``starts``) by score descending, ties by ``others`` ascending,
    the groups staying in place.

    Each group is sorted on its own (one padded array per size class, sorted
    along its rows); only runs of equal scores are then sorted by ``others``.

    Examples
    --------
    >>> import numpy as np
    >>> order_within_groups(np.array([0, 2]), np.array([1, 0, 3, 2, 1]),
    ...                     np.array([1.0, 2.0, 0.5, 0.7, 0.7])).tolist()
    [1, 0, 4, 3, 2]
    """
    n = scores.shape[0]
    sizes = np.diff(np.append(starts, n))
    out = np.empty(n, np.intp)
    cols = None
    for sel, dense, _ in _padded(starts, sizes, -scores.astype(np.float64), np.inf,
                                  sizes > 0):
        idx = np.argsort(dense, axis=1)
        valid = idx < sizes[sel][:, None]
        if cols is None or cols.shape[0] < dense.shape[1]:
            cols = np.arange(max(dense.shape[1], 1))
        dest = (starts[sel][:, None] + cols[:dense.shape[1]])[
            cols[:dense.shape[1]] < sizes[sel][:, None]]
        out[dest] = (starts[sel][:, None] + idx)[valid]
    return _break_ties(out, starts, others, scores)


def _break_ties(order, starts, others, scores):
    """``order`` with each run of equal scores within a group sorted by
    ``others``."""
    s = scores[order]
    tie = s[1:] == s[:-1]
    if not tie.any():
        return order
    new_group = np.zeros(s.shape[0], bool)
    new_group[starts] = True
    tie &= ~new_group[1:]
    if not tie.any():
        return order
    in_run = np.zeros(s.shape[0], bool)
    in_run[1:] |= tie
    in_run[:-1] |= tie
    run = np.cumsum(np.append(True, ~tie))  # a run id per position
    pos = np.flatnonzero(in_run)
    sub = order[pos]
    order = order.copy()
    order[pos] = sub[np.lexsort((others[sub], run[pos]))]
    return order


def group_order(groups):
    """A stable argsort of group keys: a radix sort when they are small
    non-negative integers (up to 2^16), where numpy's stable sort of wider
    integers is a merge sort.

    >>> import numpy as np
    >>> group_order(np.array([3, 1, 3, 0])).tolist()
    [3, 1, 0, 2]
    """
    if (groups.dtype.kind in "iu" and groups.shape[0]
            and groups.min() >= 0 and groups.max() < 1 << 16):
        groups = groups.astype(np.uint16)
    return np.argsort(groups, kind="stable")
