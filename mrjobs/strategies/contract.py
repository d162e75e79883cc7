"""The contract between the dot-products job and its strategies.

A strategy (:mod:`mrjobs.strategies.blocks`, :mod:`mrjobs.strategies.stripes`) is built from a
:class:`Context` -- what it may use of the job, and nothing more -- and
follows :class:`Strategy`: the vectors step hands it each prepared vector
(:meth:`Strategy.take`), and its :meth:`Strategy.steps` are reducer steps
whose init and final the job wraps with the task's own (counters in, counters
out).  A strategy never sees the job.
"""
from dataclasses import dataclass
from typing import Any, Callable, Iterator, NamedTuple, Optional, Protocol, runtime_checkable

__all__ = ["Context", "Step", "Strategy", "by_family"]


@dataclass(frozen=True)
class Context:
    """What a strategy gets of the running job.

    Attributes
    ----------
    scorer : mrjobs.scoring.Scorer
        Dot products to kept scores (measure, threshold, finite check).
    counts : mrjobs.counters.Counters
        The task's counters (the same object for the whole task).
    postings : mrjobs.strategies.postings.PostingAssembler
        A feature's whole posting list from its fragments, after the df-cut.
    wire_dtype : numpy dtype
        Dtype of the weights and scores written between steps.
    buffer_entries : int
        Entries a task buffers before it flushes (``--buffer-entries``).
    top_k, include_self, queries, max_df, blocks
        The options ``--top-k``, ``--include-self``, ``--queries`` (True when
        given), ``--max-df`` and ``--blocks``.
    both_ways : bool
        Under ``--queries``, the corpus vectors' rows too (their best among
        the queries; the update run's ``--both-ways``).
    query_blocks : int, optional
        Under ``--queries``, the queries' block count (``--query-blocks``,
        the update run's; default ``blocks``).
    floors : str, optional
        With ``both_ways`` and ``top_k``: a file of the corpus vectors'
        floors (``--floors``, :data:`mrjobs.strategies.blocks.FLOOR_DTYPE`).
    df_table : str, optional
        The prefix strategy's table of each feature's count (``--df-table``:
        :mod:`mrjobs.strategies.dftable`); None: its df steps find them.
    repeats : bool
        The prefix strategy's copies carry no earlier prefix features, and a
        pair met at several prefix features is kept at its best by the rows
        step (:func:`mrjobs.strategies.prefixing.repeats`).
    threads : int
        Threads a block pair's reducer may use (``--pair-threads``).
    prune : bool
        Skip products that bounds rule out (False with ``--no-prune``).
    df_cut : str
        The form of the ``--max-df`` cut under blocks, ``"counts"`` or
        ``"join"`` (``--df-cut-form``, set by the launcher; see
        :func:`mrjobs.strategies.sizing.df_cut_form`).
    status : mrjobs.runtime.taskstatus.TaskStatus, optional
        The task's status line (the blocks strategy tells its block pairs'
        products there).
    prepare_side : callable, optional
        Set when the mappers hand :meth:`Strategy.take` the vectors as read
        (the blocks strategy without ``--max-df``: no vectors step);
        ``prepare_side(ids, lengths, feats, weights, query, count)`` merges
        and prepares one side of a block pair as the vectors step would
        (:func:`mrjobs.strategies.vectors.side_preparer`).
    """

    scorer: Any
    counts: Any
    postings: Any
    wire_dtype: Any
    buffer_entries: int
    top_k: Optional[int] = None
    include_self: bool = False
    queries: bool = False
    both_ways: bool = False
    floors: Optional[str] = None
    query_blocks: Optional[int] = None
    df_table: Optional[str] = None
    repeats: bool = False
    max_df: Optional[int] = None
    blocks: Optional[int] = None
    threads: int = 1
    prune: bool = True
    df_cut: str = "join"
    status: Any = None
    prepare_side: Any = None


class Step(NamedTuple):
    """One reducer step of a strategy: ``reducer(key, values)``, and optional
    ``init()`` and ``final()`` (a generator function) of the task."""

    reducer: Callable
    init: Optional[Callable] = None
    final: Optional[Callable] = None


@runtime_checkable
class Strategy(Protocol):
    """What the dot-products job asks of a strategy."""

    #: the ``--strategy`` name
    name: str
    #: True when the last of :meth:`steps` writes the output lines itself
    #: (no rows step)
    writes_rows: bool

    def __init__(self, context: Context) -> None: ...

    def steps(self) -> list:
        """The strategy's :class:`Step` s, between the vectors and rows steps
        (the last of the job's steps with :attr:`writes_rows`)."""

    def take_init(self) -> None:
        """Called once per vectors-step reducer task (or, with
        :attr:`Context.prepare_side`, map task), before :meth:`take`."""

    def take(self, doc: bytes, query: bool, ids, weights, stat) -> Iterator:
        """One prepared vector of the vectors step (with
        :attr:`Context.prepare_side`, one as read: ``stat`` None); yields
        records to write."""

    def take_final(self) -> Iterator:
        """The end of a vectors-step reducer (or map) task; yields what is
        buffered."""


def by_family(records):
    """``(query, [records])`` for each family among a key's records (corpus
    first, then queries): under ``--queries`` a vector id may be in both."""
    families = {}
    for r in records:
        families.setdefault(bool(r.query), []).append(r)
    return sorted(families.items(), key=lambda kv: kv[0])
