"""mrsparse from Python (a notebook, a pipeline): :func:`neighbours` runs the
dot products job on a scipy sparse matrix with ids of any kind and gives the
neighbours back as a scipy matrix or a DataFrame; :func:`write_matrix` writes
a matrix as the jobs' compact input; :class:`Neighbours` reads any output of
the job back; :mod:`mrjobs.api.ids` maps ids to the jobs' UUID keys.

``mrjobs.neighbours`` is :func:`neighbours`.
"""
from mrjobs.api.ids import NAMESPACE, IdMap, uuid_of
from mrjobs.api.matrices import Neighbours, neighbours, write_matrix

__all__ = ["NAMESPACE", "IdMap", "Neighbours", "neighbours", "uuid_of", "write_matrix"]
