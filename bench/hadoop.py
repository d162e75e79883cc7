"""Hadoop benchmark: the jobs on a real HDFS + YARN cluster (the tests' minicluster,
:class:`tests.engines.cluster.Cluster`), mrjob's JSON against the compact format, and
against Hadoop's own intermediate compression, read from Hadoop's counters.

Every run is ``python -m mrjobs.dot_products hdfs:///bench/CORPUS --measure cosine
--top-k 10 --blocks B`` (or ``python -m mrjobs.inverted_index hdfs:///bench/CORPUS``)
on ``-r hadoop`` with 2 map and 2 reduce tasks a step, in a configuration:

====  =================  ==================  ==============================
name  input              between the steps   map output
====  =================  ==================  ==============================
a     JSON lines         ``--wire json``     as written (stock mrjob)
b     JSON lines         ``--wire json``     compressed by Hadoop's codec
c     JSON lines         ``--wire compact``  as written
d     compact records    ``--wire compact``  as written
e     compact records    ``--wire compact``  compressed by Hadoop's codec
====  =================  ==================  ==============================

The codec is the one of zstd, lz4 and snappy (in that order of preference:
the smallest output first) that compresses and decompresses a sample of the
corpus with the cluster's jars; the others' errors are reported.  The compact
copy of each corpus is made once by ``python -m mrjobs.convert --to compact``
(local runner) and put on HDFS beside the JSON one.  Counters are Hadoop's,
summed over the job's steps (``runner.counters()``); wall time is the whole
mrjob run, submission to output; ``lines_sha256`` is the sha256 of the sorted
output lines (each ended by LF), which must be equal in every configuration
of a job and corpus.  Beside the cluster runs: the compact input against the
JSON input on the local runner (CPU of the job's process tree) and the round
trip JSON -> compact -> JSON of each corpus.  ``--quick``: one small generated
corpus.  Writes ``hadoop.json`` and ``hadoop.png``; prints the tables and the
targets with pass/fail from the run; reports, never asserts.
"""
import getpass
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from types import SimpleNamespace
from dataclasses import asdict, dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as ``python bench/hadoop.py``
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common, measure  # noqa: E402

MEASURE, TOP_K = "cosine", 10
#: map and reduce tasks a step (mapreduce.job.maps is a hint: at least one a file)
MAPS, REDUCERS = 2, 2
#: name: (input format, wire, compressed map output)
CONFIGS = {"a": ("json", "json", False), "b": ("json", "json", True),
           "c": ("json", "compact", False), "d": ("compact", "compact", False),
           "e": ("compact", "compact", True)}
#: job: (module, class name, configurations run)
JOBS = {"dot_products": ("mrjobs.dot_products", "MRSparseDotProducts", "abcde"),
        "inverted_index": ("mrjobs.inverted_index", "MRInvertedIndex", "ad")}
#: Hadoop's map-output codecs, most compression first: (name, class, file extension)
CODECS = (("zstd", "org.apache.hadoop.io.compress.ZStandardCodec", "zst"),
          ("lz4", "org.apache.hadoop.io.compress.Lz4Codec", "lz4"),
          ("snappy", "org.apache.hadoop.io.compress.SnappyCodec", "snappy"))
CODEC_SAMPLE_BYTES = 4 << 20
#: the row's counters: key -> (group, name), summed over the steps
COUNTERS = {
    "hdfs_bytes_read": ("File System Counters", "HDFS: Number of bytes read"),
    "hdfs_bytes_written": ("File System Counters", "HDFS: Number of bytes written"),
    "file_bytes_read": ("File System Counters", "FILE: Number of bytes read"),
    "file_bytes_written": ("File System Counters", "FILE: Number of bytes written"),
    "shuffle_bytes": ("Map-Reduce Framework", "Reduce shuffle bytes"),
    "cpu_ms": ("Map-Reduce Framework", "CPU time spent (ms)"),
    "gc_ms": ("Map-Reduce Framework", "GC time elapsed (ms)"),
    "map_output_bytes": ("Map-Reduce Framework", "Map output bytes"),
    "map_output_materialized_bytes": ("Map-Reduce Framework", "Map output materialized bytes"),
}
DISK_KEYS = ("hdfs_bytes_read", "hdfs_bytes_written", "file_bytes_read", "file_bytes_written")
HDFS_DIR = "/bench"

#: targets: (d)/(a) disk bytes, (d)/(a) CPU, local-runner compact/JSON CPU, compact file bytes
TARGET_DISK, TARGET_CPU, TARGET_LOCAL_CPU, TARGET_FILE = 0.5, 0.65, 0.8, 0.45


@dataclass(frozen=True)
class Corpus:
    """A generated corpus (the generator's options) or ``source="text"`` (documents)."""

    name: str
    vectors: int
    source: str = "generated"
    seed: int = 2
    vocabulary: int = 100000


