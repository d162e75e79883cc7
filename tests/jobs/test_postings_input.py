"""--input-format postings: the inverted index's compact posting lists feed the
dot-products job, which gives the lines it gives from the vectors themselves.

The posting lists are the index job's own output (``--output-format compact``),
so what is tested is the chain a user runs: index once, products from it."""
import os
import tempfile
import uuid

import pytest

from mrcodecs import SparseVector, VectorProtocol
from mrjobs.counters import (DUPLICATE_FEATURE, DUPLICATE_VECTOR_LINES, EMPTY_POSTING_LIST, INPUT,
                             POSTING_LISTS_READ, QUERY_VECTORS_READ, VECTORS_READ)
from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.inverted_index import MRInvertedIndex
from mrjobs.parsing import BAD_LINE, BAD_ORDER, POSTINGS, InputError
from mrjobs.strategies.sizing import (COMPACT_BYTES_PER_ENTRY, INPUT_BYTES_PER_ENTRY,
                                      bytes_per_entry, data_first_line)
from mrjobs.testing import run_job, write_lines
from tests.jobs_helpers import corpus

LINES = corpus(n=150)
QUERIES = LINES[10:40]  # vectors of the corpus as queries: they share its features


def postings(lines, args=(), runner="inline"):
    """The index job's compact posting lists of ``lines``."""
    return run_job(MRInvertedIndex, lines, ["--output-format", "compact"] + list(args),
                   runner=runner).lines


def from_postings(lines, args, runner="inline", index_args=()):
    return run_job(MRSparseDotProducts, postings(lines, index_args),
                   list(args) + ["--input-format", POSTINGS], runner=runner)


@pytest.mark.parametrize("args", [
    ["--top-k", "5"],
    ["--measure", "jaccard", "--threshold", "0.2"],
    ["--measure", "pearson", "--top-k", "3", "--float32"],
    ["--measure", "euclidean", "--threshold", "-3", "--include-self"],
    ["--measure", "cosine", "--top-k", "4", "--max-df", "10"],
    ["--measure", "cosine", "--top-k", "4", "--output-format", "compact"],
])
@pytest.mark.parametrize("strategy", ["blocks", "stripes"])
@pytest.mark.slow
@pytest.mark.smoke
def test_products_from_the_index_are_the_products_from_the_vectors(strategy, args):
    args = args + ["--strategy", strategy]
    from_vectors = run_job(MRSparseDotProducts, LINES, args)
    run = from_postings(LINES, args)
    assert from_vectors.lines and run.lines == from_vectors.lines


def test_counters_say_what_was_read():
    index = postings(LINES)
    run = run_job(MRSparseDotProducts, index, ["--input-format", POSTINGS, "--top-k", "2"])
    docs = {d for line in index for d in VectorProtocol().read(line)[1].to_dict()}
    assert run.counters[INPUT][POSTING_LISTS_READ] == len(index)
    assert run.counters[INPUT][VECTORS_READ] == len(docs)
    # pieces of one vector from several posting lists are not duplicate lines
    assert DUPLICATE_VECTOR_LINES not in run.counters[INPUT]


@pytest.mark.parametrize("strategy", ["blocks", "stripes"])
@pytest.mark.slow
def test_queries_from_posting_lists(strategy):
    args = ["--top-k", "3", "--strategy", strategy]
    with_vectors = _with_queries(LINES, QUERIES, args, postings_too=False)
    with_postings = _with_queries(LINES, QUERIES, args, postings_too=True)
    assert with_vectors.lines and with_postings.lines == with_vectors.lines
    assert with_postings.counters[INPUT][QUERY_VECTORS_READ] == \
        with_vectors.counters[INPUT][QUERY_VECTORS_READ]


def _with_queries(lines, queries, args, postings_too):
    with tempfile.TemporaryDirectory() as tmp:
        q = os.path.join(tmp, "queries")
        if postings_too:
            write_lines(q, postings(queries))
            return run_job(MRSparseDotProducts, postings(lines),
                           args + ["--queries", q, "--input-format", POSTINGS])
        write_lines(q, queries)
        return run_job(MRSparseDotProducts, lines, args + ["--queries", q])


@pytest.mark.slow
def test_the_local_runner_gives_the_same_lines(tmp_path):
    args = ["--top-k", "5", "--measure", "cosine", "--blocks", "2"]
    from_vectors = run_job(MRSparseDotProducts, LINES, args)
    assert from_postings(LINES, args, runner="local").lines == from_vectors.lines
    args = ["--threshold", "0.1", "--measure", "cosine", "--strategy", "stripes"]
    from_vectors = run_job(MRSparseDotProducts, LINES, args)
    assert from_postings(LINES, args, runner="local").lines == from_vectors.lines


