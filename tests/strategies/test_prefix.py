"""The prefix strategy: its prefixes hold the first shared feature of every
pair that reaches the threshold (the property exactness rests on), the test
that leaves a pair to its first shared prefix feature, and the job's output:
the bytes of the blocks strategy, for every measure it takes, on drawn
corpora with ties, duplicates, empty vectors and thresholds at a pair's exact
score."""
import json
import uuid

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mrjobs import measures
from mrjobs.counters import PREFIX_ENTRIES_SENT, PREFIX_PAIRS_DROPPED, PREFIX_PAIRS_MET_AGAIN, WORK
from mrjobs.strategies.prefixing import SUPPORTED, prefix_lengths, shared_earlier
from tests import jobs_helpers
from tests.jobs_helpers import corpus

LINES = corpus(n=240, seed=11)
MEASURES = sorted(SUPPORTED)


def _matrix(seed, n, n_feat, density, binary=False, negative=False):
    rng = np.random.default_rng(seed)
    X = sp.random(n, n_feat, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.integers(1, 4, k).astype(float))
    if negative:
        X.data *= rng.choice([-1.0, 1.0], X.data.shape[0])
    X.sort_indices()
    keep = np.diff(X.indptr) > 0
    return X[keep]


def _prefixes(measure, threshold, X):
    """Each vector's prefix features (a set of columns), as the job finds them:
    entries in the order (df, column), prefix lengths from prefix_lengths."""
    lengths = np.diff(X.indptr)
    w, stats = measures.prepare_rows(measure, X.data, lengths)
    df = np.bincount(X.indices, minlength=X.shape[1])
    row = np.repeat(np.arange(X.shape[0]), lengths)
    order = np.lexsort((X.indices, df[X.indices], row))
    p = prefix_lengths(measure, threshold, lengths, w[order], stats)
    cols = X.indices[order]
    starts = X.indptr[:-1]
    return [set(cols[s:s + k].tolist()) for s, k in zip(starts, p)], w, stats, df


def _scores(measure, X, w, stats):
    P = sp.csr_matrix((w, X.indices, X.indptr), shape=X.shape)
    D = (P @ P.T).toarray()
    a = None if stats is None else stats[:, None]
    b = None if stats is None else stats[None, :]
    with np.errstate(all="ignore"):
        return measures.score(measure, D, a, b)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(measure=st.sampled_from(MEASURES), seed=st.integers(0, 2**32 - 1),
       negative=st.booleans(), at_a_score=st.booleans(), t=st.floats(0.05, 0.95))