#: dense: bench.jobs's corpus of the same name (20,000 vectors, ~50 features each)
FULL_CORPORA = (Corpus("dense-20k", 20000), Corpus("text-4k", 4000, source="text"))
QUICK_CORPORA = (Corpus("gen-2k", 2000, vocabulary=20000),)
#: the corpus of the local-runner comparison
LOCAL_CORPUS = {"full": "dense-20k", "quick": "gen-2k"}


# -- the corpora ----------------------------------------------------------------------

def make_corpus(corpus, directory):
    """The corpus's JSON lines: a path (cached)."""
    if corpus.source == "text":
        from bench import textcorpus

        return textcorpus.build(corpus.vectors)[0]
    path = Path(directory) / ("%s-%d-s%d-v%d.jsonl" % (corpus.source, corpus.vectors,
                                                      corpus.seed, corpus.vocabulary))
    if not path.exists():
        from mrjobs.generate import write_corpus

        write_corpus(str(path.with_suffix(".tmp")), vectors=corpus.vectors, seed=corpus.seed,
                     vocabulary=corpus.vocabulary, fmt="json", edge_cases=False, progress=False)
        path.with_suffix(".tmp").replace(path)
    return path


def entries_of(json_path):
    """Number of vector entries (nonzeros) of a JSON-lines corpus."""
    with open(json_path, "rb") as f:
        return sum(len(json.loads(line)["features"]) for line in f if line.strip())


def convert(src, dest, to, args=()):
    """``python -m mrjobs.convert --to TO SRC`` on the local runner, its part files
    joined into the file ``dest``.  Returns the wall seconds."""
    out_dir = Path(str(dest) + ".parts")
    shutil.rmtree(out_dir, ignore_errors=True)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mrjobs.convert", "--to", to, "-r", "local",
                    "--num-cores", "2", "--output-dir", str(out_dir), "-q", *args, str(src)],
                   check=True, cwd=common.REPO_ROOT)
    seconds = time.perf_counter() - t0
    with open(dest, "wb") as out:
        for part in sorted(out_dir.glob("part-*")):
            with open(part, "rb") as f:
                shutil.copyfileobj(f, out)
    shutil.rmtree(out_dir)
    return seconds


def vectors_of(json_path):
    """``{id: {feature: weight}}`` of a JSON-lines corpus (ids lower-cased)."""
    out = {}
    with open(json_path, "rb") as f:
        for line in f:
            if line.strip():
                v = json.loads(line)
                out[v["id"].lower()] = {k.lower(): w for k, w in v["features"].items()}
    return out


# -- the cluster's side -----------------------------------------------------------------

