"""numpy kernels shared by the jobs: sorting ids, summing by id, top-k.

Ids are ``S16`` arrays (16 big-endian UUID bytes each); numpy compares them
as unsigned bytes, so a stable argsort sorts them in UUID order.  Nothing
here loops over entries in Python.
"""
import numpy as np

__all__ = ["sort_sum", "group_starts", "top_k_order", "top_k_groups"]


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
    by_id = cand[np.argsort(ids[cand], kind="stable")]
    order = by_id[np.argsort(-scores[by_id], kind="stable")]
    return order if k is None else order[:k]


def top_k_groups(groups, others, scores, k=None):
    """Indices of each group's best entries, grouped: groups ascending, then
    score descending, ties by ``others`` ascending; at most ``k`` per group.

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
    order = np.lexsort((others, -scores, groups))
    if k is None or order.shape[0] == 0:
        return order
    g = groups[order]
    starts = group_starts(g)
    first = np.repeat(starts, np.diff(np.append(starts, g.shape[0])))
    return order[np.arange(g.shape[0]) - first < k]
