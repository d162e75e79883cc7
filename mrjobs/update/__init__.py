"""Tomorrow's run: yesterday's neighbours updated for new, removed and changed
vectors, with the bytes a full run on today's corpus writes.

``python -m mrjobs.update --previous DIR [--add PATH] [--remove PATH]
--output-dir NEW`` (or ``mrsparse update``) reads the manifest of ``DIR``
(:mod:`mrjobs.runtime.manifest`: the options and input of the run that wrote
it), checks that ``DIR`` and its corpus are what the manifest says, and:

1. picks the rows to compute again: the added vectors' and, under
   ``--top-k``, every row that held ``K`` neighbours of which one is
   removed (its K-th place is unknown: the vectors below it were never kept);
2. cuts yesterday's corpus into today's (:class:`~mrjobs.update.changes.CorpusCut`):
   its lines less the removed vectors', the lines of the rows of 1. and the
   added lines in a file of their own;
3. runs the dot-products job twice on the runner given (``-r``): the rows of
   1. as ``--queries`` against the other vectors, ``--both-ways`` (each other
   vector gets its best among them too, from its floor: ``--floors``,
   yesterday's K-th score of a full row), and the rows of 1. among
   themselves -- or, where the rows of 1. are most of the corpus, the job
   once on today's corpus;
4. puts the rows of 1. together from both runs, merges the first run's
   pairs into each other row of yesterday (less its removed neighbours),
   keeps the top ``K`` (or all, under ``--threshold``), and writes the rows
   in id order: the lines a full run on today's corpus writes, byte for byte
   (each score's text is the job's own);
5. commits ``NEW`` as a run does (:mod:`mrjobs.runtime.commit`), with
   today's corpus in ``NEW/_corpus/`` and a manifest naming it, so that
   tomorrow's update starts from ``NEW``.  ``DIR`` is only read.

Refused in one line, before anything is written: a ``DIR`` without a
manifest, a part file missing or changed since its run, a corpus that is not
the one the run read, a ``--remove`` id not in the corpus, an added vector
whose id the corpus holds and ``--remove`` does not name, an option that
differs from the manifest's, and the runs whose output depends on more than
the pairs (``--max-df``, whose cut follows every feature's count;
``--queries``; ``--ids any``; ``--output-format compact``;
``--num-features`` where today's corpus has another number of features).
"""
import difflib
import logging
import math
import os
import shutil
import sys
import tempfile
import uuid
from typing import NamedTuple

from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.options import MAX_TOP_K, RESULT_OPTIONS, version
from mrjobs.runtime.commit import OutputCommitter, OutputConflict
from mrjobs.runtime.failures import JobError
from mrjobs.runtime.manifest import (check_file, check_inputs, check_output, file_digest,
                                     output_files, read_manifest, write_manifest)
from mrjobs.strategies.sizing import DEFAULT_BLOCK_ENTRIES, bytes_per_entry, data_first_line
from mrjobs.update.changes import CorpusCut, read_additions, read_removals, vector_id
from mrjobs.update.rows import (Today, as_it_was, floors_table, losing, read_reserve,
                                read_rows, reserve_lines, rows_again)

__all__ = ["Update", "Prepared", "option_args", "job_options", "whole_run", "REFUSED",
           "RESERVE_FILE"]

log = logging.getLogger("mrjobs.update")

#: options under which an update cannot give a full run's lines: option -> why
REFUSED = {
    "max_df": "--max-df cuts features by their count over the whole corpus, which every "
              "change moves",
    "queries": "--queries: a run of queries is updated by running its queries again",
    "ids": "--ids any is not updated yet",
    "output_format": "--output-format compact is not updated yet",
}
_DEFAULTS = {"include_self": False, "ids": "uuid", "output_format": "json"}
#: the share of today's rows computed again above which one full run of the
#: job does the update (their products against the corpus, with the rows of
#: every other vector, would cost more: ~2 * share of a full run's products)
WHOLE_SHARE = 0.4
#: where an update keeps each row's best beyond K (``--reserve``), in its output
RESERVE_FILE = os.path.join("_reserve", "part-00000")


class Prepared(NamedTuple):
    """What an update computes from (:meth:`Update.prepare`): yesterday's
    stored rows (``{id: value}``) and the ids of the ``whole`` ones, the
    removed ids (``gone``), the rows that hold a removed neighbour (``lost``:
    :func:`~mrjobs.update.rows.losing`), the rows computed again (``again``,
    and with the added vectors ``fresh``), and today's corpus cut
    (:class:`CorpusCut`)."""

    rows: dict
    whole: set
    gone: set
    lost: dict
    again: set
    fresh: set
    cut: CorpusCut


