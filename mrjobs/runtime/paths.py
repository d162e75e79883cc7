"""Local paths and URIs of a job's inputs and output, in one place.

* :func:`is_local`, :func:`local_path` -- which paths are on this machine
  (no scheme, or ``file:``) and the plain path of one.
* :func:`refuse_overlap` -- an ``--output-dir`` that is, holds or lies inside
  one of the job's input paths is refused before anything is written or
  removed (local paths resolved, URIs compared by scheme, authority and path).
* :func:`input_kind`, :func:`refuse_device` -- pipes and stdin (read once into
  files by :mod:`mrjobs.runtime.streams`), devices refused.
* :func:`is_hidden`, :func:`listed_files`, :func:`refuse_unread` -- the files
  of an input path as Hadoop's FileInputFormat lists them (names beginning
  with ``_`` or ``.`` skipped: ``_SUCCESS``, ``_logs/``, ``.part-00000.crc``),
  the one listing every runner, check and size of the job goes by.
* :func:`local_files`, :func:`local_input_files`, :func:`local_lines`,
  :func:`tree_bytes` -- the files a local path, directory or glob names, their
  lines, a directory's bytes.
"""
import fnmatch
import glob
import os
import re
import stat
import sys
from urllib.parse import urlsplit

from mrjobs.runtime.compressed import read_every_member

__all__ = ["is_local", "local_path", "relation", "refuse_overlap", "OverlapError", "InputPathError",
           "STDIN", "stdin_fd", "refuse_device", "is_stream", "input_kind", "is_hidden",
           "listed_files", "refuse_unread", "RECURSIVE_KEYS", "HadoopInputs", "tree_bytes",
           "split_path", "local_files", "local_input_files", "local_lines", "refuse_query_overlap",
           "is_query_path", "query_names", "queries_for_tasks", "input_file"]

_GLOB = re.compile(r"[*?\[]")

class OverlapError(ValueError):
    """An output directory that would overwrite or swallow an input."""


# -- output apart from the inputs ----------------------------------------------

def is_local(path):
    scheme = urlsplit(path).scheme
    return scheme in ("", "file") or len(scheme) == 1  # a Windows drive letter


def local_path(path):
    """A local path or ``file:`` URI as a plain path (``file://x`` -- as mrjob
    writes a relative path -- is ``x``)."""
    if not path.startswith("file:"):
        return path
    parts = urlsplit(path)
    if parts.netloc and parts.netloc != "localhost":
        return parts.netloc + parts.path
    return parts.path or "/"


def _resolve_local(path):
    """Absolute, symlinks resolved, as far as the path has no glob characters."""
    parts = os.path.abspath(local_path(path)).split(os.sep)
    for i, part in enumerate(parts):
        if _GLOB.search(part):
            head = os.path.realpath(os.sep.join(parts[:i]) or os.sep)
            return os.path.join(head, *parts[i:])
    return os.path.realpath(os.sep.join(parts))


def _key(path):
    """(scheme, authority, path components) of a path or URI."""
    if is_local(path):
        return "file", "", [c for c in _resolve_local(path).split(os.sep) if c]
    parts = urlsplit(path)
    norm = os.path.normpath(parts.path or "/").replace(os.sep, "/")
    return parts.scheme.lower(), parts.netloc, [c for c in norm.split("/") if c]


def relation(out, inp):
    """How the output ``out`` stands to the input ``inp`` (which may be a
    glob): "is", "holds", "lies inside" or None."""
    o_scheme, o_auth, o = _key(out)
    i_scheme, i_auth, i = _key(inp)
    if o_scheme != i_scheme or (o_auth and i_auth and o_auth != i_auth):
        return None
    if not all(fnmatch.fnmatchcase(a, b) for a, b in zip(o, i)):
        return None
    return "is" if len(o) == len(i) else "holds" if len(o) < len(i) else "lies inside"


