"""Compressed input read to its end, as Hadoop reads it.

A ``.gz`` file may hold several gzip members and a ``.bz2`` file several
bz2 streams, one after another (``cat a.gz b.gz``, bgzip, ``pigz
--independent``, log rotators, ``pbzip2``).  Hadoop's codecs read every one
(``DecompressorStream`` resets its decompressor at each member's end) and
fail a task on a file that ends inside one ("Unexpected end of input
stream").  mrjob's ``mrjob.cat.gunzip_stream`` and ``bunzip2_stream`` stop
at the end of the first, silently (or, for bz2, with an ``EOFError``
traceback), and read a truncated file as far as it goes without a word.

:func:`read_every_member` replaces those two functions in :mod:`mrjob.cat`
by :func:`gunzip_stream` and :func:`bunzip2_stream`, which read every member
and raise :class:`CompressedInputError` -- one line naming the file -- for
data that is corrupt or ends inside a member.  ``mrjob.cat.decompress``
looks them up when called, so every user of it (the sim runners' input
splitting, the local filesystem's ``cat``, ``MRJob``'s own reading) gets
them, wherever it imported ``decompress`` from.  The runners that read
compressed input on this machine call it as they are made
(:mod:`mrjobs.runtime.inlinerunner`, :mod:`mrjobs.runtime.localrunner`).
"""
import bz2
import zlib

import mrjob.cat

__all__ = ["CompressedInputError", "Members", "gunzip_stream", "bunzip2_stream",
           "read_every_member",
           "READ_BYTES", "PIECE_BYTES"]

#: compressed bytes read at a time
READ_BYTES = 1 << 16
#: the most decompressed bytes yielded at a time: what bounds the memory
#: (bz2 turns a few hundred bytes into a gigabyte of one repeated byte)
PIECE_BYTES = 1 << 20


class CompressedInputError(OSError):
    """Compressed input that is corrupt or ends inside a member: one line,
    naming the file (an :class:`OSError`, as the planner and the launcher
    tell it)."""


def _zlib_pieces(d, data, limit):
    """The output of zlib decompressor ``d`` for ``data``, at most ``limit``
    bytes a piece; input past the member's end is left in ``d.unused_data``."""
    while True:
        out = d.decompress(data, limit)
        yield out
        data = d.unconsumed_tail
        # less than the limit with no input left: zlib has nothing more for now
        if d.eof or (not data and len(out) < limit):
            return


def _bz2_pieces(d, data, limit):
    """The output of bz2 decompressor ``d`` for ``data``, at most ``limit``
    bytes a piece (``d`` keeps what it has not read yet)."""
    while True:
        yield d.decompress(data, limit)
        data = b""
        if d.eof or d.needs_input:
            return


#: kind -> (a new decompressor of one member, its pieces function)
_KINDS = {
    "gzip": (lambda: zlib.decompressobj(16 + zlib.MAX_WBITS), _zlib_pieces),
    "bz2": (bz2.BZ2Decompressor, _bz2_pieces),
}


class Members:
    """Decompresses every member (gzip) or stream (bz2) of one file.

    Parameters
    ----------
    kind : {"gzip", "bz2"}
    name : str, optional
        The file's name, for errors.

    Attributes
    ----------
    members : int
        Members (streams) begun so far.
    out_bytes : int
        Decompressed bytes yielded so far.
    """

    def __init__(self, kind, name=None):
        self.kind, self.name = kind, name or "compressed input"
        self.members = self.out_bytes = 0
        self._new, self._pieces = _KINDS[kind]
        self._unit = "member" if kind == "gzip" else "stream"
        self._d = None

    def pieces(self, chunks, whole=True):
        """Decompressed bytes of ``chunks`` (compressed bytes), in pieces of
        at most :data:`PIECE_BYTES`.

        ``whole``: the chunks are the whole file, which then must not end
        inside a member; False for a head of the file.
        """
        for chunk in chunks:
            while chunk:
                if self._d is None or self._d.eof:  # the next member begins here
                    self._d = self._new()
                    self.members += 1
                yield from self._decompress(chunk)
                chunk = self._d.unused_data if self._d.eof else b""
        if whole and self._d is not None and not self._d.eof:
            raise self._error("truncated %s data: the file ends inside %s %d"
                              % (self.kind, self._unit, self.members))

    def _decompress(self, chunk):
        try:
            for out in self._pieces(self._d, chunk, PIECE_BYTES):
                if out:
                    self.out_bytes += len(out)
                    yield out
        except (zlib.error, OSError, EOFError) as e:
            why = str(e).split(": ", 1)[-1] if isinstance(e, zlib.error) else str(e)
            raise self._error("corrupt %s data in %s %d (%s)"
                              % (self.kind, self._unit, self.members, why.lower())) from None

    def _error(self, what):
        return CompressedInputError("%s: %s, after %d bytes of data; `%s -t` checks the "
                                    "file" % (self.name, what, self.out_bytes,
                                              "gzip" if self.kind == "gzip" else "bzip2"))


def _chunks(fileobj, bufsize):
    """mrjob's readable: a file object, or an iterable of byte chunks."""
    if not hasattr(fileobj, "read"):
        return iter(fileobj)
    return iter(lambda: fileobj.read(bufsize), b"")


def _name(fileobj):
    name = getattr(fileobj, "name", None)
    return name if isinstance(name, str) else None


def gunzip_stream(fileobj, bufsize=READ_BYTES):
    """Every gzip member of ``fileobj`` (an object with ``read()``, or an
    iterable of byte chunks) decompressed, in chunks: ``mrjob.cat``'s
    function of that name, reading past the first member."""
    return Members("gzip", _name(fileobj)).pieces(_chunks(fileobj, bufsize))


def bunzip2_stream(fileobj, bufsize=READ_BYTES):
    """Every bz2 stream of ``fileobj`` decompressed, in chunks:
    ``mrjob.cat``'s function of that name, reading past the first stream."""
    return Members("bz2", _name(fileobj)).pieces(_chunks(fileobj, bufsize))


def read_every_member():
    """Put :func:`gunzip_stream` and :func:`bunzip2_stream` in
    :mod:`mrjob.cat` in place of mrjob's (idempotent)."""
    mrjob.cat.gunzip_stream = gunzip_stream
    mrjob.cat.bunzip2_stream = bunzip2_stream
