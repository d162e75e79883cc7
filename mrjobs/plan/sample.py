"""The planner's sample of an input: at most ``--sample-lines`` lines, one
after each of as many evenly spaced byte offsets, parsed as the job parses
them (see :mod:`mrjobs.plan`, "The sample").  A compressed file (``.gz``,
``.bz2``) is read decompressed, as mrjob reads it
(:func:`mrjobs.strategies.sizing.open_data`), its offsets in its
uncompressed bytes (:func:`~mrjobs.strategies.sizing.data_bytes`)."""
import glob
from dataclasses import dataclass

import numpy as np

from mrcodecs import ID_DTYPE
from mrjobs.pairs.idarrays import sort_sum
from mrjobs.parsing import POSTINGS, InputError, parse_vector
from mrjobs.runtime.paths import listed_files
from mrjobs.strategies.sizing import COMPRESSED, data_bytes, open_data

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
    """The local files of an input path (a file, a directory or a glob): the
    files the job reads, as :func:`mrjobs.runtime.paths.listed_files` lists them
    (the one place the planner lists a directory, so that what the job
    skips in one -- Hadoop's hidden ``_`` and ``.`` names -- is skipped
    here by the same rule)."""
    if path == "-" or "://" in path:
        raise PlanError("the plan reads local files; %s is not one (copy a part of the "
                        "input here, and give --vectors N for the whole)" % path)
    if not glob.glob(path):
        raise PlanError("input path %s does not exist" % path)
    return list(listed_files(path))


def _head(path, size=1 << 16):
    """The first ``size`` bytes of ``path``'s data (decompressed)."""
    head = b""
    for chunk in open_data(path, size):
        head += chunk
        if len(head) >= size:
            break
    return head[:size]


def _whole(path):
    """Every line of ``path``'s data (decompressed)."""
    return b"".join(open_data(path)).splitlines()


def _lines(chunks):
    """(offset, line with its ending) of the lines of the data ``chunks``."""
    pos, rest = 0, b""
    for chunk in chunks:
        parts = (rest + chunk).split(b"\n")
        rest = parts.pop()
        for part in parts:
            yield pos, part + b"\n"
            pos += len(part) + 1
    if rest:
        yield pos, rest


def _after_offsets(path, offsets):
    """The line after each of the line-holding ``offsets`` (ascending), read
    in one pass through ``path``'s data: a compressed file cannot seek.  The
    same lines as seeking to each offset would take (:func:`_sample_lines`):
    an offset inside a line already taken takes none."""
    out, j, take = [], 0, False
    for start, line in _lines(open_data(path)):
        end = start + len(line)
        holds = j < len(offsets) and offsets[j] < end
        while j < len(offsets) and offsets[j] < end:
            j += 1
        if take:
            out.append(line.rstrip(b"\r\n"))
        take = holds and not take
        if j == len(offsets) and not take:
            break
    return out


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
    head = _head(files[int(np.argmax(sizes))])
    mean = len(head) / max(1, head.count(b"\n")) if head else 1
    if total <= 1.5 * lines * mean:
        return [line for path in files for line in _whole(path)], True
    out = []
    for path, offsets in zip(files, _offsets(sizes, lines)):
        if path.endswith(COMPRESSED):
            out.extend(_after_offsets(path, offsets))
            continue
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


def _doc_hash(docs):
    """A 64-bit hash of each 16-byte id (``S16`` array): both halves mixed by
    odd multipliers, so that ids that are not random (counters) spread."""
    h = np.frombuffer(docs.tobytes(), np.uint64).reshape(-1, 2)
    with np.errstate(over="ignore"):
        x = h[:, 0] * np.uint64(0x9E3779B97F4A7C15) ^ h[:, 1] * np.uint64(0xC2B2AE3D27D4EB4F)
        return x ^ (x >> np.uint64(29))


def _postings_sample(files, sizes, lines, paths):
    """A :class:`Sample` of the vectors that posting lists (``--input-format
    postings``: a line is a feature's documents) hold: every line is read,
    and the entries of the documents whose id hashes below a bound are kept,
    the bound lowered (and the documents above it dropped) whenever more
    than ``2 lines`` documents are kept, so that the kept ones are whole
    vectors of a uniform sample of the documents.  Their count over the
    bound's share of the hashes estimates the number of vectors (all of them,
    exactly, where the bound never fell)."""
    bound, bad, n_lines = 2 ** 64, 0, 0
    parts = []  # (docs, feature, weights) of the kept entries
    for path in files:
        for _, line in _lines(open_data(path)):
            n_lines += 1
            try:
                parsed = parse_vector(line.rstrip(b"\r\n"), POSTINGS)
            except InputError:
                bad += 1
                continue
            if parsed is None:
                continue
            feat, docs, w = parsed
            keep = _doc_hash(docs) < bound if bound < 2 ** 64 else slice(None)
            parts.append((docs[keep], feat, w[keep]))
            if len(parts) % 1000 == 0:
                parts, bound = _lower(parts, bound, 2 * lines)
    parts, bound = _lower(parts, bound, 2 * lines)
    docs = np.concatenate([d for d, _, _ in parts]) if parts else np.empty(0, ID_DTYPE)
    if not docs.shape[0]:
        raise PlanError("not one posting list in the %d line(s) of %s (%d bad): check the "
                        "input paths and --input-format" % (n_lines, ", ".join(paths), bad))
    feats = np.concatenate([np.full(d.shape[0], f, ID_DTYPE) for d, f, _ in parts])
    weights = np.concatenate([w for _, _, w in parts]).astype(np.float64)
    nonzero = weights != 0.0  # as the other formats' sample: a 0.0 is no entry
    docs, feats, weights = docs[nonzero], feats[nonzero], weights[nonzero]
    order = np.lexsort((feats, docs))
    docs, feats, weights = docs[order], feats[order], weights[order]
    start = np.flatnonzero(np.r_[True, docs[1:] != docs[:-1]])
    lengths = np.diff(np.r_[start, docs.shape[0]])
    complete = bound == 2 ** 64
    vectors = start.shape[0] if complete else start.shape[0] * 2.0 ** 64 / bound
    total = sum(sizes)
    return Sample(docs[start], lengths.astype(np.int64), feats, weights,
                  SampleRead(total, total * start.shape[0] / vectors, n_lines, bad, complete,
                             len(files)))


def _lower(parts, bound, most):
    """``parts`` (see :func:`_postings_sample`) keeping at most about
    ``most`` documents: the bound lowered to the ``most // 2``-th smallest
    hash where more are kept."""
    if not parts:
        return parts, bound
    docs = np.unique(np.concatenate([d for d, _, _ in parts]))
    if docs.shape[0] <= most:
        return parts, bound
    bound = int(np.sort(_doc_hash(docs))[most // 2])
    parts = [(d[k], f, w[k]) for d, f, w in parts
             for k in [_doc_hash(d) < np.uint64(bound)] if k.any()]
    return parts, bound


def read_sample(paths, lines=5000, fmt="auto"):
    """A :class:`Sample` of the input ``paths`` (local files, directories,
    globs): at most ``lines`` lines, parsed as the job parses them (posting
    lists: the vectors they hold, :func:`_postings_sample`)."""
    files = [f for p in paths for f in input_files(p)]
    sizes = [data_bytes(f) for f in files]
    if not sum(sizes):
        raise PlanError("the input (%s) is empty" % ", ".join(paths))
    if fmt == POSTINGS:
        return _postings_sample(files, sizes, lines, paths)
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