def other_clusters():
    """Command lines of MiniCluster JVMs running on this machine (one at a time fits)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if b"MiniCluster" in argv:
            found.append("%s %s" % (pid, b" ".join(argv)[:120].decode("utf-8", "replace")))
    return found


def client_env(cluster):
    """The environment of a client of ``cluster``, set in this process (mrjob's
    runner calls the launcher with it): conf dir, JAVA_HOME, no PYTHONPATH."""
    os.environ.update(cluster.env)
    for name in ("PYTHONPATH", "MRSPARSE_HADOOP_JARS", "MRSPARSE_HADOOP_LOG"):
        os.environ.pop(name, None)


def probe_codecs(cluster, sample, directory):
    """Each of :data:`CODECS` tried on ``sample`` (bytes) through Hadoop's
    ``CompressionCodecFactory`` with the cluster's jars and conf (the task
    JVMs get the client's classpath): compressed to a file, decompressed (to
    stdout), compared.  Returns ``[{codec, class, works, bytes, ratio,
    seconds, error}]``."""
    from tests.engines.support import LAUNCHER

    def factory(*args):
        return subprocess.run([LAUNCHER, "org.apache.hadoop.io.compress.CompressionCodecFactory",
                               *args], env=dict(os.environ, **cluster.env),
                              capture_output=True, timeout=300)

    out = []
    for name, cls, ext in CODECS:
        d = Path(directory) / ("codec-" + name)
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
        (d / "sample").write_bytes(sample)
        t0 = time.perf_counter()
        row = {"codec": name, "class": cls, "works": False, "bytes": None, "ratio": None,
               "error": None}
        packed = d / ("sample." + ext)
        p = factory("-in", str(packed))
        if p.returncode == 0 and packed.exists() and packed.stat().st_size:
            q = factory("-out", str(packed))
            ok = q.returncode == 0 and q.stdout == sample
            row.update(works=ok, bytes=packed.stat().st_size,
                       ratio=packed.stat().st_size / len(sample),
                       error=None if ok else "decompressed %d bytes of %d: %s" % (
                           len(q.stdout), len(sample), _first_error(q.stderr)))
        else:
            row["error"] = _first_error(p.stderr) or "no output (exit %d)" % p.returncode
        row["seconds"] = time.perf_counter() - t0
        shutil.rmtree(d, ignore_errors=True)
        out.append(row)
    return out


def _first_error(stderr):
    if isinstance(stderr, bytes):
        stderr = stderr.decode("utf-8", "replace")
    lines = [x.strip() for x in (stderr or "").splitlines()
             if x.strip() and not x.strip().startswith("at ") and not x.startswith("\t")]
    return " | ".join(x for x in lines if "Exception" in x or "Error" in x)[:400] or (
        lines[0] if lines else "")


@dataclass
class Setup:
    """What a run on the cluster needs."""

    cluster: object
    streaming_jar: str
    task_python: str
    codec: tuple = None     # (name, class) of the map-output codec, or None

    def runner_args(self, compressed):
        args = ["--no-conf", "-r", "hadoop", "--hadoop-bin", _launcher(),
                "--hadoop-streaming-jar", self.streaming_jar, "--python-bin", self.task_python,
                "-D", "mapreduce.job.maps=%d" % MAPS, "-D", "mapreduce.job.reduces=%d" % REDUCERS]
        for d in self.cluster.log_dirs:
            args += ["--hadoop-log-dirs", d]
        if compressed:
            if self.codec is None:
                raise RuntimeError("no map-output codec works with these jars")
            args += ["-D", "mapreduce.map.output.compress=true",
                     "-D", "mapreduce.map.output.compress.codec=%s" % self.codec[1]]
        else:
            args += ["-D", "mapreduce.map.output.compress=false"]
        return args


def _launcher():
    from tests.engines.support import LAUNCHER

    return LAUNCHER


def put(cluster, local, hdfs_path):
    from tests.engines.cluster import hadoop

    hadoop(cluster, "fs", "-mkdir", "-p", os.path.dirname(hdfs_path))
    hadoop(cluster, "fs", "-put", "-f", str(local), hdfs_path)
    return "hdfs://" + hdfs_path


def sum_counters(step_counters):
    """``{group: {name: total}}`` over the steps (group names stripped: Hadoop
    writes some with a trailing space)."""
    total = {}
    for step in step_counters:
        for group, names in step.items():
            g = total.setdefault(group.strip(), {})
            for name, n in names.items():
                g[name] = g.get(name, 0) + n
    return total


def lines_sha256(lines):
    """sha256 of the sorted output lines, each ended by LF."""
    h = hashlib.sha256()
    for line in sorted(lines):
        h.update(line + b"\n")
    return h.hexdigest()


def job_args(job, config, blocks=None):
    """The job's own options in a configuration (after the runner's)."""
    fmt, wire, _ = CONFIGS[config]
    args = ["--input-format", fmt, "--wire", wire]
    if job == "dot_products":
        args += ["--measure", MEASURE, "--top-k", str(TOP_K)]
        if blocks:
            args += ["--blocks", str(blocks)]
    return args


def run_config(setup, job, config, inputs, corpus_name="", blocks=None):
    """One run on the cluster; its row (``inputs``: {input format: hdfs URI})."""
    import importlib

    from tests.engines.support import run_cli

    module, cls, _ = JOBS[job]
    fmt, wire, compressed = CONFIGS[config]
    args = job_args(job, config, blocks)
    argv = setup.runner_args(compressed) + args + [inputs[fmt]]
    job_class = getattr(importlib.import_module(module), cls)
    t0 = time.perf_counter()
    run = run_cli(job_class, argv)
    wall = time.perf_counter() - t0
    total = sum_counters(run.step_counters)
    row = {"job": job, "corpus": corpus_name, "config": config, "input": fmt, "wire": wire,
           "compression": setup.codec[0] if compressed else "none"}
    for key, (group, name) in COUNTERS.items():
        row[key] = total.get(group, {}).get(name)
    row.update(
        disk_bytes=sum(row[k] or 0 for k in DISK_KEYS), wall_s=wall,
        lines_sha256=lines_sha256(run.lines), output_lines=len(run.lines),
        steps=len(run.step_counters), blocks=blocks,
        map_tasks=sum(s.get("Job Counters", {}).get("Launched map tasks", 0)
                      for s in ({g.strip(): n for g, n in st.items()}
                                for st in run.step_counters)),
        reduce_tasks=sum(s.get("Job Counters", {}).get("Launched reduce tasks", 0)
                         for s in ({g.strip(): n for g, n in st.items()}
                                   for st in run.step_counters)),
        command="python -m %s %s" % (module, " ".join(args + [inputs[fmt]])),
        step_counters=run.step_counters)
    return row


# -- one corpus -------------------------------------------------------------------------

def prepare_corpus(corpus, workdir, log):
    """JSON and compact files of the corpus, and their facts."""
    t0 = time.perf_counter()
    json_path = Path(make_corpus(corpus, workdir))
    compact_path = Path(workdir) / (corpus.name + ".compact")
    convert_s = convert(json_path, compact_path, "compact")
    back_path = Path(workdir) / (corpus.name + ".back.jsonl")
    convert(compact_path, back_path, "json")
    same = vectors_of(json_path) == vectors_of(back_path)
    back_path.unlink()
    from mrjobs.strategies.sizing import estimate_blocks

    entries = entries_of(json_path)
    stats = {"name": corpus.name, "generator": asdict(corpus), "json_path": str(json_path),
             "json_bytes": json_path.stat().st_size, "compact_bytes": compact_path.stat().st_size,
             "entries": entries, "blocks": estimate_blocks(entries, REDUCERS),
             "convert_s": convert_s, "round_trip_identical": same,
             "prepare_s": time.perf_counter() - t0}
    stats["compact_ratio"] = stats["compact_bytes"] / stats["json_bytes"]
    log("%s: %d vectors, %d entries; JSON %s, compact %s (%.3fx; converted in %.1f s); "
        "JSON -> compact -> JSON %s; --blocks %d"
        % (corpus.name, corpus.vectors, entries, common.size_label(stats["json_bytes"]),
           common.size_label(stats["compact_bytes"]), stats["compact_ratio"], convert_s,
           "identical" if same else "DIFFERS", stats["blocks"]))
    return json_path, compact_path, stats


def local_comparison(json_path, compact_path, blocks, workdir, log):
    """The products job on the local runner, JSON input against compact input:
    ``{fmt: {wall_s, cpu_s, lines_sha256}}``."""
    out = {}
    for fmt, path in (("json", json_path), ("compact", compact_path)):
        tmp, stdout = Path(workdir) / ("local-tmp-" + fmt), Path(workdir) / ("local-%s.out" % fmt)
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        cmd = [sys.executable, "-m", "mrjobs.dot_products", str(path), "--input-format", fmt,
               "--measure", MEASURE, "--top-k", str(TOP_K), "--blocks", str(blocks),
               "-r", "local", "--num-cores", "2", "--local-tmp-dir", str(tmp)]
        m = measure.run_checked(cmd, stdout, 0.5)
        with open(stdout, "rb") as f:
            sha = lines_sha256([line.rstrip(b"\n") for line in f])
        stdout.unlink()
        shutil.rmtree(tmp, ignore_errors=True)
        out[fmt] = {"wall_s": m["wall_s"], "cpu_s": m["cpu_s"], "lines_sha256": sha}
        log("local runner, %s input: %.1f s wall, %.1f s CPU" % (fmt, m["wall_s"], m["cpu_s"]))
    return out


def put_corpus(setup, corpus_name, json_path, compact_path):
    """Both files of a corpus on HDFS: ``{input format: hdfs URI}``."""
    return {"json": put(setup.cluster, json_path, "%s/%s.jsonl" % (HDFS_DIR, corpus_name)),
            "compact": put(setup.cluster, compact_path,
                           "%s/%s.compact" % (HDFS_DIR, corpus_name))}


def run_logged(setup, job, config, inputs, corpus_name, blocks, log):
    """:func:`run_config`, its numbers logged in one line."""
    load = os.getloadavg()
    row = run_config(setup, job, config, inputs, corpus_name,
                     blocks if job == "dot_products" else None)
    # CPU counters grow with contention on a shared machine: keep the load beside them
    row["loadavg_before"], row["loadavg_after"] = load, os.getloadavg()
    log("%-10s %-14s (%s) %-7s %-7s %-6s disk %8.1f MB  shuffle %7.1f MB  CPU %7.1f s  "
        "GC %5.1f s  wall %6.1f s  %s" % (
            corpus_name, job, config, row["input"], row["wire"], row["compression"],
            row["disk_bytes"] / 1e6, (row["shuffle_bytes"] or 0) / 1e6,
            (row["cpu_ms"] or 0) / 1e3, (row["gc_ms"] or 0) / 1e3, row["wall_s"],
            row["lines_sha256"][:12]))
    return row


def run_corpus(setup, corpus_name, json_path, compact_path, blocks, runs, log):
    """Put both files on HDFS, then each ``(job, config)`` of ``runs``: rows."""
    inputs = put_corpus(setup, corpus_name, json_path, compact_path)
    return [run_logged(setup, job, config, inputs, corpus_name, blocks, log)
            for job, config in runs]


# -- derived numbers, checks ------------------------------------------------------------

RATIO_KEYS = ("disk_bytes", "hdfs_bytes_read", "file_bytes_written", "shuffle_bytes",
              "cpu_ms", "gc_ms", "wall_s")


def ratios(rows):
    """Per job and corpus: each configuration against (a), and (d) against (b)."""
    out = []
    for (job, corpus), group in _groups(rows).items():
        for base in ("a", "b"):
            ref = group.get(base)
            for config, r in group.items():
                if ref is None or config == base or (base == "b" and config != "d"):
                    continue
                out.append(dict({"job": job, "corpus": corpus, "pair": "(%s)/(%s)" % (
                    config, base)}, **{k: common.ratio(r.get(k), ref.get(k)) for k in RATIO_KEYS}))
    return out


def _groups(rows):
    groups = {}
    for r in rows:
        groups.setdefault((r["job"], r["corpus"]), {})[r["config"]] = r
    return groups


def same_lines(rows):
    """``[{job, corpus, configs, hashes, same}]``: one output in every configuration?"""
    out = []
    for (job, corpus), group in _groups(rows).items():
        hashes = sorted({r["lines_sha256"] for r in group.values()})
        out.append({"job": job, "corpus": corpus, "configs": "".join(sorted(group)),
                    "lines_sha256": hashes[0][:16] if len(hashes) == 1 else " / ".join(
                        h[:12] for h in hashes), "same": len(hashes) == 1})
    return out


def evaluate_checks(rows, corpora, local, codecs):
    checks = []
    for (job, corpus), g in _groups(rows).items():
        a, b, d = g.get("a"), g.get("b"), g.get("d")
        if job != "dot_products" or not (a and d):
            continue
        disk, cpu = common.ratio(d["disk_bytes"], a["disk_bytes"]), common.ratio(d["cpu_ms"], a["cpu_ms"])
        checks.append(common.check(
            "%s: (d)/(a) disk bytes" % corpus, "<= %.2fx (HDFS + local, read + written)"
            % TARGET_DISK, "%.3fx (%s vs %s)" % (disk, common.size_label(d["disk_bytes"]),
                                                common.size_label(a["disk_bytes"])),
            disk <= TARGET_DISK))
        checks.append(common.check(
            "%s: (d)/(a) CPU" % corpus, "<= %.2fx (all tasks)" % TARGET_CPU,
            "%.3fx (%.1f s vs %.1f s)" % (cpu, d["cpu_ms"] / 1e3, a["cpu_ms"] / 1e3),
            cpu <= TARGET_CPU))
        if b:
            checks.append(common.check(
                "%s: (d) vs (b)" % corpus, "fewer bytes and less CPU than JSON + %s"
                % b["compression"], "disk %.3fx, CPU %.3fx" % (
                    common.ratio(d["disk_bytes"], b["disk_bytes"]), common.ratio(d["cpu_ms"], b["cpu_ms"])),
                d["disk_bytes"] < b["disk_bytes"] and d["cpu_ms"] < b["cpu_ms"]))
    for name, lc in local.items():
        r = common.ratio(lc["compact"]["cpu_s"], lc["json"]["cpu_s"])
        checks.append(common.check(
            "%s: compact input, local runner" % name, "job CPU <= %.2fx JSON input's"
            % TARGET_LOCAL_CPU, "%.3fx (%.1f s vs %.1f s)" % (
                r, lc["compact"]["cpu_s"], lc["json"]["cpu_s"]), r <= TARGET_LOCAL_CPU))
    for name, st in corpora.items():
        checks.append(common.check(
            "%s: compact file" % name, "<= %.2fx the JSON file's bytes" % TARGET_FILE,
            "%.3fx (%s vs %s)" % (st["compact_ratio"], common.size_label(st["compact_bytes"]),
                                  common.size_label(st["json_bytes"])),
            st["compact_ratio"] <= TARGET_FILE))
        same = [s["same"] for s in same_lines(rows) if s["corpus"] == name]
        local_same = name not in local or (local[name]["json"]["lines_sha256"]
                                           == local[name]["compact"]["lines_sha256"])
        checks.append(common.check(
            "%s: convert -> run -> convert back" % name, "identical vectors and output lines",
            "vectors %s; lines %s" % ("identical" if st["round_trip_identical"] else "DIFFER",
                                      "identical" if all(same) and local_same else "DIFFER"),
            st["round_trip_identical"] and all(same) and local_same))
    working = [c["codec"] for c in codecs if c["works"]]
    checks.append(common.check("codec", "lz4, snappy or zstd works with the jars",
                               ", ".join(working) or "none", bool(working)))
    return checks


# -- printing, chart --------------------------------------------------------------------

MB = "{:,.1f}"
TABLE = [("corpus", "corpus"), ("job", "job"), ("config", "cfg"), ("input", "input"),
         ("wire", "wire"), ("compression", "map out"),
         ("hdfs_read_mb", "HDFS read MB", MB), ("hdfs_written_mb", "HDFS written MB", MB),
         ("file_read_mb", "FILE read MB", MB), ("file_written_mb", "FILE written MB", MB),
         ("disk_mb", "disk MB", MB), ("shuffle_mb", "shuffle MB", MB),
         ("cpu_s", "CPU s", "{:,.1f}"), ("gc_s", "GC s", "{:,.1f}"),
         ("wall_s", "wall s", "{:,.1f}"), ("sha", "lines sha256")]


def table_rows(rows):
    return [dict(r, hdfs_read_mb=r["hdfs_bytes_read"] / 1e6,
                 hdfs_written_mb=r["hdfs_bytes_written"] / 1e6,
                 file_read_mb=r["file_bytes_read"] / 1e6,
                 file_written_mb=r["file_bytes_written"] / 1e6, disk_mb=r["disk_bytes"] / 1e6,
                 shuffle_mb=(r["shuffle_bytes"] or 0) / 1e6, cpu_s=r["cpu_ms"] / 1e3,
                 gc_s=r["gc_ms"] / 1e3, sha=r["lines_sha256"][:12]) for r in rows]


def print_tables(rows, corpora, codecs, local, checks):
    common.print_table(codecs, [("codec", "codec"), ("works", "works"),
                                ("ratio", "bytes out/in", "{:.3f}"),
                                ("seconds", "s", "{:.1f}"), ("error", "error")],
                       title="Map-output codecs tried on a %d MB sample of the corpus "
                             "(CompressionCodecFactory, the cluster's jars)"
                             % (CODEC_SAMPLE_BYTES >> 20))
    common.print_table(list(corpora.values()), [
        ("name", "corpus"), ("entries", "entries", "{:,}"),
        ("json_bytes", "JSON bytes", "{:,}"), ("compact_bytes", "compact bytes", "{:,}"),
        ("compact_ratio", "compact/JSON", "{:.3f}"), ("blocks", "--blocks"),
        ("convert_s", "convert s", "{:.1f}")], title="Corpora")
    common.print_table(table_rows(rows), TABLE, title="Runs on HDFS + YARN (Hadoop's counters, "
                       "summed over the steps; disk = HDFS + FILE, read + written)")
    common.print_table(ratios(rows), [("corpus", "corpus"), ("job", "job"), ("pair", "ratio")]
                       + [(k, k.replace("_bytes", "").replace("_", " "), "{:.3f}")
                          for k in RATIO_KEYS], title="Ratios")
    if local:
        common.print_table([{"corpus": n, "input": f, **v} for n, lc in local.items()
                            for f, v in lc.items()],
                           [("corpus", "corpus"), ("input", "input"),
                            ("wall_s", "wall s", "{:.1f}"), ("cpu_s", "CPU s", "{:.1f}"),
                            ("lines_sha256", "lines sha256")],
                           title="The products job on the local runner (--num-cores 2)")
    common.print_table(same_lines(rows), [("corpus", "corpus"), ("job", "job"),
                                          ("configs", "configs"), ("lines_sha256", "sha256"),
                                          ("same", "same lines")],
                       title="Output lines, every configuration")
    common.print_checks(checks)


def draw_chart(rows, directory, title):
    """Per job and corpus: disk bytes, shuffle bytes, CPU and wall of each
    configuration, as a fraction of (a)'s."""
    plt = common.pyplot()
    groups = {k: g for k, g in _groups(rows).items() if "a" in g}
    ncols = min(2, len(groups))
    nrows = -(-len(groups) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(7 * ncols, 4.5 * nrows), squeeze=False)
    measures = (("disk_bytes", "disk bytes"), ("shuffle_bytes", "shuffle bytes"),
                ("cpu_ms", "CPU"), ("wall_s", "wall"))
    colors = ("#4c72b0", "#55a868", "#c44e52", "#8172b2")
    for ax in axes.ravel()[len(groups):]:
        ax.set_visible(False)
    for ax, ((job, corpus), g) in zip(axes.ravel(), groups.items()):
        configs = sorted(g)
        width = 0.8 / len(measures)
        for i, ((key, label), color) in enumerate(zip(measures, colors)):
            ax.bar([x + (i - 1.5) * width for x in range(len(configs))],
                   [common.ratio(g[c][key], g["a"][key]) or 0 for c in configs], width,
                   color=color, label=label)
        ax.set_xticks(range(len(configs)), ["(%s) %s\n%s wire\n%s" % (
            c, g[c]["input"], g[c]["wire"], g[c]["compression"]) for c in configs], fontsize=7)
        ax.axhline(1.0, color="#444444", lw=0.8)
        ax.set(ylabel="fraction of (a)", title="%s, %s" % (job, corpus))
        ax.grid(True, axis="y", alpha=0.25)
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return common.save_figure(fig, "hadoop", directory)