def option_args(options):
    """The command-line arguments of a manifest's ``options``."""
    args = []
    for name in RESULT_OPTIONS:
        value = options.get(name)
        flag = "--" + name.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        else:
            args += [flag, repr(float(value)) if name == "threshold" else str(value)]
    return args


def job_options():
    """The option strings the dot-products job takes."""
    return {o for a in MRSparseDotProducts([]).arg_parser._actions for o in a.option_strings}


def job_of(args):
    """The dot-products job of the command line ``args``; :class:`JobError`
    (one line, the option meant where one is misspelt) where it is refused."""
    try:
        return MRSparseDotProducts(args=args)
    except ValueError as e:  # (mrjob's parser, where args are given, raises)
        words = str(e).split()
        known = job_options()
        close = [m for w in words if w.startswith("--") and w.rstrip(":") not in known
                 for m in difflib.get_close_matches(w, known, n=1)]
        raise JobError("%s%s (an option of the job's runs; the update's own are in "
                       "--help)" % (e, " (did you mean %s?)" % close[0] if close else "")
                       ) from None


class Update:
    """One update run (see the module docstring).

    Parameters
    ----------
    previous : str
        Yesterday's ``--output-dir``.
    output_dir : str
        Where today's output goes (refused: ``previous``, or one inside the other).
    add, remove : list of str
        ``--add`` and ``--remove`` paths.
    job_args : list of str
        Arguments for the dot-products runs (``-r``, runner options; the
        job's own options, which must equal the manifest's).
    corpus : list of str, optional
        Yesterday's input files where they are now (default: the manifest's).
    overwrite : bool
        ``--overwrite-output``.
    reserve : int, optional
        ``--reserve``: each row's best kept beyond K (default: yesterday's).
    """

    def __init__(self, previous, output_dir, add=(), remove=(), job_args=(), corpus=None,
                 overwrite=False, reserve=None):
        self.previous, self.output_dir = previous, output_dir
        self.add, self.remove = list(add), list(remove)
        self.job_args, self.corpus, self.overwrite = list(job_args), corpus, overwrite
        self.reserve = reserve
        self.committer = self.work = None
        self.stats = {}

    # -- before any work ------------------------------------------------------

    def check(self, places=True):
        """Everything that can be refused before the work (``places``: the
        output's place too); returns the corpus files, and sets ``manifest``
        and ``options``."""
        self.manifest = manifest = read_manifest(self.previous)
        if manifest.get("job") != "dot_products":
            raise JobError("%s is the output of %s, not of the dot-products job: only its "
                           "neighbours are updated" % (self.previous, manifest.get("job")))
        self.options = options = manifest["options"]
        for name, why in REFUSED.items():
            if options.get(name) not in (None, _DEFAULTS.get(name)):
                raise JobError("%s was made with %s: %s; run the job whole"
                               % (self.previous, "--" + name.replace("_", "-"), why))
        self.check_given_options()
        self.then = (manifest.get("reserve") or {}).get("rows", 0)
        if self.reserve is None:
            self.reserve = self.then
        if self.reserve and options["top_k"] is None:
            raise JobError("--reserve %d keeps rows beyond --top-k; %s was made with "
                           "--threshold alone, whose rows are whole" % (self.reserve,
                                                                        self.previous))
        if self.reserve and options["top_k"] + self.reserve > MAX_TOP_K:
            raise JobError("--reserve %d: with --top-k %d, at most %d" % (
                self.reserve, options["top_k"], MAX_TOP_K - options["top_k"]))
        if places:
            self.check_places()
        check_output(self.previous, manifest)
        return check_inputs(self.previous, manifest, self.corpus)

    def check_given_options(self):
        """The job's options given to the update must be yesterday's."""
        given = [a.split("=")[0] for a in self.job_args if a.startswith("--")]
        job = job_of(self.job_args + option_args(
            {n: v for n, v in self.options.items() if "--" + n.replace("_", "-") not in given}))
        if job.options.args:  # (they would be inputs of its runs)
            raise JobError("%s: an update takes no input path (yesterday's corpus comes from "
                           "the manifest of --previous; new vectors from --add)"
                           % " ".join(job.options.args))
        for name in RESULT_OPTIONS:
            flag = "--" + name.replace("_", "-")
            now, then = getattr(job.options, name), self.options.get(name)
            if flag in given and now != then:
                raise JobError("%s %s: %s was made with %s; an update keeps yesterday's "
                               "options (run the job whole for others)" % (
                                   flag, now, self.previous, "%s %s" % (flag, then)
                                   if then not in (None, False, True) else
                                   flag if then else "no %s" % flag))

    def check_places(self):
        prev = os.path.realpath(self.previous)
        out = os.path.realpath(self.output_dir)
        if out == prev or out.startswith(prev + os.sep) or prev.startswith(out + os.sep):
            raise JobError("--output-dir %s is %s --previous %s: an update never touches "
                           "yesterday's output; give a new directory" % (
                               self.output_dir, "the same directory as" if out == prev else
                               "inside" if out.startswith(prev) else "around", self.previous))
        self.committer = OutputCommitter(self.output_dir, self.overwrite)
        try:
            self.committer.note()
        except OutputConflict as e:
            raise JobError(str(e)) from None

    # -- the work -------------------------------------------------------------

    def run(self):
        """Check, compute, commit; returns ``stats``.  Raises :class:`JobError`
        (or exits, where a run of the job fails, with its status)."""
        corpus = self.check()
        parent = os.path.dirname(self.committer.final)
        os.makedirs(parent, exist_ok=True)
        self.work = tempfile.mkdtemp(prefix=".%s.mrsparse-update-" % os.path.basename(
            self.committer.final), dir=parent)
        try:
            self.compute(corpus)
            self.committer.commit()
            log.info("today's output is in %s", self.output_dir)
        finally:
            shutil.rmtree(self.work, ignore_errors=True)
            self.committer.abort()
        return self.stats

    @property
    def cap(self):
        """The entries a row keeps: K and the reserve (None: all)."""
        k = self.options["top_k"]
        return None if k is None else k + self.reserve

    def prepare(self, corpus, work):
        """The change set read, yesterday's stored rows, the rows to compute
        again, today's corpus cut into ``work``: a :class:`Prepared`."""
        o = self.options
        removed = read_removals(self.remove)
        added = read_additions(self.add, o["input_format"], o["float32"])
        rows, whole = self.previous_rows()
        gone = {vector_id(k) for k in removed}
        lost = losing(rows, gone)
        again = rows_again(rows, whole, lost, o["top_k"])
        cut = CorpusCut(work, o["input_format"], o["float32"],
                        features=o.get("num_features") is not None)
        cut.write(corpus, removed, {uuid.UUID(k).bytes for k in again}, added)
        self.stats = {"added": len({k for k, _ in added}), "removed": len(removed),
                      "rows computed again": len(again), "reserve": self.reserve}
        return Prepared(rows, whole, gone, lost, again,
                        again | {vector_id(k) for k, _ in added}, cut)

    def compute(self, corpus):
        p = self.prepare(corpus, self.work)
        if p.cut.features is not None:
            self.check_features(p.cut)
        today = Today(self.options["top_k"], self.cap)
        why = whole_run(p, self.reserve, self.then)
        if why:
            log.info("update: %s: one run of the job on today's corpus instead", why)
            for key, value in job_rows(self.job_args, [p.cut.paths["rest"], p.cut.paths[
                    "again"]], dict(self.options, top_k=self.cap), self.work).items():
                today.keep_text(key, value, self.cap is None
                                or value.count('": ') < self.cap)
        else:
            self.merge(p, today, *self.run_queries(p))
        self.write(today, p.cut)

    def previous_rows(self):
        """Yesterday's stored rows and the ids of the whole ones: its reserve
        where it kept one (checked against its manifest), else its output
        rows (whole where they hold fewer than K)."""
        if self.then:
            path = os.path.join(self.previous, RESERVE_FILE)
            check_file(path, self.manifest["reserve"]["file"], self.previous)
            return read_reserve(path)
        rows = read_rows(self.previous_lines(), self.previous)
        k = self.options["top_k"]
        return rows, {key for key, v in rows.items() if k is None or v.count('": ') < k}

    def previous_lines(self):
        for name in output_files(self.previous):
            with open(os.path.join(self.previous, name), encoding="utf-8") as f:
                yield from f

    def check_features(self, cut):
        then, now = cut.distinct_features()
        if then != now:
            raise JobError(
                "--measure %s takes --num-features, the corpus's number of distinct "
                "features: %d yesterday, %d today, so every score changes; run the job "
                "whole with --num-features %d" % (self.options["measure"], then, now, now))

    def run_queries(self, prepared):
        """The two runs of the job, each row's best ``cap``: the rows computed
        again (``fresh``) against the other vectors, both ways, each other
        vector's pairs kept from its floor (``--floors``, under ``--top-k``:
        the last score of its stored row, less its removed neighbours, where
        the row is not whole); those rows among themselves."""
        p, n = prepared.cut.paths, prepared.cut.counts
        options = dict(self.options, top_k=self.cap)
        first = second = {}
        if n["again"] and n["rest"]:
            log.info("update: run 1: %d line(s) of added vectors and rows that lost a "
                     "neighbour against the %d other lines, both ways", n["again"], n["rest"])
            floors = []
            if self.options["top_k"] is not None:
                floors = ["--floors", os.path.join(self.work, "floors")]
                floors_table(prepared.rows, prepared.whole, prepared.gone, prepared.lost,
                             prepared.fresh).tofile(floors[1])
            # (--include-self: the rows computed again get themselves in run 2)
            first = job_rows(self.job_args, [
                p["rest"], "--queries", p["again"], "--both-ways", "--query-blocks",
                str(query_blocks(p["again"], self.options))] + floors,
                dict(options, include_self=False), self.work)
        if n["again"]:
            log.info("update: run 2: those %d line(s) among themselves", n["again"])
            second = job_rows(self.job_args, [p["again"]], options, self.work)
        return first, second

    def merge(self, prepared, today, first, second):
        """Today's rows (into ``today``, a :class:`Today`): for the vectors of
        ``fresh`` (added ones included) their pairs of both runs; for the
        others yesterday's stored row merged with their pairs of the first run."""
        rows, whole, gone, fresh = prepared.rows, prepared.whole, prepared.gone, prepared.fresh
        for key in fresh:
            today.fresh(key, first.get(key), second.get(key))
        for key in set(rows) | set(first):
            if key in gone or key in fresh:
                continue
            value, new = rows.get(key), first.get(key)
            if value is not None and as_it_was(value, new, key in prepared.lost,
                                               key in whole):
                today.keep_text(key, value, key in whole)
            else:
                today.merge(key, value, new, gone, key in whole)
        self.stats["rows as they were"] = today.kept

    def write(self, today, cut):
        tmp = self.committer.tmp
        os.makedirs(os.path.join(tmp, "_corpus"))
        with open(os.path.join(tmp, "part-00000"), "w", encoding="utf-8") as f:
            for key in sorted(today.out):
                f.write('"%s"\t%s\n' % (key, today.out[key]))
        made = {"job": "dot_products", "version": version(), "options": self.options}
        if self.reserve:
            path = os.path.join(tmp, RESERVE_FILE)
            os.makedirs(os.path.dirname(path))
            with open(path, "w", encoding="utf-8") as f:
                f.writelines(reserve_lines(today.stored, today.whole))
            made["reserve"] = {"rows": self.reserve, "file": dict(
                path=RESERVE_FILE, **file_digest(path))}
        corpus = []
        for name in ("rest", "again"):
            path = os.path.join(tmp, "_corpus", os.path.basename(cut.paths[name]))
            shutil.move(cut.paths[name], path)
            corpus.append(path)
        self.stats["output lines"] = len(today.out)
        made["update"] = dict(self.stats, previous=os.path.abspath(self.previous))
        write_manifest(tmp, made, corpus)


