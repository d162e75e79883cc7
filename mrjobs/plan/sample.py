"""The planner's sample of an input: at most ``--sample-lines`` lines, one
after each of as many evenly spaced byte offsets, parsed as the job parses
them (see :mod:`mrjobs.plan`, "The sample")."""
import glob
import os
from dataclasses import dataclass

import numpy as np

from mrcodecs import ID_DTYPE
from mrjobs.kernels import sort_sum
from mrjobs.parsing import InputError, parse_vector
from mrjobs.runtime.paths import matches

__all__ = ["PlanError", "SampleRead", "Sample", "input_files", "read_sample"]


class PlanError(Exception):
    """A problem that stops the plan, told as one line."""


@dataclass(frozen=True)
class SampleRead:
    """What reading a sample saw: ``total_bytes`` of the input,
    ``sampled_bytes`` and ``lines`` of the lines read, ``bad`` (lines the
    job would skip), ``complete`` (the whole input was read), ``files``
    (how many)."""

    total_bytes: int
    sampled_bytes: int
    lines: int
    bad: int
    complete: bool
    files: int


class Sample:
    """Vectors sampled from one family's input, with what is needed to scale.

    Attributes: ``docs`` (S16), ``lengths``, ``feats`` (S16, vector after
    vector, sorted within one), ``weights``; ``total_bytes`` of the input,
    ``sampled_bytes`` and ``lines`` of the lines read, ``bad`` (lines the
    job would skip), ``complete`` (the whole input was read), ``files``; the
    last six come in a :class:`SampleRead`.
    """

    def __init__(self, docs, lengths, feats, weights, read):
        self.docs, self.lengths, self.feats, self.weights = docs, lengths, feats, weights
        self.total_bytes, self.sampled_bytes = read.total_bytes, read.sampled_bytes
        self.lines, self.bad, self.complete, self.files = (read.lines, read.bad, read.complete,
                                                           read.files)

    @property
    def n(self):
        return self.docs.shape[0]

    def vectors(self):
        """Estimated vectors in the whole input."""
        if self.complete or not self.sampled_bytes:
            return float(self.n)
        return self.n * self.total_bytes / self.sampled_bytes


def input_files(path):
    """The local files of an input path (a file, a directory or a glob)."""
    if path == "-" or "://" in path:
        raise PlanError("the plan reads local files; %s is not one (copy a part of the "
                        "input here, and give --vectors N for the whole)" % path)
    if not glob.glob(path):
        raise PlanError("input path %s does not exist" % path)
    return list(matches(path))


def _offsets(sizes, lines):
    """Evenly spaced byte offsets, ``lines`` in all, shared among the files in
    proportion to their sizes (largest remainders)."""
    total = sum(sizes)
    share = np.array(sizes, np.float64) * lines / max(total, 1)
    count = np.floor(share).astype(int)
    rest = lines - int(count.sum())
    if rest > 0:
        count[np.argsort(-(share - count), kind="stable")[:rest]] += 1
    return [[int((i + 0.5) * size / c) for i in range(c)] if c else []
            for size, c in zip(sizes, count)]


def _sample_lines(files, sizes, lines):
    """(lines read, complete): every line of a small input, else one line after
    each evenly spaced offset."""
    total = sum(sizes)
    with open(files[int(np.argmax(sizes))], "rb") as f:
        head = f.read(1 << 16)
    mean = len(head) / max(1, head.count(b"\n")) if head else 1
    if total <= 1.5 * lines * mean:
        out = []
        for path in files:
            with open(path, "rb") as f:
                out.extend(f.read().splitlines())
        return out, True
    out = []
    for path, offsets in zip(files, _offsets(sizes, lines)):
        taken_end = -1
        with open(path, "rb") as f:
            for off in offsets:
                if off <= taken_end:
                    continue
                f.seek(off)
                f.readline()          # the rest of the line holding the offset
                start = f.tell()
                line = f.readline()
                if line:
                    out.append(line.rstrip(b"\r\n"))
                    taken_end = start + len(line) - 1
    return out, False


def read_sample(paths, lines=5000, fmt="auto"):
    """A :class:`Sample` of the input ``paths`` (local files, directories,
    globs): at most ``lines`` lines, parsed as the job parses them."""
    files = [f for p in paths for f in input_files(p)]
    sizes = [os.path.getsize(f) for f in files]
    if not sum(sizes):
        raise PlanError("the input (%s) is empty" % ", ".join(paths))
    raw, complete = _sample_lines(files, sizes, lines)
    docs, lengths, feats, weights = [], [], [], []
    bad = 0
    for line in raw:
        try:
            parsed = parse_vector(line, fmt)
        except InputError:
            bad += 1
            continue
        if parsed is None:
            continue
        doc, ids, w = parsed
        ids, w, _, _ = sort_sum(ids, w)
        keep = w != 0.0
        docs.append(doc)
        feats.append(ids[keep])
        weights.append(w[keep])
        lengths.append(int(keep.sum()))
    if not docs:
        raise PlanError("not one vector in the %d sampled line(s) of %s (%d bad): check "
                        "the input paths and --input-format" % (len(raw), ", ".join(paths), bad))
    return Sample(np.frombuffer(b"".join(docs), ID_DTYPE), np.array(lengths, np.int64),
                  np.concatenate(feats), np.concatenate(weights).astype(np.float64),
                  SampleRead(sum(sizes), sum(len(l) + 1 for l in raw), len(raw), bad,
                             complete, len(files)))
