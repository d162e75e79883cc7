"""A small job that uses VectorProtocol as its internal protocol.

Input lines: ``<doc uuid> <feature uuid> <weight>``. Output: one JSON line per
feature with its posting list ``{doc uuid: summed weight}``. Used by the tests to
check that the codecs survive mrjob's shuffle on the inline and local runners.
"""
import uuid

import numpy as np
from mrjob.job import MRJob
from mrjob.protocol import JSONProtocol

from mrcodecs import SparseVector, VectorProtocol


class MRPostingLists(MRJob):
    INTERNAL_PROTOCOL = VectorProtocol
    OUTPUT_PROTOCOL = JSONProtocol

    def mapper(self, _, line):
        doc, feature, weight = line.split()
        yield uuid.UUID(feature), SparseVector.from_dict({uuid.UUID(doc): float(weight)})

    def reducer(self, feature, vectors):
        vectors = list(vectors)
        merged = SparseVector(
            np.concatenate([v.ids for v in vectors]),
            np.concatenate([v.weights for v in vectors]),
            merge=True,
        )
        yield str(feature), {str(u): w for u, w in merged.to_dict().items()}


if __name__ == "__main__":
    MRPostingLists.run()
