"""The manifest a run writes beside its output: what the output was made of.

A job whose :meth:`~mrjobs.job.SparseJob.manifest` hook says what made its
output (the dot-products job: its name and the options that decide its lines)
gets a file :data:`MANIFEST` in its ``--output-dir`` when the output is
committed there on a local filesystem: that, the input files it read (path,
bytes, SHA-256) and the output's own files (name, bytes, SHA-256).  Its name
begins with ``_``, so Hadoop and the jobs skip it where the directory is read
as input, as they skip ``_SUCCESS``.  An update run (:mod:`mrjobs.update`)
reads it to know yesterday's options and corpus, and to refuse an output
that is not what its manifest describes (a part file missing, cut or edited)
or a corpus that changed since.
"""
import hashlib
import json
import os

from mrjobs.runtime.failures import JobError
from mrjobs.runtime.paths import is_hidden

__all__ = ["MANIFEST", "FORMAT", "ManifestError", "file_digest", "output_files",
           "write_manifest", "read_manifest", "check_output", "check_file", "check_inputs"]

#: the manifest's file name in an output directory
MANIFEST = "_MANIFEST.json"
#: what its "format" field holds (a later layout gets another number)
FORMAT = "mrsparse-manifest/1"


class ManifestError(JobError):
    """A manifest missing, unreadable, or not describing what is there."""


def file_digest(path):
    """``{"bytes": n, "sha256": hex}`` of the file ``path``."""
    h = hashlib.sha256()
    n = 0
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            h.update(chunk)
            n += len(chunk)
    return {"bytes": n, "sha256": h.hexdigest()}


def output_files(directory):
    """The output's own files in ``directory`` (not hidden: not ``_SUCCESS``,
    not the manifest, not ``_corpus/``), sorted."""
    return sorted(n for n in os.listdir(directory)
                  if not is_hidden(n) and os.path.isfile(os.path.join(directory, n)))


def write_manifest(directory, made, inputs, base=None):
    """Write :data:`MANIFEST` into ``directory``.

    Parameters
    ----------
    directory : str
        The output directory (before its commit), holding the part files.
    made : dict
        What made the output (the job's hook: ``job``, ``options``, and
        anything else that is JSON).
    inputs : list of str
        The local input files read, in order; those inside ``directory`` are
        recorded relative to it (an update's corpus, ``_corpus/...``).
    base : str, optional
        The directory whose files ``inputs`` were taken from relative paths
        (default ``directory``).
    """
    base = base or directory
    records = []
    for path in inputs:
        record = {"path": _recorded(path, base)}
        record.update(file_digest(path))
        records.append(record)
    manifest = dict(made, format=FORMAT, inputs=records, output=[
        dict(name=n, **file_digest(os.path.join(directory, n)))
        for n in output_files(directory)])
    tmp = os.path.join(directory, MANIFEST + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, os.path.join(directory, MANIFEST))
    return manifest


def _recorded(path, base):
    path = os.path.abspath(path)
    inside = os.path.relpath(path, os.path.abspath(base))
    return inside if not inside.startswith(os.pardir) else path


def read_manifest(directory):
    """The manifest of the output ``directory``; :class:`ManifestError` (one
    line) when there is none or it cannot be read."""
    path = os.path.join(directory, MANIFEST)
    if not os.path.isdir(directory):
        raise ManifestError("%s is not a directory: give the --output-dir of an earlier run"
                            % directory)
    try:
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
    except FileNotFoundError:
        raise ManifestError(
            "%s has no %s: it is not the output of a dot-products run committed to a local "
            "--output-dir (runs since mrsparse 0.1 write one there)" % (directory, MANIFEST)
        ) from None
    except (OSError, ValueError) as e:
        raise ManifestError("%s cannot be read: %s" % (path, e)) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ManifestError("%s is not a manifest this version reads (format %r, expected %r)"
                            % (path, manifest.get("format") if isinstance(manifest, dict)
                               else None, FORMAT))
    return manifest


def check_output(directory, manifest):
    """Refuse (:class:`ManifestError`) an output directory whose files are not
    those its manifest lists: one missing, added, cut or changed -- a partial
    or edited output, which an update would carry on silently."""
    listed = {o["name"]: o for o in manifest["output"]}
    there = output_files(directory)
    for name in sorted(set(listed) | set(there)):
        if name not in there:
            why = "%s is missing" % name
        elif name not in listed:
            why = "%s is not in its manifest" % name
        else:
            why = _changed(os.path.join(directory, name), name, listed[name])
        if why:
            raise ManifestError("%s is not the output its manifest describes: %s (a partial "
                                "or changed output; run the job whole)" % (directory, why))


def check_file(path, record, directory):
    """Refuse (:class:`ManifestError`) a file of the output ``directory`` (one
    besides its part files: an update's reserve) that is not the one its
    manifest ``record`` (``path``, ``bytes``, ``sha256``) describes."""
    why = ("%s is missing" % record["path"] if not os.path.isfile(path)
           else _changed(path, record["path"], record))
    if why:
        raise ManifestError("%s is not the output its manifest describes: %s (a partial or "
                            "changed output; run the job whole)" % (directory, why))


def _changed(path, name, record):
    """Why the file ``path`` is not the one ``record`` describes, or None."""
    got = file_digest(path)
    if got == {k: record[k] for k in ("bytes", "sha256")}:
        return None
    return "%s is not the file the run wrote (%d bytes, %d when written)" % (
        name, got["bytes"], record["bytes"])


def check_inputs(directory, manifest, given=None):
    """The input files of the manifest of ``directory``, checked: each is there
    with its bytes and SHA-256.  ``given`` (a list of paths) replaces where
    they are looked for (a corpus moved since).  Returns the paths."""
    records = manifest["inputs"]
    if not records:
        raise ManifestError("%s's manifest names no input file" % directory)
    if given is not None and len(given) != len(records):
        raise ManifestError("--corpus gives %d file(s); yesterday's run read %d (%s)" % (
            len(given), len(records), ", ".join(r["path"] for r in records)))
    paths = []
    for i, record in enumerate(records):
        path = given[i] if given is not None else record["path"]
        if not os.path.isabs(path) and given is None:
            path = os.path.join(directory, path)
        if not os.path.isfile(path):
            raise ManifestError("yesterday's input %s is not there: give it with --corpus "
                                "PATH (the same bytes)" % path)
        got = file_digest(path)
        if got != {k: record[k] for k in ("bytes", "sha256")}:
            raise ManifestError(
                "%s is not the input %s's output was made from (%d bytes, SHA-256 %s...; "
                "the run read %d bytes, %s...): the corpus changed since, so the output is "
                "not its neighbours; run the job whole" % (
                    path, directory, got["bytes"], got["sha256"][:12], record["bytes"],
                    record["sha256"][:12]))
        paths.append(path)
    return paths