def refuse_overlap(output_dir, inputs):
    """Raise :class:`OverlapError` if ``output_dir`` is, holds or lies inside
    one of ``inputs`` (``(option, path)`` pairs; ``option`` names where the
    path came from, e.g. ``"the input"`` or ``"--queries"``).

    >>> refuse_overlap("/data", [("the input", "/data/in.jsonl")])
    Traceback (most recent call last):
    ...
    mrjobs.runtime.paths.OverlapError: --output-dir /data holds the input /data/in.jsonl: ...
    >>> refuse_overlap("hdfs:///out", [("the input", "hdfs://nn:8020/data/*.jsonl")])
    """
    if not output_dir:
        return
    for option, path in inputs:
        if path == "-":
            continue
        candidates = [path]
        if is_local(path):  # what the glob finds, symlinks resolved
            import glob
            candidates += [os.path.realpath(m) for m in glob.glob(local_path(path))]
        for candidate in candidates:
            rel = relation(output_dir, candidate)
            if rel:
                raise OverlapError(
                    "--output-dir %s %s %s %s: the job would write its output over its "
                    "own input (and --overwrite-output would remove it). Choose an output "
                    "directory apart from every input" % (output_dir, rel, option, path))


# -- pipes, stdin and devices as input -------------------------------------------

class InputPathError(ValueError):
    """An input that cannot be read as a job's input (a device, a pipe in a
    directory)."""


#: stands for stdin in :meth:`mrjobs.runtime.streams.InputStreams.read`
STDIN = object()


def stdin_fd():
    """The file descriptor mrjob would read stdin from (0 where Python has no
    sys.stdin: fd 0 was closed)."""
    try:
        return sys.stdin.fileno()
    except (AttributeError, ValueError, OSError):
        return 0


def refuse_device(st, what, tty=False, socket=False):
    """A JobError for what is not a regular file, a directory or a stream
    (a pipe or /dev/null; a socket where ``socket``: stdin's)."""
    mode = st.st_mode
    if (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or is_stream(st)
            or socket and stat.S_ISSOCK(mode)):
        return
    kind = ("a terminal" if tty else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "not a regular file")
    raise InputPathError("%s is %s, not a file, a directory or a pipe: the job would read it "
                   "without end or not at all (give input files, or a pipe such as "
                   "<(zcat x.gz))" % (what, kind))


def is_stream(st):
    """A pipe, or /dev/null: read once, to its end."""
    if stat.S_ISFIFO(st.st_mode):
        return True
    if stat.S_ISCHR(st.st_mode):
        try:
            return st.st_rdev == os.stat(os.devnull).st_rdev
        except OSError:
            return False
    return False


def input_kind(path, option):
    """"stream" where the local path (no glob) is a pipe or /dev/null, else
    "files"; a JobError naming the path where it, or a file its glob or
    directory holds, is a device (or a pipe, which only a path of its own
    can name: each is read once)."""
    if path == "-" or not is_local(path):
        return "files"
    plain = local_path(path)
    try:
        st = os.stat(plain)
    except OSError:
        st = None
    if st is not None and not glob.has_magic(plain):
        refuse_device(st, "%s %s" % (option, path))
        if is_stream(st):
            return "stream"
    for f in listed_files(plain):
        try:
            fst = os.stat(f)
        except OSError:
            continue  # (vanished, or a dangling link: mrjob says so)
        if not stat.S_ISREG(fst.st_mode):
            if is_stream(fst):
                raise InputPathError("%s %s holds %s, a pipe: name a pipe as an input of its "
                               "own (it can be read only once)" % (option, path, f))
            refuse_device(fst, "%s (in %s %s)" % (f, option, path))
    return "files"


def is_hidden(name):
    """True for a file or directory name Hadoop's FileInputFormat skips (its
    ``hiddenFileFilter``): one that begins with ``_`` or ``.``, as the
    ``_SUCCESS``, ``_logs/`` and ``.part-00000.crc`` of a job's output.

    >>> [is_hidden(n) for n in ("_SUCCESS", ".part-00000.crc", "part-00000", "a_b.jsonl")]
    [True, True, False, False]
    """
    return name.startswith(("_", "."))


def _name(path):
    """The last name of a path as Hadoop's ``Path.getName()`` gives it (``x/``
    and ``x/.`` are ``x``; ``.`` is the current directory's name)."""
    return os.path.basename(os.path.normpath(os.path.abspath(path)))


def listed_files(path):
    """Every file the job reads for a local path, glob or directory, as
    Hadoop's FileInputFormat lists it, in a fixed order (the glob's matches
    sorted, a directory's tree walked in sorted order; paths unresolved).

    A match whose own name is hidden (:func:`is_hidden`) is no input, even
    named on its own: Hadoop says "Input path does not exist" for it.  In a
    directory, hidden files and directories are skipped at every depth;
    other subdirectories are read, as the inline and local runners always
    did and Hadoop does with ``mapreduce.input.fileinputformat.input.dir.recursive``
    (without it Hadoop refuses them: :func:`refuse_unread` says so first).
    """
    for m in sorted(glob.glob(path)):
        if is_hidden(_name(m)):
            continue
        if os.path.isdir(m):
            yield from _walk(m, set())
        else:
            yield m


