"""The dot products job from Python: a scipy sparse matrix (or ``(id, {feature:
weight})`` pairs) with ids of any kind in, its neighbours back as a scipy
matrix or a DataFrame.

:func:`neighbours` writes the rows as compact records (:func:`write_matrix`:
each row's id and each column's index mapped to a UUID, :mod:`mrjobs.api.ids`),
runs :class:`~mrjobs.dot_products.MRSparseDotProducts` on the runner asked for
(the same job and the same output lines as ``python -m mrjobs.dot_products``
on that file), and reads its output lines back (:meth:`Neighbours.from_lines`,
which also reads a command-line run's output).
"""
import os
import shutil
import tempfile

import numpy as np

from mrcodecs import SparseVector, VectorProtocol
from mrcodecs.errors import EncodeError
from mrcodecs.jobwire import Stripe
from mrjobs.api.ids import IdMap, uuid_of
from mrjobs.jobprotocols import NamedNeighboursProtocol, NeighboursJSONProtocol, VectorJSONProtocol

__all__ = ["Neighbours", "job_args", "neighbours", "write_matrix"]


def neighbours(matrix, ids=None, *, measure="cosine", top_k=None, threshold=None,
               queries=None, runner="inline", **options):
    """The neighbours of each row of ``matrix`` among its rows (or of each row
    of ``queries`` among the rows of ``matrix``), as :class:`Neighbours`.

    Parameters
    ----------
    matrix : scipy sparse matrix, 2-D array, or iterable of ``(id, {feature: weight})``
        The vectors, one a row; features of pairs are ids of any kind
        (:func:`~mrjobs.api.ids.uuid_of`), a matrix's columns are its
        features ``0 .. n-1`` (the ints).
    ids : sequence, optional
        The rows' ids (int, str or uuid.UUID, unique); default ``0 .. n-1``
        (for pairs: their ids).
    measure, top_k, threshold : the job's ``--measure``, ``--top-k``, ``--threshold``.
    queries : ``(matrix, ids)``, or ``(id, {feature: weight})`` pairs, optional
        The query vectors (``--queries``) and their ids: the result's rows.
        An id of both families is one vector, which is never its own
        neighbour (as on the command line): give the queries ids of their own.
    runner : str
        mrjob's runner: ``inline``, ``local``, ``hadoop``, ``emr``, ``spark``.
    **options
        Further options of the job or of mrjob, by their long names with
        ``_`` for ``-`` (``max_df=1000``, ``strategy="stripes"``); True for
        a flag, a list to repeat an option (``jobconf=[...]``).
    """
    workdir = tempfile.mkdtemp(prefix="mrsparse-neighbours-")
    try:
        # Spark's text input decodes lines as UTF-8: JSON lines there
        fmt = "json" if runner == "spark" else "compact"
        corpus_path = os.path.join(workdir, "corpus." + fmt)
        corpus = write_matrix(corpus_path, matrix, ids, format=fmt)
        args = job_args(measure=measure, top_k=top_k, threshold=threshold, **options)
        found = None
        if queries is not None:
            path = os.path.join(workdir, "queries." + fmt)
            found = write_matrix(path, *_with_ids(queries), what="query ids", format=fmt)
            args += ["--queries", path]
        lines, counters = _run(["-r", runner] + args + [corpus_path])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return Neighbours.from_lines(lines, corpus, found, counters=counters)


def _with_ids(queries):
    """``(vectors, ids)`` of ``queries=`` (a bare matrix has no ids of its own)."""
    if isinstance(queries, tuple) and len(queries) == 2 and _is_matrix(queries[0]):
        return queries
    if _is_matrix(queries):
        raise ValueError("queries=(matrix, ids): a matrix of queries needs ids of its own")
    return queries, None


def job_args(**options):
    """Command-line arguments of the job for keyword ``options`` (see
    :func:`neighbours`)."""
    if options.get("output_format") not in (None, "json"):
        raise ValueError("neighbours() reads the JSON output lines: output_format=%r is not "
                         "for it (write_matrix and the command line take any)"
                         % options["output_format"])
    args = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if v is True:
                args.append(flag)
            elif v is not None and v is not False:
                args += [flag, str(v)]
    return args