# -- the run ----------------------------------------------------------------------------

def parse_args(argv=None):
    ap = common.arg_parser("python -m bench.hadoop", __doc__.split("\n\n")[0].replace("``", ""),
                           "hadoop.json, hadoop.png")
    ap.add_argument("--json", type=Path, help="also write the runs (a list of rows) to this file")
    ap.add_argument("--workdir", type=Path, help="where corpora, the cluster and mrjob's files "
                    "go (default: a new temporary directory, removed at the end)")
    ap.add_argument("--only", type=lambda s: tuple(s.split(",")),
                    help="comma-separated corpora (default: all of the mode's)")
    ap.add_argument("--resume", type=Path, metavar="JSON", help="keep the runs (and the "
                    "local-runner comparison) of this results file, e.g. an interrupted "
                    "run's hadoop-partial.json, and run the others")
    ap.add_argument("--until", metavar="HH:MM", help="start no run after this time (UTC, "
                    "today); the runs left are listed as not run")
    return common.parse(ap, argv)


#: the order of the runs, most telling first: each tier on every corpus before the next
TIERS = ((("dot_products", "a"), ("dot_products", "d"), ("dot_products", "b")),
         (("inverted_index", "a"), ("inverted_index", "d")),
         (("dot_products", "c"), ("dot_products", "e")))