def test_the_first_shared_feature_of_a_kept_pair_is_in_both_prefixes(
        measure, seed, negative, at_a_score, t):
    X = _matrix(seed, 40, 30, 0.15, negative=negative and measure in ("cosine", "pearson"))
    lengths = np.diff(X.indptr)
    w, stats = measures.prepare_rows(measure, X.data, lengths)
    S = _scores(measure, X, w, stats)
    B = (X != 0).astype(float)
    shared = (B @ B.T).toarray() > 0
    np.fill_diagonal(shared, False)
    if measure == "cooccurrence":
        t = float(np.ceil(t * 4))
    if at_a_score and shared.any():
        t = float(np.sort(S[shared])[len(S[shared]) // 2])  # a pair's exact score
    prefixes, _, _, df = _prefixes(measure, t, X)
    rank = np.lexsort((np.arange(X.shape[1]), df))
    pos = np.empty_like(rank)
    pos[rank] = np.arange(rank.shape[0])
    kept = 0
    for i, j in zip(*np.nonzero(np.triu(shared & (S >= t), 1))):
        common = set(X.indices[X.indptr[i]:X.indptr[i + 1]]) & set(
            X.indices[X.indptr[j]:X.indptr[j + 1]])
        first = min(common, key=lambda c: pos[c])
        assert first in prefixes[i] and first in prefixes[j], (i, j, S[i, j], t)
        kept += 1
    # prefixes are shorter than the vectors where the threshold lets them
    if t >= 0.5 and measure in ("cosine", "jaccard"):
        assert sum(map(len, prefixes)) < X.nnz


def test_prefixes_shorten_as_the_threshold_rises():
    X = _matrix(5, 200, 100, 0.08)
    sizes = [sum(map(len, _prefixes("cosine", t, X)[0])) for t in (0.1, 0.5, 0.9)]
    assert sizes[0] > sizes[1] > sizes[2] > 0
    # a threshold no pair can reach (jaccard > 1): no prefix at all
    assert sum(map(len, _prefixes("jaccard", 1.5, X)[0])) == 0


@pytest.mark.parametrize("whole", [False, True])
def test_a_copy_holds_its_vector_from_its_feature_on(whole):
    """Each copy (side 0) holds its vector's entries from its key feature on
    in the global order (whole: all of them), in UUID order; its side-1
    record names the vector's copies before it."""
    from mrjobs.strategies.prefixing import PrefixBuffer
    X = _matrix(7, 60, 40, 0.12)
    lengths = np.diff(X.indptr)
    w, stats = measures.prepare_rows("cosine", X.data, lengths)
    df = np.bincount(X.indices, minlength=X.shape[1])
    names = np.array([uuid.UUID(int=c + 1).bytes for c in range(X.shape[1])], "S16")
    buf = PrefixBuffer(10 ** 6, np.float64, "cosine", 0.4, whole=whole)
    docs = [uuid.UUID(int=1000 + i).bytes for i in range(X.shape[0])]
    for i, d in enumerate(docs):
        c = X.indices[X.indptr[i]:X.indptr[i + 1]]
        buf.add(d, names[c], w[X.indptr[i]:X.indptr[i + 1]], df[c].astype(float), None)
    prefixes = _prefixes("cosine", 0.4, X)[0]
    rank = np.lexsort((names, df))  # the global order (df, UUID)
    pos = np.empty_like(rank)
    pos[rank] = np.arange(rank.shape[0])
    copies = {}
    for key, block in buf.flush():
        raw = block.ids.tobytes()
        for v, n, s in zip([raw[k:k + 16] for k in range(0, len(raw), 16)],
                           block.lengths.tolist(),
                           np.cumsum(block.lengths) - block.lengths):
            copies.setdefault(block.side, {})[(key, v)] = block.features[s:s + n].tolist()
    assert copies[0]
    for (key, v), held in copies[0].items():
        i = docs.index(v)
        c = X.indices[X.indptr[i]:X.indptr[i + 1]]
        f = int(np.flatnonzero(names == key)[0])
        assert f in prefixes[i]
        want = c if whole else c[pos[c] >= pos[f]]
        assert held == names[want].tolist()  # (UUID order: the columns' order)
        earlier = [g for g in prefixes[i] if pos[g] < pos[f] and df[g] >= 2]
        assert copies.get(1, {}).get((key, v), []) == names[sorted(earlier)].tolist()


@settings(max_examples=100, deadline=None)
@given(sets=st.lists(st.sets(st.integers(0, 9), max_size=4), min_size=1, max_size=8),
       data=st.data())
def test_shared_earlier_is_the_intersection_of_the_sets(sets, data):
    n = len(sets)
    pairs = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                               max_size=20))
    ptr = np.concatenate(([0], np.cumsum([len(s) for s in sets])))
    cols = np.array([c for s in sets for c in sorted(s)], np.int64)
    g = np.array([a for a, _ in pairs], np.int64)
    o = np.array([b for _, b in pairs], np.int64)
    got = shared_earlier(g, o, ptr, cols, 10).tolist()
    assert got == [bool(sets[a] & sets[b]) for a, b in pairs]


# -- the job --------------------------------------------------------------------

def _both(args, lines=LINES, runner="inline"):
    a = jobs_helpers.run(args, lines, strategy="blocks", runner=runner)
    b = jobs_helpers.run(args, lines, strategy="prefix", runner=runner)
    return a, b


def _threshold(measure):
    return {"cooccurrence": "2", "euclidean": "0.3"}.get(measure, "0.3")


@pytest.mark.slow
@pytest.mark.smoke
@pytest.mark.parametrize("measure", MEASURES)
def test_the_output_is_the_bytes_of_the_blocks_strategy(measure):
    a, b = _both(["--measure", measure, "--threshold", _threshold(measure)])
    assert a.lines, "a test that compares nothing"
    assert b.lines == a.lines
    assert b.counters[WORK][PREFIX_ENTRIES_SENT] > 0


@pytest.mark.slow
@pytest.mark.parametrize("extra", [["--top-k", "3"], ["--include-self"], ["--float32"],
                                   ["--max-df", "20"], ["--threshold", "0.9"],
                                   ["--threshold", "0"], ["--no-prune"]])
@pytest.mark.parametrize("measure", ["cosine", "jaccard", "tanimoto"])
def test_the_options_give_the_bytes_of_the_blocks_strategy(measure, extra):
    args = ["--measure", measure, "--threshold", _threshold(measure)] + extra
    a, b = _both(args)
    assert b.lines == a.lines