def _run(args):
    """``(output lines, counters)`` of the dot products job run with ``args``."""
    from mrjobs.dot_products import MRSparseDotProducts

    job = MRSparseDotProducts(args)
    job.set_up_runs()  # (the prefix strategy's df count first)
    return _runs(job)


def _runs(job):
    """``(output lines, counters)`` of ``job``'s run, after the runs before it."""
    from mrjob.util import to_lines
    from mrjobs.counters import run_report

    with job.make_runner() as runner:
        runner.run()
        if job.preliminary_run():
            job.start_second_run(runner)
            return _runs(job)
        counters = runner.counters()
        # the launcher's end-of-run checks: every line written here is a
        # vector, so one skipped means the engine did not read what it was given
        skipped = [line for line in run_report(counters).splitlines()
                   if line.startswith("mrsparse: skipped")]
        if skipped:
            raise RuntimeError("the job did not read the vectors written for it: %s"
                               % skipped[0][len("mrsparse: "):])
        job.check_something_was_read(counters)
        # in the command line's order (the launcher's: sorted), whatever the parts
        lines = sorted(line.rstrip(b"\r\n") for line in to_lines(runner.cat_output()))
    return lines, counters


def write_matrix(path, matrix, ids=None, what="ids", format="compact"):
    """Write the rows of ``matrix`` (as :func:`neighbours` takes it) to
    ``path``, one a line keyed by the UUID of its id, as compact records
    (``format="compact"``) or the jobs' JSON lines (``"json"``, for Spark,
    whose text input takes only UTF-8); the jobs read either as any input.
    Return the rows' :class:`~mrjobs.api.ids.IdMap`."""
    vector, ids = _rows(matrix, ids, what)
    protocol = VectorProtocol() if format == "compact" else _JSONVectors()
    with open(path, "wb") as f:
        for i, key in enumerate(ids.uuids):
            try:
                f.write(protocol.write(key, vector(i)))
            except EncodeError as e:
                raise ValueError("%s[%d] (%r): %s" % (what, i, ids.ids[i], e)) from None
            except TypeError as e:  # a feature of a pair that is no id
                raise TypeError("%s[%d] (%r): a feature: %s" % (what, i, ids.ids[i], e)) from None
            f.write(b"\n")
    return ids


class _JSONVectors(VectorJSONProtocol):
    """The jobs' JSON input protocol, written from a UUID and a SparseVector."""

    def write(self, key, vector):
        return super().write(key.bytes, Stripe(vector.ids, vector.weights))


def _is_matrix(x):
    return hasattr(x, "tocsr") or isinstance(x, np.ndarray)


def _rows(matrix, ids, what):
    """``(vector, IdMap)``: ``vector(i)`` is row ``i``'s SparseVector."""
    if _is_matrix(matrix):
        import scipy.sparse as sp

        m = sp.csr_matrix(matrix, dtype=np.float64)
        ids = IdMap(range(m.shape[0]) if ids is None else ids, what)
        if len(ids) != m.shape[0]:
            raise ValueError("%d %s for a matrix of %d rows" % (len(ids), what, m.shape[0]))
        features = np.array([uuid_of(j).bytes for j in range(m.shape[1])], "S16")
        return _csr_row(m, features), ids
    pairs = list(matrix)
    ids = IdMap([p[0] for p in pairs] if ids is None else ids, what)
    if len(ids) != len(pairs):
        raise ValueError("%d %s for %d vectors" % (len(ids), what, len(pairs)))
    return lambda i: SparseVector.from_dict({uuid_of(f): w for f, w in pairs[i][1].items()}), ids


def _csr_row(m, features):
    def vector(i):
        lo, hi = m.indptr[i], m.indptr[i + 1]
        keys, weights = features[m.indices[lo:hi]], m.data[lo:hi]
        order = np.argsort(keys, kind="stable")
        return SparseVector(keys[order], weights[order], merge=True)
    return vector