def whole_run(prepared, reserve, then):
    """Why one run of the job on today's corpus does an update (the rows to
    compute again, ``prepared``'s, are most of it: their products against it
    cost more than a full run's, which gives the same lines; or the rows are
    to keep more (``reserve``) than yesterday's kept (``then``)), or None."""
    p = prepared
    share = len(p.fresh) / max(1, len(p.cut.kept) - len(p.again) + len(p.fresh))
    if share > WHOLE_SHARE:
        return "%.0f%% of today's rows are computed again" % (100 * share)
    if reserve > then:
        return "--reserve %d, yesterday's %d" % (reserve, then)
    return None


def query_blocks(path, options):
    """Blocks for the rows computed again in the update's first run (its
    queries, in ``path``): as many as a block's entries ask for, so that few
    of them meet each block of the corpus once (the corpus would go to each
    of ``--blocks`` query blocks otherwise)."""
    entries = os.path.getsize(path) / bytes_per_entry(options["input_format"],
                                                      data_first_line([path]))
    return max(1, math.ceil(entries / DEFAULT_BLOCK_ENTRIES))


def job_rows(job_args, args, options, work):
    """The dot-products job's rows (``{id: value}``) of a run with ``args``
    (inputs, --queries), ``options`` (a manifest's) and ``job_args`` (the
    runner's, given to the update), its output in a file of ``work``."""
    quiet = [] if {"-q", "--quiet", "-v", "--verbose"} & set(job_args) else ["-q"]
    job = job_of(job_args + quiet + option_args(options) + args)
    out = tempfile.TemporaryFile(dir=work)
    job.sandbox(stdout=out, stderr=getattr(sys.stderr, "buffer", sys.stderr))
    loggers = [logging.getLogger(n) for n in ("mrjobs", "mrjob", "__main__")]
    saved = [(g, list(g.handlers), g.level) for g in loggers]
    try:
        job.run_job()  # (a run sets up its logging: undone after it)
    finally:
        for g, handlers, level in saved:
            g.handlers[:] = handlers
            g.setLevel(level)
    out.seek(0)
    with open(out.fileno(), encoding="utf-8", closefd=False) as text:
        rows = read_rows(text, "the output of a run of the job")
    out.close()
    return rows