def plan(quick, only=None):
    """``(mode, corpora, runs)``: runs are ``(corpus name, job, config)``, in order."""
    corpora = QUICK_CORPORA if quick else FULL_CORPORA
    if only:
        corpora = tuple(c for c in corpora if c.name in only)
    runs = [(c.name, job, config) for tier in TIERS for c in corpora for job, config in tier
            if config in JOBS[job][2]]
    return "quick" if quick else "full", corpora, runs


def _deadline(until):
    if not until:
        return None
    import datetime

    h, m = map(int, until.split(":"))
    now = datetime.datetime.now(datetime.timezone.utc)
    return time.time() + (now.replace(hour=h, minute=m, second=0) - now).total_seconds()


def main(argv=None):
    args = parse_args(argv)
    mode, corpora, runs = plan(args.quick, args.only)
    log = common.logger()
    others = other_clusters()
    if others:
        sys.exit("another MiniCluster is running (one at a time fits on this machine):\n  "
                 + "\n  ".join(others))
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="mrsparse-bench-hadoop-"))
    workdir.mkdir(parents=True, exist_ok=True)
    log("workdir %s; %d corpora, %d runs; load average %s" % (
        workdir, len(corpora), len(runs), " ".join("%.2f" % x for x in os.getloadavg())))
    st = _prepare(args, mode, corpora, runs, workdir, log)
    try:
        _on_cluster(args, corpora, runs, workdir, st, log)
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    return _report(args, st, log)