@pytest.mark.parametrize("negative", [False, True], ids=["weights >= 0", "a weight < 0"])
def test_a_pair_met_at_several_prefix_features_is_written_once(negative):
    # two vectors equal on three features: at threshold 0.5 all three are in
    # both prefixes (the last one's suffix norm is 0.577); the pair comes out
    # once a direction: met again at the later two, where it reaches the
    # threshold at the second alone (from it on the copies' dot is 2/3, from
    # the third on 1/3) and is merged by the rows step; or, where a weight of
    # the input is negative, dropped at both (the copies carry their earlier
    # prefix features)
    f = [uuid.UUID(int=0xF0 + i) for i in range(3)]
    lines = [json.dumps({"id": str(uuid.UUID(int=i + 1)),
                         "features": {str(x): 1.0 for x in f}}) for i in range(2)]
    lines.append(json.dumps({"id": str(uuid.UUID(int=9)), "features": {str(f[0]): 1.0}}))
    if negative:
        lines.append(json.dumps({"id": str(uuid.UUID(int=10)),
                                 "features": {str(uuid.UUID(int=0xFF)): -1.0}}))
    a, b = _both(["--measure", "cosine", "--threshold", "0.5"], lines)
    assert b.lines == a.lines and len(a.lines) == 3
    work = b.counters[WORK]
    assert work.get(PREFIX_PAIRS_MET_AGAIN, 0) == (0 if negative else 2)
    assert (work.get(PREFIX_PAIRS_DROPPED, 0) > 0) == negative


@pytest.mark.slow
@pytest.mark.smoke
def test_the_local_runner_gives_the_same_bytes():
    args = ["--measure", "cosine", "--threshold", "0.3", "--strategy", "prefix"]
    a = jobs_helpers.run(args, LINES)
    b = jobs_helpers.run(args, LINES, runner="local")
    assert a.lines and b.lines == a.lines


@st.composite
def _corpora(draw):
    """Small corpora with ties: repeated vectors (under other ids), an id on
    two lines (merged), empty vectors, weights from a few values (negative
    ones in some corpora: then the copies carry their earlier features)."""
    n_feat = draw(st.integers(1, 10))
    values = [1.0, 2.0, 0.5, 3.0] + ([-1.0, -0.5] if draw(st.booleans()) else [])
    vec = st.dictionaries(st.integers(0, n_feat - 1), st.sampled_from(values), max_size=6)
    vecs = draw(st.lists(vec, min_size=2, max_size=25))
    vecs += [vecs[i] for i in draw(st.lists(st.integers(0, len(vecs) - 1), max_size=4))]
    ids = list(range(1, len(vecs) + 1))
    if draw(st.booleans()):
        ids[-1] = ids[0]  # one id on two lines
    return [json.dumps({"id": str(uuid.UUID(int=i)),
                        "features": {str(uuid.UUID(int=0xF000 + f)): w for f, w in v.items()}})
            for i, v in zip(ids, vecs)]


@pytest.mark.slow
@pytest.mark.smoke
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=_corpora(), measure=st.sampled_from(["cosine", "jaccard", "tanimoto", "overlap"]),
       pick=st.floats(0, 1), top_k=st.sampled_from([None, 1, 2]))
def test_drawn_corpora_give_the_bytes_of_the_blocks_strategy(lines, measure, pick, top_k):
    _check_at_a_pairs_score(lines, measure, pick, top_k)


def _check_at_a_pairs_score(lines, measure, pick, top_k):
    """Both strategies' lines at a threshold on a pair's exact score, as the
    blocks strategy gives it (``pick``: where among the scores)."""
    full = jobs_helpers.run(["--measure", measure], lines, strategy="blocks")
    scores = sorted({s for _, row in full.output for s in row.values()})
    t = scores[int(pick * (len(scores) - 1))] if scores else 0.5
    args = ["--measure", measure, "--threshold", repr(t)] + (
        ["--top-k", str(top_k)] if top_k else [])
    a, b = _both(args, lines)
    assert b.lines == a.lines


@pytest.mark.parametrize("args, words", [
    (["--measure", "cosine"], "prefix needs --threshold"),
    (["--measure", "dot", "--threshold", "1"], "does not take --measure dot"),
    (["--measure", "correlation", "--num-features", "9", "--threshold", "0.5"],
     "does not take --measure correlation"),
    (["--measure", "cosine", "--threshold", "0.5", "--queries", "q.jsonl"],
     "does not take --queries"),
])
def test_what_the_strategy_cannot_take_is_refused(args, words):
    from mrjobs.dot_products import MRSparseDotProducts
    with pytest.raises(ValueError, match=words):
        MRSparseDotProducts(args + ["--strategy", "prefix"])


