"""Where a job's time goes: cProfile of one inline run, summed by part."""
import importlib
import io
import os
import pstats
import shutil
import subprocess
import time
from pathlib import Path

from bench import common

#: (label, function): ``module:qualname`` (matched by its code object's file,
#: first line and name) or ``file:<path suffix>:<name>`` (for closures).  A
#: strategy's parts are absent from the other strategy's profile.
_JOB = "mrjobs.dot_products:MRSparseDotProducts."
PROFILE_PARTS = (
    ("mrjob sim: sort map output in memory", "mrjob.sim:_sort_lines_in_memory"),
    ("mrjob sim: split reducer input", "mrjob.sim:SimMRJobRunner._split_reducer_input"),
    ("mrjob sim: split mapper input", "mrjob.sim:SimMRJobRunner._split_mapper_input"),
    ("mrjob: read lines + protocol read", "file:mrjob/job.py:read_lines"),
    ("mrjob: protocol write + write lines", "file:mrjob/job.py:write_line"),
    ("wire: decode_record", "mrcodecs.jobwire:decode_record"),
    ("wire: JobProtocol.write", "mrcodecs.jobwire:JobProtocol.write"),
    ("vectors mapper: parse, check input", _JOB + "mapper_vectors"),
    ("vectors reducer: merge, prepare weights", _JOB + "reducer_vectors"),
    ("  prepare batches for the strategy", _JOB + "_prepare_batch"),
    ("blocks: sum count tables, find the cut (--max-df)", "mrjobs.strategies.blocks:BlocksStrategy._cut"),
    ("blocks: block-pair reducer", "mrjobs.strategies.blocks:BlocksStrategy.reducer_pairs"),
    ("  scipy sparse products", "scipy.sparse._compressed:_cs_matrix._matmul_sparse"),
    ("  _dense_best (top-k of dense chunks)", "mrjobs.pairs.chunks:_dense_best"),
    ("  _best (top-k of sparse chunks)", "mrjobs.pairs.chunks:_best"),
    ("stripes: postings -> stripes", "mrjobs.strategies.stripes:StripesStrategy.reducer_stripes"),
    ("stripes: sum stripes, score", "mrjobs.strategies.stripes:StripesStrategy.reducer_sum"),
    ("kernels.sort_sum", "mrjobs.pairs.idarrays:sort_sum"),
    ("kernels.top_k_groups", "mrjobs.pairs.idarrays:top_k_groups"),
    ("rows reducer: join partial rows, top-k", _JOB + "reducer_rows"),
    ("output: NeighboursJSONProtocol.write", "mrjobs.jobprotocols:NeighboursJSONProtocol.write"),
)


def _matcher(spec):
    """A test ``(file, line, name) -> bool`` for a PROFILE_PARTS function, or None."""
    if spec.startswith("file:"):
        _, suffix, name = spec.split(":")
        return lambda f, _, n: n == name and f.replace("\\", "/").endswith(suffix)
    module, _, qualname = spec.partition(":")
    try:
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        return None
    code = getattr(obj, "__code__", None)
    if code is None:
        return None
    key = (os.path.realpath(code.co_filename), code.co_firstlineno, code.co_name)
    return lambda f, line, n: (n == key[2] and line == key[1]
                              and os.path.realpath(f) == key[0])


def profile_part(stats, spec):
    """``(self_s, cum_s)`` of one function in ``stats``; ``(None, None)`` if it
    cannot be found or never ran."""
    match = _matcher(spec)
    hits = [(t, c) for (f, line, n), (_, _, t, c, _) in stats.stats.items()
            if match is not None and match(f, line, n)]
    if not hits:
        return None, None
    return sum(t for t, _ in hits), sum(c for _, c in hits)


def _top(prof, key, n):
    buf = io.StringIO()
    pstats.Stats(str(prof), stream=buf).strip_dirs().sort_stats(key).print_stats(n)
    text = buf.getvalue()
    return text[text.find("   ncalls"):].rstrip()


def profile_run(cmd, tag, workdir, top, keep=False):
    """cProfile of ``cmd`` (a job's command line, ``cmd[0]`` the Python): a dict
    of ``command``, ``profiled_total_s``, ``wall_s_under_profiler``, ``parts``,
    ``top_tottime``, ``top_cumulative``."""
    prof = Path(workdir) / ("jobs-%s.prof" % tag)
    out_path = Path(workdir) / "out-profile.txt"
    cmd = [cmd[0], "-m", "cProfile", "-o", str(prof)] + cmd[1:]
    t0 = time.perf_counter()
    with open(out_path, "wb") as out:
        proc = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE, cwd=common.REPO_ROOT)
    wall = time.perf_counter() - t0
    out_path.unlink()
    if proc.returncode != 0:
        raise RuntimeError("profiled run failed:\n%s" % proc.stderr.decode()[-3000:])
    stats = pstats.Stats(str(prof))
    total, parts = stats.total_tt, []
    for label, spec in PROFILE_PARTS:
        tt, ct = profile_part(stats, spec)
        parts.append({"part": label, "function": spec, "cum_s": ct, "self_s": tt,
                      "share": ct / total if total and ct is not None else None})
    summary = {"command": " ".join(["python"] + cmd[1:]), "profiled_total_s": total,
               "wall_s_under_profiler": wall, "parts": parts,
               "top_tottime": _top(prof, "tottime", top),
               "top_cumulative": _top(prof, "cumulative", top)}
    if not keep:
        prof.unlink()
    shutil.rmtree(Path(workdir) / "tmp-profile", ignore_errors=True)
    return summary


def profile_text(profiles):
    """The profiles as plain text: where the time goes, then the top functions."""
    lines = []
    for p in profiles:
        lines += ["Profile: --strategy %s, inline runner, corpus %s; %.1f s under cProfile; "
                  "the scipy floor on the same corpus: %.2f s." % (
                      p["strategy"], p["corpus"], p["profiled_total_s"], p["floor_wall_s"]),
                  "Where the time goes (cumulative seconds, share of the profiled total):"]
        lines += ["  %-48s %8.2f s  %5.1f%%   (self %.2f s)"
                  % (x["part"], x["cum_s"], 100 * x["share"], x["self_s"])
                  for x in p["parts"] if x["cum_s"] is not None]
        lines.append("")
    for p in profiles:
        for key in ("tottime", "cumulative"):
            lines += ["Top functions by %s (%s, %s):" % (key, p["strategy"], p["corpus"]),
                      p["top_" + key], ""]
    return "\n".join(lines).rstrip() + "\n"