def _prepare(args, mode, corpora, runs, workdir, log):
    """The corpora (JSON and compact copies), the local-runner comparison and
    what a --resume keeps: the run's state."""
    cache = common.REPO_ROOT / ".cache" / "bench" / "hadoop"
    cache.mkdir(parents=True, exist_ok=True)
    st = SimpleNamespace(prepared={}, corpora_stats={}, local={}, codecs=[], not_run=[])
    previous = json.loads(args.resume.read_text()) if args.resume else {}
    st.kept = [r for r in previous.get("results", ())
               if (r["corpus"], r["job"], r["config"]) in set(runs)]
    st.local.update(previous.get("local_runner", {}))
    if previous:
        log("resuming: %d runs kept from %s" % (len(st.kept), args.resume))
    for c in corpora:
        json_path, compact_path, st.corpora_stats[c.name] = prepare_corpus(
            c, cache if c.source != "text" else workdir, log)
        st.prepared[c.name] = (json_path, compact_path)
        if c.name == LOCAL_CORPUS[mode] and c.name not in st.local:
            st.local[c.name] = local_comparison(json_path, compact_path,
                                                st.corpora_stats[c.name]["blocks"], workdir,
                                                log)
    st.rows, st.load = list(st.kept), {"before": os.getloadavg()}
    if previous:
        st.load["previous_session"] = previous.get("load")
    st.settings = {"quick": args.quick, "measure": MEASURE, "top_k": TOP_K, "maps": MAPS,
                   "reducers": REDUCERS,
                   "configs": {k: dict(zip(("input", "wire", "compressed"), v))
                               for k, v in CONFIGS.items()},
                   "runs": runs, "nodemanagers": 2, "method": __doc__,
                   "cluster_sessions": 1 + previous.get("settings", {}).get(
                       "cluster_sessions", 1) if previous else 1}
    return st


