"""Every measure of the registry through the dot-products job, under both
strategies, against the independent references of tests/measures/test_measures.py
(scipy.spatial.distance, numpy, Dunning's entropies)."""
import numpy as np
import pytest

from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.measures import MEASURES, get
from mrjobs.testing import run_job
from tests.jobs_helpers import corpus, read_corpus
from tests.measures.test_measures import pearson_undefined, reference

LINES = corpus(n=90, fpv=6, vocab=200, seed=21)
DOCS, X, FEATS = read_corpus(LINES)
DENSE = X.toarray()


def expected(measure, include_self=False):
    with np.errstate(divide="ignore", invalid="ignore"):  # empty vectors: no scores
        S = reference(measure, DENSE)
    shared = (DENSE != 0).astype(float) @ (DENSE != 0).T.astype(float) > 0
    ok = ~pearson_undefined(DENSE) if measure == "pearson" else np.ones(len(DOCS), bool)
    out = {}
    for i, d in enumerate(DOCS):
        if not ok[i]:
            continue
        row = {DOCS[j]: float(S[i, j]) for j in np.flatnonzero(shared[i])
               if ok[j] and (include_self or j != i)}
        if row:
            out[d] = row
    return out


def args_of(measure):
    if get(measure).needs_n_features:
        return ["--measure", measure, "--num-features", str(len(FEATS))]
    return ["--measure", measure]


def check(result, want):
    got = dict(result.output)
    assert set(got) == set(want)
    for d, row in want.items():
        assert set(got[d]) == set(row), d
        np.testing.assert_allclose([got[d][n] for n in row], list(row.values()),
                                   rtol=1e-9, atol=1e-12, err_msg=str(d))


@pytest.mark.parametrize("strategy", ["blocks", "stripes"])
@pytest.mark.parametrize("measure", MEASURES)
@pytest.mark.slow
@pytest.mark.smoke
def test_every_measure_matches_its_reference(measure, strategy):
    result = run_job(MRSparseDotProducts, LINES,
                     args_of(measure) + ["--strategy", strategy]
                     + (["--blocks", "3"] if strategy == "blocks" else []))
    check(result, expected(measure))
    if measure == "pearson" and pearson_undefined(DENSE).any():
        assert result.counters["mrsparse input"][
            "vector not scorable by the measure (skipped; e.g. constant weights for pearson)"
        ] == int(pearson_undefined(DENSE).sum())


@pytest.mark.parametrize("measure, strategy", [("pearson", "blocks"),
                                               ("loglikelihood", "stripes"),
                                               ("euclidean", "blocks")])
@pytest.mark.slow
def test_local_runner(measure, strategy):
    result = run_job(MRSparseDotProducts, LINES,
                     args_of(measure) + ["--strategy", strategy], runner="local")
    check(result, expected(measure))


def test_loglikelihood_without_num_features_is_refused():
    with pytest.raises(ValueError, match="loglikelihood needs --num-features N"):
        MRSparseDotProducts(["--measure", "loglikelihood"])


# a corpus whose count tables give loglikelihood's (x, y) and (y, x) orders
# different last bits in a sum that follows the cells' order
WIDE = corpus(n=400, fpv=12, vocab=600, seed=5)


@pytest.mark.parametrize("measure", MEASURES)
@pytest.mark.slow
def test_every_measure_gives_the_same_bytes_for_any_blocks(measure):
    # --blocks decides which vector of a pair is its row: the scores may not
    # depend on it
    args = args_of(measure)
    if get(measure).needs_n_features:
        args = ["--measure", measure, "--num-features", str(len(read_corpus(WIDE)[2]))]
    one = run_job(MRSparseDotProducts, WIDE, args + ["--blocks", "1", "--top-k", "20"])
    four = run_job(MRSparseDotProducts, WIDE, args + ["--blocks", "4", "--top-k", "20"])
    assert one.lines and one.lines == four.lines
