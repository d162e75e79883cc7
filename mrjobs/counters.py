"""Counters of the mrsparse jobs: their groups, batching in the task, and the
short report printed at the end of a run.

Every ``MRJob.increment_counter`` call writes one line to the task's stderr,
so tasks keep counts in a :class:`Counters` dict and send each once, when the
task ends.
"""

from mrjobs.parsing import BAD_KINDS, TINY_WEIGHT

__all__ = ["INPUT", "DFCUT", "WORK", "SKIPPED", "READ", "Counters", "run_report",
           "without_output_line"]

#: counter group of input problems (skipped lines) and input repairs
INPUT = "mrsparse input"
#: counter group of what ``--max-df`` dropped
DFCUT = "mrsparse df-cut"
#: counter group of the work done (for benchmarks)
WORK = "mrsparse work"


#: counters that mean a line was skipped: the kinds of bad line, named once
#: in :mod:`mrjobs.parsing` (``InputError.kind``)
SKIPPED = BAD_KINDS

# The counter names: each written here once, used by name everywhere else.
# group INPUT
VECTORS_READ = "vectors read"
QUERY_VECTORS_READ = "query vectors read"
DUPLICATE_FEATURE = "duplicate feature (weights summed)"
DUPLICATE_VECTOR_LINES = "duplicate vector id (lines merged)"
DUPLICATE_VECTOR_POSTINGS = "duplicate vector id (weights summed)"
EMPTY_VECTOR = "empty vector (kept; no neighbours)"
#: --input-format postings: the index's posting lists, turned back into vectors
POSTING_LISTS_READ = "posting lists read"
EMPTY_POSTING_LIST = "empty posting list (a feature without documents)"
ZERO_WEIGHT = "zero weight (entry dropped)"
#: --float32: a nonzero weight that float32 carries as 0 (named in mrjobs.parsing,
#: whose InputError it also is under --strict)
FLOAT32_ZERO_WEIGHT = TINY_WEIGHT
NOT_SCORABLE = ("vector not scorable by the measure (skipped; e.g. constant weights for "
                "pearson)")
#: the vectors step's reducers (or one block pair of each block, where the
#: mappers feed the pairs): each distinct id of each family once (the lines of
#: a repeated id merged; empty vectors included), whatever becomes of it
VECTOR_IDS = "distinct vector ids"
QUERY_VECTOR_IDS = "distinct query vector ids"
#: counters of what was read (not notes about the input)
READ = (VECTORS_READ, QUERY_VECTORS_READ, POSTING_LISTS_READ, VECTOR_IDS, QUERY_VECTOR_IDS)
# group DFCUT
FEATURES_DROPPED = "features dropped"
POSTINGS_DROPPED = "postings dropped"
PRODUCTS_DROPPED = "partial products dropped"
# group WORK
#: the rows step's reducers: one a vector with at least one neighbour kept
OUTPUT_LINES = "output lines"
PAIRS_SCORED = "pairs scored"
PAIRS_NOT_FINITE = "pairs dropped: score not a finite number"
PAIRS_BELOW_THRESHOLD = "pairs below threshold"
PARTIAL_PRODUCTS = "partial products"
STRIPE_ENTRIES_EMITTED = "stripe entries emitted"
STRIPE_ENTRIES_COMBINED = "stripe entries combined away"
BLOCK_ENTRIES_SENT = "block entries sent"
DF_COUNT_ENTRIES_SENT = "df count entries sent"
BLOCK_PAIRS = "block pairs"
#: the prefix strategy (mrjobs.strategies.prefix): whole-vector entries sent
#: to prefix features, the features whose reducer scored pairs, and pairs kept
#: by a feature's reducer but left to the reducer of an earlier prefix feature
#: the pair shares (copies with their earlier features), or met again there and
#: merged by the rows step (copies without: mrjobs.strategies.prefixing.repeats)
PREFIX_ENTRIES_SENT = "prefix entries sent"
PREFIX_GROUPS = "prefix features with a pair to score"
PREFIX_NOWHERE = "vectors sent nowhere: no pair of theirs can reach --threshold"
PREFIX_PART_PAIRS = "pairs left to their own part of a split prefix feature"
PREFIX_PAIRS_DROPPED = "pairs left to an earlier prefix feature"
PREFIX_PAIRS_MET_AGAIN = "pairs met again at a later prefix feature (their best kept)"
PRODUCTS_COMPUTED = "products computed"
#: pruning under --threshold (blocks strategy; see mrjobs.pairs.pruning)
ROWS_PRUNED = "pruned: rows"
COLUMNS_PRUNED = "pruned: columns"
CELLS_PRUNED = "pruned: (row x column group) cells"
BLOCK_PAIRS_PRUNED = "pruned: block pairs"


class Counters(dict):
    """Counts kept in the task and sent to mrjob once, at the end of the task."""

    def add(self, group, name, n=1):
        if n:
            key = (group, name)
            self[key] = self.get(key, 0) + n

    def send(self, job):
        """Hand every count to ``job.increment_counter`` and forget them."""
        for (group, name), n in sorted(self.items()):
            job.increment_counter(group, name, n)
        self.clear()