def _walk(folder, seen):
    """The files under ``folder``, hidden names skipped, links followed (as
    mrjob's runners read them), each directory once (a link loop ends)."""
    try:
        st = os.stat(folder)
        names = sorted(os.listdir(folder))
    except OSError:
        return
    if (st.st_dev, st.st_ino) in seen:
        return
    seen.add((st.st_dev, st.st_ino))
    for name in names:
        if is_hidden(name):
            continue
        path = os.path.join(folder, name)
        if os.path.isdir(path):
            yield from _walk(path, seen)
        else:
            yield path


#: Hadoop's switch to read an input directory's subdirectories (and its
#: deprecated name); without it a subdirectory fails the job ("Not a file")
RECURSIVE_KEYS = ("mapreduce.input.fileinputformat.input.dir.recursive",
                  "mapred.input.dir.recursive")


def refuse_unread(path, option, recursive=False):
    """An :class:`InputPathError` for a local input path Hadoop would not
    read: one whose every match has a hidden name (Hadoop: "Input path does
    not exist", or "matches 0 files" for a glob), or -- unless ``recursive``
    -- a directory holding a subdirectory that is not hidden (Hadoop: "Not a
    file").  The inline and local runners would read both; every runner
    refuses them, before the work."""
    plain = local_path(path)
    found = sorted(glob.glob(plain))
    if found and all(is_hidden(_name(m)) for m in found):
        raise InputPathError(
            "%s %s is hidden: its name begins with %r, and Hadoop reads no file or "
            "directory so named, as it skips _SUCCESS, _logs/ and .crc files (it says "
            "\"Input path does not exist\"). Rename it"
            % (option, path, _name(found[0])[0]))
    if recursive:
        return
    for m in found:
        sub = _subdirectory(m) if os.path.isdir(m) and not is_hidden(_name(m)) else None
        if sub:
            raise InputPathError(
                "%s %s holds the directory %s: Hadoop reads the files of an input "
                "directory, not its subdirectories (\"Not a file\"). Give the "
                "subdirectories as inputs (e.g. %s), or pass -D %s=true"
                % (option, path, sub, os.path.join(path, "*"), RECURSIVE_KEYS[0]))


class HadoopInputs:
    """Mixed in before mrjob's inline or local runner: the first step reads
    the files :func:`listed_files` gives (mrjob's read every file under an
    input directory, ``.crc`` files and ``_SUCCESS`` included), and a
    ``.gz`` or ``.bz2`` file to its end, every member
    (:func:`mrjobs.runtime.compressed.read_every_member`)."""

    def __init__(self, *args, **kwargs):
        read_every_member()
        super().__init__(*args, **kwargs)

    def _input_paths_for_step(self, step_num):
        if step_num:  # the previous step's part files
            return super()._input_paths_for_step(step_num)
        return [f for path in self._get_input_paths() for f in listed_files(local_path(path))]