def _on_cluster(args, corpora, runs, workdir, st, log):
    """Start the cluster, probe the codecs, run what is left of ``runs``
    (saving the rows after each), stop the cluster."""
    from tests.engines.cluster import Cluster, hadoop
    from tests.engines.support import CACHE, task_venv_python

    cluster = Cluster(str(workdir / "cluster"), nodemanagers=2)
    deadline = _deadline(args.until)

    def save(partial):
        data = {"settings": st.settings, "corpora": st.corpora_stats, "codecs": st.codecs,
                "local_runner": st.local, "load": st.load, "results": partial,
                "complete": False}
        st.load["now"] = os.getloadavg()
        common.write_results("hadoop-partial", data, args.out)

    try:
        cluster.start()
        log("cluster up in %.0f s" % cluster.start_seconds)
        client_env(cluster)
        hadoop(cluster, "fs", "-mkdir", "-p", "/user/%s" % getpass.getuser(), HDFS_DIR)
        with open(st.prepared[corpora[0].name][0], "rb") as f:
            sample = f.read(CODEC_SAMPLE_BYTES)
        st.codecs = probe_codecs(cluster, sample, workdir)
        working = [c for c in st.codecs if c["works"]]
        for c in st.codecs:
            log("codec %-6s %s" % (c["codec"], "works (%.3f of the bytes)" % c["ratio"]
                                   if c["works"] else "fails: " + c["error"]))
        setup = Setup(cluster, os.path.join(CACHE, "hadoop-streaming.jar"), task_venv_python(),
                      (working[0]["codec"], working[0]["class"]) if working else None)
        inputs = {c.name: put_corpus(setup, c.name, *st.prepared[c.name]) for c in corpora}
        for name, job, config in runs:
            if any((r["corpus"], r["job"], r["config"]) == (name, job, config)
                   for r in st.kept):
                continue
            if (CONFIGS[config][2] and not setup.codec) or (
                    deadline and time.time() > deadline):
                st.not_run.append({"corpus": name, "job": job, "config": config})
                continue
            st.rows.append(run_logged(setup, job, config, inputs[name], name,
                                      st.corpora_stats[name]["blocks"], log))
            save(st.rows)
    finally:
        st.load["after"] = os.getloadavg()
        if cluster.proc is not None:
            cluster.stop()
            log("cluster stopped in %.0f s (%s)" % (cluster.stop_seconds or 0,
                                                     "cleanly" if cluster.stopped_cleanly
                                                     else "killed"))