def test_the_command_line_refuses_in_one_line():
    import subprocess
    import sys
    p = subprocess.run([sys.executable, "-m", "mrjobs.dot_products", "--strategy", "prefix",
                        "--measure", "cosine", "-"], input="", capture_output=True,
                       text=True)
    assert p.returncode == 2 and "prefix needs --threshold" in p.stderr
    assert "Traceback" not in p.stderr


def test_a_threshold_no_pair_can_reach_says_so():
    from mrjobs.counters import PREFIX_NOWHERE, run_report
    run = jobs_helpers.run(["--measure", "cosine", "--threshold", "1.5"], LINES,
                           strategy="prefix")
    assert not run.lines
    assert run.counters[WORK][PREFIX_NOWHERE] > 0
    report = run_report([run.counters])
    assert "no pair reached --threshold" in report and "had no pair able to reach it" in report


# -- features held by many vectors: split into parts -----------------------------

@pytest.fixture
def hot(monkeypatch):
    """Every feature held by more than 3 vectors split (HOT_VECTORS = 3)."""
    from mrjobs.strategies import prefixing
    monkeypatch.setattr(prefixing, "HOT_VECTORS", 3)


@pytest.mark.parametrize("extra", [[], ["--top-k", "2"], ["--include-self"]])
@pytest.mark.parametrize("measure", ["cosine", "jaccard"])
def test_split_features_give_the_bytes_of_the_blocks_strategy(hot, measure, extra):
    from mrjobs.counters import PREFIX_PART_PAIRS
    a, b = _both(["--measure", measure, "--threshold", "0.2"] + extra)
    assert a.lines and b.lines == a.lines
    assert b.counters[WORK][PREFIX_PART_PAIRS] > 0  # pairs met in two parts' groups


def test_a_split_copy_goes_to_every_pair_of_parts_once():
    from mrjobs.strategies import prefixing
    feature = np.array([bytes(range(16))], "S16")
    ids = np.array([uuid.UUID(int=i).bytes for i in range(1, 6)], "S16")
    df = np.full(5, 3 * prefixing.HOT_VECTORS)  # three parts
    keys = np.repeat(feature, 5)
    idx, out = prefixing._split_copies(keys, np.arange(5), ids, df)
    assert idx.tolist() == sorted(list(range(5)) * 3)
    for i in range(5):
        splits = [prefixing.split_of(k.ljust(16, b"\0")) for k in out[idx == i].tolist()]
        part = prefixing.sub_blocks(ids[i:i + 1], 3)[0]
        # the vector's part paired with each part, as (s, smaller, larger)
        assert sorted(splits) == sorted((3, min(part, b), max(part, b)) for b in range(3))
    # the keys name the feature by its hash: features alike in their first
    # bytes (sequential ids) get keys of their own
    other = np.repeat(np.array([bytes(range(15)) + b"\x63"], "S16"), 5)
    _, out2 = prefixing._split_copies(other, np.arange(5), ids, df)
    assert not set(out.tolist()) & set(out2.tolist())
    # a feature whose own id reads as a split key is sent as a split of one part
    odd = np.array([bytes(9) + bytes([254]) + bytes(6)], "S16")
    _, out = prefixing._split_copies(odd, np.arange(1), ids[:1], np.array([2]))
    assert prefixing.split_of(out[0].ljust(16, b"\0")) == (1, 0, 0)


def test_a_split_key_that_names_two_features_stops_the_run():
    from mrjobs.strategies import prefixing
    f = np.array([bytes(range(16)), bytes(range(1, 17))], "S16")
    key = prefixing.feature_hash(f[0].tobytes()) + bytes([254, 0, 2, 0, 0, 0, 1])
    assert prefixing.split_feature(key, f) == f[0].tobytes()
    with pytest.raises(ValueError, match="names 0 features"):
        prefixing.split_feature(key, f[1:])


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(lines=_corpora(), measure=st.sampled_from(["cosine", "jaccard"]), pick=st.floats(0, 1),
       top_k=st.sampled_from([None, 1]))
def test_drawn_corpora_with_split_features(hot, lines, measure, pick, top_k):
    _check_at_a_pairs_score(lines, measure, pick, top_k)
