"""The ids given back (``--ids any``): a second run that joins the first
run's output, keyed by UUIDs, with the input's own ids.

Under ``--ids any`` each vector's id (and each feature's key) is mapped to a
UUID as it is read (:func:`mrjobs.parsing.name_key`), and the job runs as it
always does.  Its output then goes to the run's temporary place, and a
second run reads it beside the input lines (the launcher adds it to the
inputs: ``--names-of``):

*ids*
    Mappers send each input line's id (and, for the inverted index, whose
    lines are keyed by features, its feature keys) to its UUID (``"n"``;
    a combiner keeps each once), and each output line to the UUIDs it
    names: its own key (``"k"``) and each entry's, with its rank and its
    number as written (``"e"``).  The reducer of a UUID has its id and
    sends it to the lines that named it.
*lines*
    The reducer of an output line's UUID puts its id and its entries' ids,
    in the first run's order, in the line::

        <id as JSON>\\t[[<id as JSON>, <score>], ...]

The numbers are the first run's text, byte for byte; the lines come in the
first run's order (by the UUIDs).  Two ids that would share a UUID (a
UUIDv5 collision) stop the run, naming both; an output UUID that no input
line has (an input changed while the job ran) too.  Memory: a reducer of
the first step holds the references to one UUID until its id comes.
"""
import json
import logging
import re

from mrjob.step import MRStep

from mrjobs.jobprotocols import id_json
from mrjobs.parsing import BAD_NAME, InputError, name_key

__all__ = ["IdsOfAnyKind", "NamesJoin", "NAMES", "line_names", "names_steps"]

log = logging.getLogger("mrjobs.job")

#: the counter group of the second run
NAMES = "mrsparse ids"
# an output line of the first run: "<uuid>" TAB {"<uuid>": score, ...}
_LINE = re.compile(rb'"([0-9a-f-]{36})"\t\{(.*)\}\s*\Z')
_ENTRY = re.compile(rb'"([0-9a-f-]{36})": ([^,}]+)')


class IdsOfAnyKind:
    """What ``--ids any`` adds to a job (a mixin before
    :class:`~mrjobs.job.SparseJob`): the second run, its protocols."""

    def second_run(self):
        """True where the output goes through a second run, which gives the
        input's ids back (``--ids any``), and this is the first."""
        return self.options.ids == "any" and not self.options.names_of

    def start_second_run(self, first):
        """Make this job the second run over the output of the first run's
        runner ``first`` (its inputs: the input lines, the queries and it)."""
        log.info("a second run gives the output the input's ids")
        first_output = first.get_output_dir()
        self.options.names_of = first_output
        self._cl_args = list(self._cl_args) + ["--names-of", first_output]
        others = [path for _, path in self.other_inputs()]  # (--queries: read as input)
        self.options.args = list(self.options.args) + others + [first_output]
        if others:
            self.options.queries = None

    def internal_protocol(self):
        if self.options.names_of:
            from mrjob.protocol import JSONProtocol
            return JSONProtocol()
        return super().internal_protocol()

    def output_protocol(self):
        if self.options.names_of:
            from mrjobs.jobprotocols import NamedNeighboursProtocol
            return NamedNeighboursProtocol()
        return super().output_protocol()


def line_names(line, features=False):
    """The ``"id"`` of a JSON input line under ``--ids any`` (a string or an
    integer) and, with ``features``, its feature keys; none where the line
    has no such id (it was counted as skipped when the vectors were read)."""
    try:
        obj = json.loads(line[3:] if line[:3] == b"\xef\xbb\xbf" else line)
    except (ValueError, RecursionError):
        return []
    name = obj.get("id") if obj.__class__ is dict else None
    if name.__class__ not in (str, int):
        return []
    feats = obj.get("features")
    return [name] + (list(feats) if features and feats.__class__ is dict else [])


def names_steps(job, features=False):
    """The two MRSteps of ``--ids any``'s second run (:class:`NamesJoin`;
    ``features``: the output names features too, as the inverted index's)."""
    join = NamesJoin(job.counts, features)

    def final():
        job._task_final()
        return iter(())

    return [MRStep(mapper_init=job._task_init, mapper=join.mapper, mapper_final=final,
                   combiner=join.combiner_ids,
                   reducer_init=job._task_init, reducer=join.reducer_ids, reducer_final=final),
            MRStep(reducer_init=job._task_init, reducer=join.reducer_lines,
                   reducer_final=final)]


class NamesJoin:
    """The two steps of the second run (see the module doc); ``counts`` the
    job's counters; ``features``: the feature keys are ids of the output too."""

    def __init__(self, counts, features=False):
        self.counts, self.features = counts, features

    def mapper(self, _, line):
        m = _LINE.match(line)
        if m is not None:
            key = m.group(1).decode("ascii")
            entries = _ENTRY.findall(m.group(2))
            yield key, ["k"]
            for rank, (other, score) in enumerate(entries):
                yield other.decode("ascii"), ["e", key, rank, score.decode("ascii")]
            return
        for name in line_names(line, self.features):
            yield _uuid_text(name_key(name)), ["n", name]

    def combiner_ids(self, key, values):
        """Each id once a key (a feature's name comes from each of its lines)."""
        seen = set()
        for v in values:
            if v[0] == "n":
                if v[1] in seen:
                    continue
                seen.add(v[1])
            yield key, v

    def reducer_ids(self, key, values):
        names, refs = [], []
        for v in values:
            if v[0] == "n":
                if v[1] not in names:
                    names.append(v[1])
            else:
                refs.append(v)
        if not refs:
            return
        if len(names) != 1:
            raise InputError(BAD_NAME, (
                "--ids any: the ids %s get the same UUID %s: rename one" % (
                    " and ".join(json.dumps(n) for n in names[:2]), key) if names else
                "--ids any: the output names %s, which no input line has: did an input "
                "change while the job ran?" % key))
        name = names[0]
        for ref in refs:
            if ref[0] == "k":
                yield key, ["s", name]
            else:
                yield ref[1], ["o", ref[2], name, ref[3]]

    def reducer_lines(self, key, values):
        name, others = None, []
        for v in values:
            if v[0] == "s":
                name = v[1]
            else:
                others.append(v[1:])
        others.sort(key=lambda o: o[0])
        self.counts.add(NAMES, "output lines with their ids", 1)
        yield name, "[%s]" % ", ".join("[%s, %s]" % (id_json(n), score)
                                        for _, n, score in others)


def _uuid_text(raw):
    h = raw.hex()
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])