def cluster_runs(json_path, runs, workdir, log):
    """Runs of the dot-products job on a cluster of its own (for
    :mod:`bench.scaleout`): ``runs`` is ``[(name, job args)]``, each run on the
    corpus put on HDFS, with :data:`MAPS` and :data:`REDUCERS` tasks a step and
    uncompressed map output.  A row a run: ``name``, ``wall_s``, Hadoop's
    counters by step (``by_step``: reduce shuffle bytes, spilled records, CPU
    ms), summed (:data:`COUNTERS` keys) and the output lines' sha256."""
    from tests.engines.cluster import Cluster, hadoop
    from tests.engines.support import CACHE, run_cli, task_venv_python
    from mrjobs.dot_products import MRSparseDotProducts

    cluster = Cluster(str(Path(workdir) / "cluster"), nodemanagers=2)
    rows = []
    try:
        cluster.start()
        log("cluster up in %.0f s" % cluster.start_seconds)
        client_env(cluster)
        hadoop(cluster, "fs", "-mkdir", "-p", "/user/%s" % getpass.getuser(), HDFS_DIR)
        setup = Setup(cluster, os.path.join(CACHE, "hadoop-streaming.jar"), task_venv_python())
        uri = put(cluster, json_path, "%s/%s" % (HDFS_DIR, Path(json_path).name))
        for name, args in runs:
            t0 = time.perf_counter()
            run = run_cli(MRSparseDotProducts, setup.runner_args(False) + list(args) + [uri])
            # (the runs before the job's own first: the prefix strategy's df count)
            every = run.before_counters + run.step_counters
            steps = [{g.strip(): n for g, n in st.items()} for st in every]
            framework = [st.get("Map-Reduce Framework", {}) for st in steps]
            total = sum_counters(every)
            row = {"name": name, "args": list(args), "wall_s": time.perf_counter() - t0,
                   "lines_sha256": lines_sha256(run.lines), "output_lines": len(run.lines),
                   "by_step": [{"shuffle_bytes": f.get("Reduce shuffle bytes"),
                                "spilled_records": f.get("Spilled Records"),
                                "cpu_ms": f.get("CPU time spent (ms)")} for f in framework]}
            for key, (group, counter) in COUNTERS.items():
                row[key] = total.get(group, {}).get(counter)
            log("cluster %-12s wall %6.1f s  shuffle %s  CPU %.1f s" % (
                name, row["wall_s"], common.size_label(row["shuffle_bytes"] or 0),
                (row["cpu_ms"] or 0) / 1e3))
            rows.append(row)
    finally:
        if cluster.proc is not None:
            cluster.stop()
    return rows


def _report(args, st, log):
    """Tables, checks, the JSON and the chart; 1 if a job's lines differ."""
    rows = st.rows
    checks = evaluate_checks(rows, st.corpora_stats, st.local, st.codecs)
    print_tables(rows, st.corpora_stats, st.codecs, st.local, checks)
    if st.not_run:
        common.print_table(st.not_run, ["corpus", "job", "config"],
                           title="Not run (no working codec, or --until)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps([{k: v for k, v in r.items() if k != "step_counters"}
                                         for r in rows], indent=2) + "\n")
        print("wrote %s" % args.json)
    title = ("mrsparse on HDFS + YARN (minicluster, 2 NodeManagers): --measure %s --top-k %d, "
             "%d maps / %d reducers a step; %%s" % (MEASURE, TOP_K, MAPS, REDUCERS))
    common.finish("hadoop", {"settings": st.settings, "corpora": st.corpora_stats,
                             "codecs": st.codecs, "local_runner": st.local, "load": st.load,
                             "results": rows, "ratios": ratios(rows),
                             "same_lines": same_lines(rows), "checks": checks,
                             "not_run": st.not_run, "complete": not st.not_run}, args, log,
                  rows and (lambda date: draw_chart(rows, args.out, title % date)))
    partial = Path(args.out) / "hadoop-partial.json"
    if partial.exists():
        partial.unlink()
    if not all(s["same"] for s in same_lines(rows)):
        print("\nFAILED: the configurations of a job gave different output lines (above)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