class Neighbours:
    """The neighbours found: :attr:`ids` (the rows' ids: the corpus', or the
    queries' with queries), :attr:`neighbour_ids` (the columns': the
    corpus'), :attr:`matrix` (scipy CSR, rows x columns, the scores),
    :attr:`lines` (the job's output lines), :attr:`counters`, and
    :meth:`to_pandas`, :meth:`rows` for each row's neighbours best first."""

    def __init__(self, ids, neighbour_ids, rows, lines=(), counters=None):
        self.ids = list(ids)
        self.neighbour_ids = list(neighbour_ids)
        self._rows = rows  # {row index: [(column index, score), ...] best first}
        self.lines = list(lines)
        self.counters = counters or []

    @classmethod
    def from_lines(cls, lines, corpus, queries=None, counters=None):
        """Read the job's JSON output ``lines`` (bytes or str, as the job or a
        command-line run wrote them, keyed by UUIDs or, under ``--ids any``,
        by the ids themselves), the ids being those of ``corpus`` and
        ``queries`` (:class:`~mrjobs.api.ids.IdMap`, or sequences of ids)."""
        corpus = corpus if isinstance(corpus, IdMap) else IdMap(corpus)
        rows_of = corpus if queries is None else (
            queries if isinstance(queries, IdMap) else IdMap(queries, "query ids"))
        protocol, rows, kept = NeighboursJSONProtocol(), {}, []
        for n, line in enumerate(lines):
            line = line.encode("utf-8") if isinstance(line, str) else line
            line = line.rstrip(b"\r\n")
            if not line:
                continue
            key, best = _read_line(protocol, line)
            try:
                rows[rows_of.index_of(key.bytes)] = [
                    (corpus.index_of(k.bytes), score) for k, score in best.items()]
            except KeyError as e:
                raise ValueError("output line %d names an id not given: %s"
                                 % (n + 1, _uuid_text(e.args[0]))) from None
            kept.append(line)
        return cls(rows_of.ids, corpus.ids, rows, kept, counters)

    @property
    def matrix(self):
        """The scores as a scipy CSR matrix, rows in the order of :attr:`ids`,
        columns in that of :attr:`neighbour_ids` (indices sorted)."""
        import scipy.sparse as sp

        r, c, s = self._triples()
        m = sp.csr_matrix((s, (r, c)), shape=(len(self.ids), len(self.neighbour_ids)))
        m.sort_indices()
        return m

    def rows(self):
        """``{id: [(neighbour id, score), ...]}``, best first, for the rows with
        a neighbour."""
        return {self.ids[i]: [(self.neighbour_ids[j], s) for j, s in best]
                for i, best in sorted(self._rows.items())}

    def to_pandas(self):
        """A long DataFrame, one row a pair: ``id``, ``neighbour``, ``score``,
        ``rank`` (1 for a row's best), in the order of :attr:`ids` (needs
        pandas: ``pip install mrsparse[notebook]``)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("to_pandas() needs pandas: pip install pandas "
                              "(or mrsparse[notebook])") from None
        r, c, s = self._triples()
        rank = np.concatenate([np.arange(1, len(b) + 1) for _, b in sorted(self._rows.items())]
                              or [np.empty(0, np.int64)])
        return pd.DataFrame({"id": [self.ids[i] for i in r],
                             "neighbour": [self.neighbour_ids[j] for j in c],
                             "score": s, "rank": rank.astype(np.int64)})

    def _triples(self):
        items = sorted(self._rows.items())
        r = np.array([i for i, best in items for _ in best], np.int64)
        c = np.array([j for _, best in items for j, _ in best], np.int64)
        s = np.array([v for _, best in items for _, v in best], np.float64)
        return r, c, s

    def __repr__(self):
        pairs = sum(map(len, self._rows.values()))
        return "<Neighbours: %d rows, %d pairs>" % (len(self.ids), pairs)


def _uuid_text(key):
    import uuid

    return str(uuid.UUID(bytes=key)) if isinstance(key, bytes) and len(key) == 16 else repr(key)


def _read_line(protocol, line):
    """``(key UUID, {UUID: score})`` of an output line keyed by UUIDs or by
    the ids themselves (``--ids any``: ``<id> TAB [[<id>, score], ...]``)."""
    if line.partition(b"\t")[2][:1] != b"[":
        return protocol.read(line)
    key, pairs = NamedNeighboursProtocol().read(line)
    try:
        return uuid_of(key), {uuid_of(k): score for k, score in pairs}
    except (TypeError, ValueError) as e:
        raise ValueError("cannot read the output line %.80r: %s" % (line, e)) from None