def test_a_posting_list_given_twice_sums_as_a_vector_given_twice():
    """Two lines of one feature: each document's weight summed (counted as a
    duplicate feature), as two lines of one vector are summed."""
    args = ["--measure", "dot", "--top-k", "5"]
    twice = run_job(MRSparseDotProducts, LINES + LINES, args)
    index = postings(LINES)
    run = run_job(MRSparseDotProducts, index + index, args + ["--input-format", POSTINGS])
    assert twice.lines and run.lines == twice.lines
    entries = sum(len(VectorProtocol().read(line)[1].to_dict()) for line in index)
    assert run.counters[INPUT][DUPLICATE_FEATURE] == entries


def test_bad_and_empty_posting_lists_are_counted():
    f, d = uuid.UUID(int=7), uuid.UUID(int=8)
    good = postings(LINES)
    empty = VectorProtocol().write(f, SparseVector.from_dict({}))
    truncated = VectorProtocol().write(d, SparseVector.from_dict({uuid.UUID(int=1): 1.0}))[:-1]
    lines = good + [empty, truncated, b'{"id": "%s", "features": {}}' % str(d).encode()]
    run = run_job(MRSparseDotProducts, lines, ["--input-format", POSTINGS, "--top-k", "5"])
    assert run.counters[INPUT][EMPTY_POSTING_LIST] == 1
    assert run.counters[INPUT][BAD_LINE] == 2
    assert run.lines == run_job(MRSparseDotProducts, LINES, ["--top-k", "5"]).lines


def test_strict_names_the_file_and_line_of_a_bad_posting_list(tmp_path):
    path = tmp_path / "index"
    write_lines(str(path), postings(LINES)[:3] + [b"not a record"])
    with pytest.raises(InputError, match=r"index, line 4: .*expected a compact record"):
        run_job(MRSparseDotProducts, None, ["--input-format", POSTINGS, "--strict"],
                input_paths=[str(path)])


def test_auto_never_reads_posting_lists_as_postings():
    """A posting list is a compact record: ``auto`` reads it as a vector (the
    feature's), so ``postings`` is asked for, never guessed."""
    index = postings(LINES)
    as_vectors = run_job(MRSparseDotProducts, index, ["--top-k", "2"])
    assert as_vectors.counters[INPUT][VECTORS_READ] == len(index)
    assert POSTING_LISTS_READ not in as_vectors.counters[INPUT]


def test_the_other_jobs_do_not_take_postings():
    with pytest.raises(ValueError, match="--input-format: invalid choice: 'postings'"):
        MRInvertedIndex(["--input-format", POSTINGS])


def test_ids_not_ascending_in_a_posting_list_are_counted():
    from tests.jobs.test_compact_input import raw_record
    f = uuid.UUID(int=9)
    line = raw_record(f, [uuid.UUID(int=2), uuid.UUID(int=1)], [1.0, 2.0])
    run = run_job(MRSparseDotProducts, postings(LINES) + [line],
                  ["--input-format", POSTINGS, "--top-k", "5"])
    assert run.counters[INPUT][BAD_ORDER] == 1


# --- the default --blocks for compact input -------------------------------------

def test_compact_input_is_sized_at_its_own_bytes_per_entry(tmp_path):
    index = tmp_path / "index"
    write_lines(str(index), postings(LINES))
    text = tmp_path / "vectors"
    write_lines(str(text), LINES)
    assert bytes_per_entry(POSTINGS) == bytes_per_entry("compact") == COMPACT_BYTES_PER_ENTRY
    assert bytes_per_entry("auto", data_first_line([str(index)])) == COMPACT_BYTES_PER_ENTRY
    assert bytes_per_entry("auto", data_first_line([str(text)])) == INPUT_BYTES_PER_ENTRY
    assert bytes_per_entry("json", data_first_line([str(index)])) == INPUT_BYTES_PER_ENTRY
    assert data_first_line(["-"]) is None and data_first_line([str(tmp_path / "none*")]) is None


def test_compact_input_gets_about_twice_the_entries_of_text_of_its_size(tmp_path):
    """The same bytes hold 45/25 times the entries as compact records, and the
    default --blocks follows: 360 MB on 2 local cores is 8 M entries as text
    (4 blocks of at most 2 M), 14.4 M as compact records (8 blocks)."""
    path = tmp_path / "input"
    with open(path, "wb") as f:
        f.write(VectorProtocol().write(uuid.UUID(int=1), SparseVector.from_dict(
            {uuid.UUID(int=2): 1.0})) + b"\n")
        f.truncate(8_000_000 * INPUT_BYTES_PER_ENTRY)

    def blocks(*fmt):
        job = MRSparseDotProducts(["-r", "local", "--num-cores", "2", *fmt, str(path)])
        return job._default_blocks()
    assert (blocks("--input-format", "json"), blocks()) == (4, 8)