def _subdirectory(folder):
    """The first (sorted) subdirectory of ``folder`` whose name is not hidden."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None
    return next((os.path.join(folder, n) for n in names if not is_hidden(n)
                 and os.path.isdir(os.path.join(folder, n))), None)


# -- the files a local path names ---------------------------------------------

def split_path(path):
    """(scheme, authority, path) of a path or URI; plain paths and ``file:``
    URIs (``file:/p``, ``file:///p``, ``file://host/p``) are scheme ``file``."""
    parts = urlsplit(path)
    scheme = parts.scheme or "file"
    if scheme == "file":
        return "file", "", parts.path or "/"
    return scheme, parts.netloc, parts.path or "/"


def local_files(path):
    out = set()
    for f in listed_files(path):
        real = os.path.realpath(f)
        # a pipe of /dev/fd resolves to a name that is no path ("pipe:[123]")
        out.add(real if os.path.exists(real) else os.path.abspath(f))
    return out


def regular_files(files):
    """True if every file is a regular one (its size and lines can be read
    without consuming it or reading forever)."""
    try:
        return all(stat.S_ISREG(os.stat(f).st_mode) for f in files)
    except OSError:
        return False


def refuse_query_overlap(inputs, queries, by_name=False):
    """A file that is both an input and a query -- or, where tasks can only go
    by file names (``by_name``), that shares a query file's name -- cannot be
    told apart: refused, as an :class:`OverlapError`."""
    qfiles = local_files(queries)
    qnames = {os.path.basename(f) for f in qfiles}
    for path in inputs:
        if path == "-" or "://" in path:
            continue
        files = local_files(path)
        both = files & qfiles
        if both:
            raise OverlapError("--queries %s and the input %s both hold %s: a file is either "
                           "a query or an input" % (queries, path, sorted(both)[0]))
        if by_name:
            same = sorted(f for f in files if os.path.basename(f) in qnames)
            if same:
                raise OverlapError("the input file %s has the name of a query file: this "
                               "runner uploads local files, and its tasks can only tell "
                               "queries by file name; rename one, or put the queries on "
                               "the cluster's filesystem and give --queries as a URI"
                               % same[0])


def local_input_files(paths):
    """The local files the input ``paths`` (files, directories, globs) name,
    sorted; None where one is not a local path, is stdin or is no regular
    file (a pipe)."""
    if any(p == "-" or "://" in p for p in paths):
        return None
    files = sorted(set().union(*map(local_files, paths)))
    return files if regular_files(files) else None


def local_lines(paths, stop_above):
    """Lines of local input paths, counted until more than ``stop_above``
    (then ``stop_above + 1``); None if any path is not local (or stdin).
    Compressed files count as unknown."""
    files = local_input_files(paths)
    if files is None:
        return None
    lines = 0
    for f in files:
        if f.endswith((".gz", ".bz2")):
            return None
        with open(f, "rb") as fh:
            last = b"\n"
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                lines += chunk.count(b"\n")
                last = chunk[-1:]
                if lines > stop_above:
                    return stop_above + 1
            lines += last != b"\n"
    return lines


def tree_bytes(path):
    """Bytes of the files under ``path`` (0 if there is none)."""
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


# -- the output committer on HDFS ------------------------------------------------


# -- the queries of the dot-products job ----------------------------------------

def is_query_path(path, queries):
    """True if the input file ``path`` (as a task sees it) is one of the query
    files named by ``queries`` (a file, a directory or a glob, by whole path;
    an authority left out on either side matches any).

    >>> is_query_path("file:///data/q/part-00000", "/data/q")
    True
    >>> is_query_path("file:/data/q/part-00000", "/data/q/part-*")
    True
    >>> is_query_path("/data/corpus/part-00000", "/data/q")
    False
    >>> is_query_path("hdfs://nn:8020/q/a.jsonl", "hdfs:///q/*.jsonl")
    True
    """
    p_scheme, p_auth, p = split_path(path)
    q_scheme, q_auth, q = split_path(queries)
    q = q.rstrip("/") or "/"
    if p_scheme == q_scheme and (p_auth == q_auth or not p_auth or not q_auth):
        return p == q or p.startswith(q + "/") or fnmatch.fnmatchcase(p, q)
    return False


def query_names(queries):
    """The file names of the query files ``queries`` names (a task that can
    only go by names: mrjob uploaded the files), or its own last name."""
    return {os.path.basename(f) for f in local_files(queries)} \
        or {os.path.basename(queries.rstrip("/"))}


def queries_for_tasks(extra_args, inputs, queries, runner):
    """The tasks' arguments and ``--queries`` for a local ``queries`` path:
    tasks compare whole paths, so they get the absolute one; where mrjob
    uploads local files (hadoop, emr, dataproc) only the file name survives,
    and the tasks go by names (``--queries-match name``).  An input file that
    is also a query (or, by names, named like one) is an :class:`OverlapError`.

    Returns
    -------
    (extra_args, absolute queries path)
    """
    absolute = os.path.abspath(queries)
    by_name = runner not in ("inline", "local", "spark")
    extra = list(extra_args)
    extra[extra.index("--queries") + 1] = absolute
    if by_name and "--queries-match" not in extra:
        extra += ["--queries-match", "name"]
    refuse_query_overlap(inputs, absolute, by_name)
    return extra, absolute


def input_file():
    """The file a map task reads (Hadoop's ``mapreduce.map.input.file``)."""
    from mrjob.compat import jobconf_from_env
    return jobconf_from_env("mapreduce.map.input.file", "<stdin>")