#: the WORK counters the report reads
_REPORTED_WORK = (OUTPUT_LINES, PAIRS_BELOW_THRESHOLD, ROWS_PRUNED, COLUMNS_PRUNED,
                  CELLS_PRUNED, BLOCK_PAIRS_PRUNED, PREFIX_NOWHERE)


def _totals(step_counters):
    """``{(group, name): count}`` summed over the steps (groups INPUT and
    DFCUT, and the output lines and the pairs under the threshold)."""
    total = {}
    for step in step_counters or ():
        for group, names in step.items():
            for name, n in names.items():
                if group in (INPUT, DFCUT) or (group == WORK and name in _REPORTED_WORK):
                    total[(group, name)] = total.get((group, name), 0) + n
    return total


def without_output_line(step_counters):
    """``(queries, without, ids)`` of a dot-products run: how many of the
    ``ids`` distinct vector ids that can get an output line got none (the
    query vectors under ``--queries``, else the vectors), or None for a run
    that does not count them.

    Both counts are exact on every runner: each distinct id of each family
    is counted once, by the reducer of the vectors step that holds it (or
    by one block pair of its block; empty vectors included), and each output
    line once, by the reducer of the rows
    step that writes it; a vector that shares no feature with another (or
    keeps no score) reaches no reducer of the rows step, hence the
    difference.

    >>> without_output_line([{INPUT: {QUERY_VECTOR_IDS: 250, VECTOR_IDS: 9000}},
    ...                      {WORK: {OUTPUT_LINES: 200}}])
    (True, 50, 250)
    >>> without_output_line([{INPUT: {VECTORS_READ: 3}}]) is None
    True
    """
    total = _totals(step_counters)
    queries = total.get((INPUT, QUERY_VECTOR_IDS), 0)
    ids = queries or total.get((INPUT, VECTOR_IDS), 0)
    if not ids:
        return None
    return bool(queries), ids - total.get((WORK, OUTPUT_LINES), 0), ids


def run_report(step_counters):
    """A short account of skipped input, df-cut drops and vectors without an
    output line, or ''."""
    total = _totals(step_counters)
    lines = []
    skipped = {name: total.get((INPUT, name), 0) for name in SKIPPED}
    if any(skipped.values()):
        lines.append("mrsparse: skipped %s bad input line(s): %s (rerun with --strict to "
                     "stop at the first)" % (_n(sum(skipped.values())), ", ".join(
                         "%s: %s" % (k, _n(v)) for k, v in skipped.items() if v)))
    repaired = sorted((name, n) for (g, name), n in total.items()
                      if g == INPUT and name not in SKIPPED and name not in READ)
    if repaired:
        lines.append("mrsparse: input notes: " + ", ".join("%s: %s" % (k, _n(v))
                                                            for k, v in repaired))
    if total.get((DFCUT, FEATURES_DROPPED)):
        lines.append("mrsparse: --max-df dropped %s feature(s), %s posting(s), %s partial "
                     "product(s); results are approximate" % (
                         _n(total[(DFCUT, FEATURES_DROPPED)]),
                         _n(total.get((DFCUT, POSTINGS_DROPPED), 0)),
                         _n(total.get((DFCUT, PRODUCTS_DROPPED), 0))))
    without = without_output_line(step_counters)
    if without and without[1] > 0:  # (--both-ways: more lines than queries)
        queries, n, ids = without
        lines.append("mrsparse: %s of %s %s got no output line: no neighbour (no feature "
                     "shared with %s, or none left by --threshold or --max-df), or empty, "
                     "not scorable by the measure or skipped" % (
                         _n(n), _n(ids), "query vector(s)" if queries else "vector(s)",
                         "the corpus" if queries else "another vector"))
        if n == ids:
            lines += _why_nothing(total)
    return "\n".join(lines)


def _why_nothing(total):
    """Where a run wrote no line at all and pairs fell below --threshold: a
    line that says so, and where --max-df dropped features, that the pairs
    through them were never scored."""
    below = total.get((WORK, PAIRS_BELOW_THRESHOLD), 0)
    pruned = sum(total.get((WORK, name), 0) for name in (ROWS_PRUNED, COLUMNS_PRUNED,
                                                           CELLS_PRUNED, BLOCK_PAIRS_PRUNED))
    nowhere = total.get((WORK, PREFIX_NOWHERE), 0)
    if not below and not pruned and not nowhere:
        return []
    line = ("mrsparse: no pair reached --threshold (%s pair(s) scored below it%s%s)"
            % (_n(below), ", more pruned as unable to reach it" if pruned else "",
               "; %s vector(s) had no pair able to reach it, by their bounds" % _n(nowhere)
               if nowhere else ""))
    dropped = total.get((DFCUT, FEATURES_DROPPED), 0)
    if dropped:
        line += ("; pairs that share only the %s feature(s) --max-df dropped were never "
                 "scored: a larger --max-df (or none) scores them" % _n(dropped))
    return [line]


def _n(count):
    """A count for people: 1,791,199,116."""
    return format(count, ",")
