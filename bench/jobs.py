"""Job benchmark: ``MRSparseDotProducts`` under ``--strategy blocks`` and ``stripes``
against a 1-core scipy floor and the peers ``sparse_dot_topn`` and ``sp_matmul_rs``
on 2 threads, on the parsed matrix (:mod:`bench.floor`) and end to end
(:mod:`bench.peers`).

Corpora: the examples generator's Zipf corpora (mean 50 features a vector,
exponent 1.1, fixed seeds) in family *exact* (no cut) and *df-cut*
(``--max-df``), and a real text corpus (:mod:`bench.textcorpus`).  Every run
is ``python -m mrjobs.dot_products CORPUS [--max-df N] --strategy S --measure
cosine --top-k 10 -r RUNNER --num-cores 2`` or a *variant* of it (another
``--top-k``; ``--threshold T`` with and without ``--no-prune``; ``compact``:
the corpus converted once by ``python -m mrjobs.convert --to compact``,
untimed, read with ``--input-format compact``), measured as
:mod:`bench.measure` says, with the peak bytes of its ``--local-tmp-dir``
sampled by :class:`mrjobs.runtime.diskpeak.DiskPeak`; the stripes estimate is
Σdf²/2 partial products at 24.5 bytes each.  On every corpus each peer's
script (:mod:`bench.peer_scripts`: the job's input file to the job's output
lines, top-10, 2 threads) runs best of ``--peer-passes`` and its lines are
compared with the job's (the blocks run of the corpus at top-10, on the
chart's runner if it has one).
``--quick`` (or ``BENCH_QUICK=1``): small corpora, mostly inline.  Writes
``jobs.json``, ``jobs.png`` (:mod:`bench.jobs_chart`: time against corpus
size, the job against both peers end to end, and against k) and
``jobs-profile.txt``; prints the peers end to end and the targets
(:mod:`bench.checks` has issue 27's) with pass/fail from the run; reports,
never asserts.
"""
import json
import math
import os
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as ``python bench/jobs.py``
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from bench import checks as more_checks  # noqa: E402
from bench import common, floor, measure, peer_runs, peer_scripts, profiling  # noqa: E402
from mrjobs.runtime.diskpeak import DiskPeak  # noqa: E402
from mrjobs.runtime.localsettings import REPORT_ENV  # noqa: E402

from bench.jobs_settings import (  # noqa: E402
    JOB_MODULE, MEASURE, TOP_K, NUM_CORES, STRATEGIES, TARGET_FLOOR_RATIO,
    TARGET_SHUFFLE_SHARE, TARGET_TASK_MEMORY, TARGET_STRIPES_RATIO, TARGET_WALL_S,
    TARGET_TEXT_CPU, TARGET_TINY_CPU_S, TARGET_K_RATIO, TARGET_PRUNE_SPEEDUP, VARIANTS,
    K_VARIANTS, TOP_K_OF)


@dataclass(frozen=True)
class Corpus:
    """A generated corpus (generator options), or ``source="text"``, and the df-cut."""

    name: str
    vectors: int
    seed: int = 0
    max_df: int = None
    features_per_vector: float = 50
    vocabulary: int = 100000
    zipf: float = 1.1
    source: str = "generated"

    @property
    def family(self):
        cut = "exact" if self.max_df is None else "df-cut %d" % self.max_df
        return {"text": "text", "tfidf": "tf-idf"}.get(self.source, cut)


FULL_CORPORA = (
    Corpus("tiny-50", 50, 2), Corpus("exact-1k", 1000, 2), Corpus("W2", 5000, 2),
    Corpus("dense", 20000, 2), Corpus("exact-50k", 50000, 2), Corpus("cut-1k", 1000, 1, 1000),
    Corpus("cut-5k", 5000, 1, 1000), Corpus("W1", 20000, 1, 1000),
    Corpus("cut-50k", 50000, 1, 1000), Corpus("text-4k", 4000, source="text"),
    Corpus("text-20k", 20000, source="text"),
    # short vectors weighted tf-idf: where the pruning bounds bite
    Corpus("tfidf-20k", 20000, 3, features_per_vector=20, vocabulary=50000, zipf=1.0,
           source="tfidf"),
    # the same at 50,000 vectors: where the products outweigh a run's fixed costs
    Corpus("tfidf-50k", 50000, 3, features_per_vector=20, vocabulary=50000, zipf=1.0,
           source="tfidf"),
)
QUICK_CORPORA = tuple(Corpus(*c, vocabulary=20000) for c in (
    ("exact-q200", 200, 2), ("W2-quick", 400, 2), ("dense-quick", 1000, 2),
    ("cut-q300", 300, 1, 100), ("W1-quick", 1000, 1, 100))) + (
    Corpus("text-q400", 400, source="text"),)
#: the corpus of each target (``large``: the largest exact one; ``small``: 1k
#: vectors; ``tiny``: 50; ``prune``: where pruning is measured, with ``dense``)
WORKLOADS = {"full": {"tiny": "tiny-50", "small": "exact-1k", "dense": "dense",
                      "large": "exact-50k", "W1": "W1", "W2": "W2", "text": "text-4k",
                      "prune": "text-20k", "prune_more": ("tfidf-20k", "tfidf-50k"),
                      "zipf_e2e": ["dense", "exact-50k"], "compact": ["dense", "exact-50k"]},
             "quick": {"tiny": "exact-q200", "small": "exact-q200", "dense": "dense-quick",
                       "large": "dense-quick", "W1": "W1-quick", "W2": "W2-quick",
                       "text": "text-q400", "prune": "text-q400", "zipf_e2e": ["dense-quick"],
                       "compact": ["dense-quick"]}}
PRUNE_VARIANTS = ("t0.5", "t0.5 no-prune", "t0.8", "t0.8 no-prune")
#: (corpus, strategy, runner, variant) job runs, in the order they run
FULL_RUNS = (("tiny-50", "blocks", "local", ""),) + tuple(
    (c, s, "local", "") for c in ("exact-1k", "cut-1k", "cut-5k", "W2", "W1") for s in STRATEGIES
) + tuple(("dense", "blocks", "local", v) for v in ("", "k100", "k1000") + PRUNE_VARIANTS) + (
    ("dense", "blocks", "local", "compact"),
    ("cut-50k", "blocks", "local", ""), ("exact-50k", "blocks", "local", ""),
    ("exact-50k", "blocks", "local", "compact"),
    ("text-4k", "blocks", "inline", ""), ("text-4k", "blocks", "local", ""),
) + tuple(("text-20k", "blocks", "local", v) for v in ("",) + PRUNE_VARIANTS) + tuple(
    ("tfidf-20k", "blocks", "local", v) for v in PRUNE_VARIANTS) + tuple(
    ("tfidf-50k", "blocks", "local", v) for v in PRUNE_VARIANTS[:2])
#: left out on purpose: the stripes estimate of these corpora (in the JSON)
#: is beyond this machine's disk or the benchmark's time budget
NOT_RUN = (("dense", "stripes", "local"), ("exact-50k", "stripes", "local"),
           ("cut-50k", "stripes", "local"), ("text-4k", "stripes", "local"),
           ("text-20k", "stripes", "local"), ("tfidf-20k", "stripes", "local"),
           ("tfidf-50k", "stripes", "local"))
QUICK_RUNS = tuple(
    (c, s, "inline", "") for c in ("exact-q200", "W2-quick", "dense-quick", "cut-q300",
                                   "W1-quick") for s in STRATEGIES
) + (("exact-q200", "blocks", "local", ""), ("dense-quick", "blocks", "local", ""),
     ("dense-quick", "blocks", "inline", "k100"), ("dense-quick", "blocks", "inline", "compact"),
     ("text-q400", "blocks", "inline", "")) + tuple(
    ("text-q400", "blocks", "inline", v) for v in PRUNE_VARIANTS[:2])
#: the corpus (a workload) whose references are also taken at each k of
#: :data:`K_VARIANTS`
K_WORKLOAD = "dense"
#: seconds between /proc memory samples; functions listed per profile table
SAMPLE_INTERVAL, PROFILE_TOP = 0.2, 25
#: seconds between walks of a run's --local-tmp-dir (mrjobs.runtime.diskpeak)
DISK_INTERVAL = 0.5
#: (strategy, corpus) profiled on the inline runner
PROFILES = {"full": (("blocks", "W2"), ("stripes", "cut-5k")),
            "quick": (("blocks", "W2-quick"), ("stripes", "W1-quick"))}
#: the runner whose runs the chart and the timing targets use when a corpus
#: has runs on both
PREFERRED_RUNNER = {"full": "local", "quick": "inline"}


# -- corpora, the references, the job runs --------------------------------------------

def make_corpus(corpus, workdir):
    """``(path of the job's input, floor spec of the arrays)``."""
    if corpus.source == "text":
        from bench import textcorpus

        jsonl, npz = textcorpus.build(corpus.vectors)
        return jsonl, {"npz": str(npz)}
    from examples.generate import write_corpus

    gen = dict(vectors=corpus.vectors, features_per_vector=corpus.features_per_vector,
               vocabulary=corpus.vocabulary, zipf=corpus.zipf, seed=corpus.seed)
    if corpus.source == "tfidf":
        jsonl, npz = (Path(workdir) / ("%s.%s" % (corpus.name, ext)) for ext in ("jsonl", "npz"))
        if not jsonl.exists():
            from bench import textcorpus

            arrays = tfidf_weighted(gen)
            np.savez(npz, **arrays)
            textcorpus.write_jsonl(arrays, jsonl.with_suffix(".tmp"))
            jsonl.with_suffix(".tmp").replace(jsonl)
        return jsonl, {"npz": str(npz)}
    path = Path(workdir) / ("%s.jsonl" % corpus.name)
    if not path.exists():
        write_corpus(str(path.with_suffix(".tmp")), fmt="json", edge_cases=False,
                     progress=False, **gen)
        path.with_suffix(".tmp").replace(path)
    return path, {"generate": gen}


def tfidf_weighted(gen):
    """The generator's corpus (``gen``: its options) with each weight times
    ``ln(N / df)`` of its feature, and the features every vector holds
    dropped: popular features weigh little, as in text."""
    from examples.generate import generate_arrays

    a = generate_arrays(**gen)
    n = a["indptr"].shape[0] - 1
    df = np.bincount(a["indices"], minlength=a["feature_ids"].shape[0])
    keep = df[a["indices"]] < n
    rows = np.repeat(np.arange(n), np.diff(a["indptr"]))
    lengths = np.bincount(rows[keep], minlength=n)
    return dict(a, indptr=np.concatenate(([0], np.cumsum(lengths))),
                indices=a["indices"][keep],
                weights=(a["weights"] * np.log(n / df[a["indices"]]))[keep])


def run_references(corpus, spec, args, workdir, log, top_k=TOP_K, passes=None):
    """The corpus's stats and the floor's and sparse_dot_topn's timings (a child)."""
    spec = dict(spec, max_df=corpus.max_df, passes=passes or args.floor_passes, top_k=top_k,
                measure=MEASURE)
    out_path = Path(workdir) / ("floor-%s-k%d.json" % (corpus.name, top_k))
    m = measure.run_checked([sys.executable, "-m", "bench.floor", json.dumps(spec)],
                            out_path, SAMPLE_INTERVAL)
    st = json.loads(out_path.read_text())
    out_path.unlink()
    st.update(floor_max_rss_bytes=m["max_rss_bytes"], floor_process_wall_s=m["wall_s"],
              floor_max_rss_mb=m["max_rss_bytes"] / 1e6,
              stripes_estimate_gb=st["stripes_estimate_bytes"] / 1e9)
    log("%-11s k=%-4d floor %.2fs wall, %.2fs CPU; %s; pairs %d"
        % (corpus.name, top_k, st["floor_wall_s"], st["floor_cpu_s"], "; ".join(
            "%s %s" % (peer, "%.2fs wall, %.2fs CPU" % (st[p + "_wall_s"], st[p + "_cpu_s"])
                       if p + "_wall_s" in st else "not installed")
            for peer, (_, p) in peer_runs.PEERS.items()), st["pairs"]))
    return st


def job_command(corpus_path, corpus, strategy, runner, tmp_dir, variant=""):
    # the local runner removes its files once read (as users run it) and reports
    # each step's shuffle and its temp dir's peak (REPORT_ENV); the inline runner
    # keeps its sorted inputs for measure.shuffle_bytes
    cmd = [sys.executable, "-m", JOB_MODULE, str(corpus_path), "--strategy", strategy,
           "--measure", MEASURE, *VARIANTS[variant], "-r", runner,
           "--num-cores", str(NUM_CORES), "--local-tmp-dir", str(tmp_dir)]
    if runner != "local":
        cmd += ["--cleanup", "NONE"]
    return cmd + (["--max-df", str(corpus.max_df)] if corpus.max_df is not None else [])


def blocks_of(block_pairs):
    """The block count B from the number of block pairs B(B+1)/2."""
    return int(round((math.sqrt(8 * block_pairs + 1) - 1) / 2)) if block_pairs else None


def output_path(workdir, name, strategy, runner, variant=""):
    """Where a job run's output goes."""
    return Path(workdir) / ("out-%s-%s-%s%s.txt" % (name, strategy, runner, variant and "-"
                                                      + variant.replace(" ", "-")))


def run_job(corpus, corpus_path, strategy, runner, variant, args, workdir, log, keep=False):
    """One job run's row; its output is removed unless ``keep`` (or ``--keep``)."""
    out_path = output_path(workdir, corpus.name, strategy, runner, variant)
    tmp_dir = Path(workdir) / ("tmp-" + out_path.stem[4:])
    shutil.rmtree(tmp_dir, ignore_errors=True)
    tmp_dir.mkdir(parents=True)
    cmd = job_command(corpus_path, corpus, strategy, runner, tmp_dir, variant)
    report = tmp_dir.with_name(tmp_dir.name + ".report.json")
    report.unlink(missing_ok=True)
    os.environ[REPORT_ENV] = str(report)
    try:
        with DiskPeak(tmp_dir, every=DISK_INTERVAL) as disk:
            m = measure.run_checked(cmd, out_path, SAMPLE_INTERVAL)
    finally:
        del os.environ[REPORT_ENV]
    by_step, noted_peak = measure.shuffle_bytes(tmp_dir), 0
    if report.exists():  # the local runner's (its sorted inputs are gone)
        noted = json.loads(report.read_text())
        by_step = [noted["shuffle_bytes"][k] for k in sorted(noted["shuffle_bytes"], key=int)]
        noted_peak = noted["temp_peak_bytes"]
        report.unlink()
    shutil.rmtree(tmp_dir, ignore_errors=True)
    output = measure.read_output(out_path)
    if not (args.keep or keep):
        out_path.unlink()
    row = job_row(corpus, strategy, runner, cmd, m, by_step, output, variant)
    row.update(input_bytes=Path(corpus_path).stat().st_size,
               temp_disk_peak_bytes=max(disk.peak, noted_peak), temp_disk_samples=disk.samples)
    log("%-11s %-7s %-6s %-13s wall %7.1fs  cpu %7.1fs  shuffle %8.1f MB  task peak %6.0f MB"
        "  tmp disk %7.1f MB" % (corpus.name, strategy, runner, variant, row["wall_s"],
                                 row["cpu_s"], row["shuffle_bytes"] / 1e6,
                                 (row["task_peak_rss_bytes"] or 0) / 1e6,
                                 row["temp_disk_peak_bytes"] / 1e6))
    return row


def job_row(corpus, strategy, runner, cmd, m, by_step, output, variant=""):
    """One run's result row from its measurements."""
    counters = measure.parse_counters(m["stderr"])
    work = {}
    for step in counters:
        for name, n in step.get("mrsparse work", {}).items():
            work[name] = work.get(name, 0) + n
    peaks, n_tasks = measure.task_peaks(m["process_peaks"])
    biggest = max(m["process_peaks"], key=lambda p: p[1], default=(None, 0))
    task_peak = m["max_rss_bytes"] if runner == "inline" else max(peaks.values(), default=None)
    return {
        "corpus": corpus.name, "family": corpus.family, "vectors": corpus.vectors,
        "strategy": strategy, "runner": runner, "variant": variant,
        "top_k": TOP_K_OF.get(variant), "command": " ".join(["python"] + cmd[1:]),
        "blocks": blocks_of(work.get("block pairs")) if strategy == "blocks" else None,
        "steps": len(counters), "step_wall_s": measure.step_times(m["stderr"], m["wall_s"]),
        **{k: m[k] for k in ("wall_s", "cpu_s", "user_s", "sys_s", "max_rss_bytes",
                             "tree_rss_peak_bytes", "tree_pss_peak_bytes")},
        "task_peak_rss_bytes": task_peak, "task_peaks": peaks, "task_processes_seen": n_tasks,
        "largest_process": {"name": measure.process_name(biggest[0]),
                            "peak_rss_bytes": biggest[1]},
        "memory_samples": m["samples"], "shuffle_bytes": sum(by_step),
        "shuffle_bytes_by_step": by_step, **output, "work": work, "counters": counters,
    }


def profile_run(corpus, corpus_path, strategy, args, workdir, corpora_stats, log):
    tmp_dir = Path(workdir) / "tmp-profile"
    tmp_dir.mkdir(parents=True, exist_ok=True)
    cmd = job_command(corpus_path, corpus, strategy, "inline", tmp_dir)
    p = profiling.profile_run(cmd, strategy, workdir, PROFILE_TOP, args.keep)
    p.update(strategy=strategy, corpus=corpus.name,
             floor_wall_s=corpora_stats[corpus.name]["floor_wall_s"])
    log("profile of %s on %s (inline): %.1f s under cProfile"
        % (strategy, corpus.name, p["profiled_total_s"]))
    return p


# -- derived numbers, checks --------------------------------------------------------

_row = more_checks.find_row


def _references(st, r):
    """The floor's and sparse_dot_topn's numbers for the run's top-k (None
    for a threshold run)."""
    k = r["top_k"]
    if k is None:
        return {}
    return st if k == TOP_K else st.get("k_refs", {}).get(str(k), {})


def add_ratios(rows, corpora_stats):
    """Per run: ratios to the floor and sparse_dot_topn at the same k, to
    stripes on the same corpus and runner, and to the stripes estimate."""
    for r in rows:
        st = corpora_stats[r["corpus"]]
        refs = _references(st, r)
        stripes = _row(rows, r["corpus"], "stripes", r["runner"], variant=r["variant"]) or {}
        for ref, key in (("floor", "floor_%s_s"), ("topn", "topn_%s_s"), ("rs", "rs_%s_s"),
                         ("stripes", "%s_s")):
            src = stripes if ref == "stripes" else refs
            for clock in ("wall", "cpu"):
                r["%s_vs_%s" % (clock, ref)] = common.ratio(r[clock + "_s"], src.get(key % clock))
        r["shuffle_vs_estimate"] = common.ratio(r["shuffle_bytes"], st["stripes_estimate_bytes"])
        r["shuffle_mb"] = r["shuffle_bytes"] / 1e6
        r["task_peak_mb"] = (r["task_peak_rss_bytes"] or 0) / 1e6
        r["max_rss_mb"] = r["max_rss_bytes"] / 1e6
        r["tree_pss_mb"] = r["tree_pss_peak_bytes"] / 1e6
        r["temp_disk_mb"] = r["temp_disk_peak_bytes"] / 1e6
        r["temp_disk_vs_input"] = common.ratio(r["temp_disk_peak_bytes"], r["input_bytes"])


def _rel_diff(a, b):
    return abs(a - b) / max(abs(b), 1e-300)


def _twin(rows, r):
    """The run to compare ``r``'s output with: the blocks run of the corpus
    and variant (inline if any), or for a pruned run, its ``--no-prune`` twin, or
    for a run from compact input, the run from JSON on the same runner."""
    if r["variant"].startswith("t") and not r["variant"].endswith("no-prune"):
        return _row(rows, r["corpus"], "blocks", r["runner"], variant=r["variant"] + " no-prune")
    if r["variant"] == "compact":
        return _row(rows, r["corpus"], "blocks", r["runner"])
    ref = (_row(rows, r["corpus"], "blocks", "inline", variant=r["variant"])
           or _row(rows, r["corpus"], "blocks", variant=r["variant"]))
    return None if ref is r else ref


def consistency(rows, corpora_stats):
    """The job's counters against the corpus; its neighbours against the
    floor's at the same k, and its lines against its twin's (:func:`_twin`)."""
    out = []
    for r in rows:
        st, w, refs, ref = corpora_stats[r["corpus"]], r["work"], _references(
            corpora_stats[r["corpus"]], r), _twin(rows, r)
        b, sent = r["blocks"] or 0, w.get("block entries sent")
        if r["strategy"] != "blocks":
            work_ok = w.get("partial products") == st["partial_products"]
        elif w.get("df count entries sent"):
            # --max-df by count tables: a task leaves out only the features it
            # alone counted over the cut, the block pairs drop the rest
            work_ok = st["kept_nnz"] * b <= sent <= st["nnz"] * b
        else:
            work_ok = sent == st["kept_nnz"] * b
        pruned = r["variant"].startswith("t") and not r["variant"].endswith("no-prune")
        out.append({
            "run": _run_name(r), "work_match": work_ok,
            # a pruned run scores only the pairs it computed
            "pairs_scored_match": None if pruned else w.get("pairs scored") == st["pairs"],
            "same_neighbours_as_floor": None if not refs else (
                r["neighbours_sha256"] == refs.get("floor_neighbours_sha256")
                and r["output_pairs"] == refs.get("floor_output_pairs")),
            "score_sum_rel_diff_floor": None if not refs else _rel_diff(
                r["score_sum"], refs["floor_score_sum"]),
            "same_neighbours_as_blocks": ref and r["neighbours_sha256"] == ref["neighbours_sha256"],
            "same_lines_as_blocks": ref and r["lines_sha256"] == ref["lines_sha256"],
            "score_sum_rel_diff_blocks": ref and _rel_diff(r["score_sum"], ref["score_sum"]),
        })
    return out


def _vs_topn(r):
    """The run against each peer's product on the parsed matrix, as text."""
    return "".join("; %s %.2fx wall, %.2fx CPU" % (peer, r["wall_vs_" + p], r["cpu_vs_" + p])
                   for peer, (_, p) in peer_runs.PEERS.items() if r.get("wall_vs_" + p) is not None)


def _floor_check(rows, corpora_stats, name, limit):
    b = _row(rows, name, "blocks")
    if b is None:
        return []
    st = corpora_stats[name]
    return [common.check(
        "floor %s" % name, "blocks wall <= %gx the scipy floor" % limit,
        "%.2fx (%.1f s vs %.1f s); CPU %.2fx (%.1f s vs %.1f s)%s" % (
            b["wall_vs_floor"], b["wall_s"], st["floor_wall_s"], b["cpu_vs_floor"], b["cpu_s"],
            st["floor_cpu_s"], _vs_topn(b)), b["wall_vs_floor"] <= limit)]


def _dense_checks(rows, corpora_stats, name):
    """Shuffle on the dense workload; every task's memory over all runs."""
    b = _row(rows, name, "blocks")
    out = []
    if b is not None:
        st, size = corpora_stats[name], common.size_label
        out.append(common.check(
            "shuffle %s" % name, "blocks shuffle <= %g%% of stripes' sum df^2/2 x %g bytes"
            % (100 * TARGET_SHUFFLE_SHARE, floor.BYTES_PER_PARTIAL_PRODUCT),
            "%.3f%% (%s vs %s)" % (100 * b["shuffle_vs_estimate"], size(b["shuffle_bytes"]),
                                   size(st["stripes_estimate_bytes"])),
            b["shuffle_vs_estimate"] <= TARGET_SHUFFLE_SHARE))
    if rows:
        m = max(rows, key=lambda r: r["task_peak_rss_bytes"] or 0)
        peaks = ", ".join("%s %s" % (k, common.size_label(v)) for k, v in m["task_peaks"].items())
        peak = m["task_peak_rss_bytes"]
        out.append(common.check(
            "memory", "every task's peak RSS <= %.1f GB (every run)" % (TARGET_TASK_MEMORY / 1e9),
            "largest %s (%s%s); whole tree PSS %s" % (
                common.size_label(peak or 0), _run_name(m), ": " + peaks if peaks else "",
                common.size_label(m["tree_pss_peak_bytes"])),
            peak is not None and peak <= TARGET_TASK_MEMORY))
    return out


def _speed_checks(rows, corpora_stats, workloads):
    """Stripes ratio, wall and CPU targets of the small and text workloads."""
    out = []
    b, s = _row(rows, workloads["W1"], "blocks"), _row(rows, workloads["W1"], "stripes")
    if b is not None and s is not None and b["runner"] == s["runner"]:
        out.append(common.check(
            "stripes %s %s" % (b["corpus"], b["runner"]),
            "blocks wall <= %gx stripes wall" % TARGET_STRIPES_RATIO,
            "%.3fx (%.1f s vs %.1f s); CPU %.3fx; shuffle %.3fx" % (
                b["wall_vs_stripes"], b["wall_s"], s["wall_s"], b["cpu_vs_stripes"],
                b["shuffle_bytes"] / s["shuffle_bytes"]),
            b["wall_vs_stripes"] <= TARGET_STRIPES_RATIO))
    for w, limit in TARGET_WALL_S.items():
        b = _row(rows, workloads[w], "blocks", "local")
        if b is not None:
            out.append(common.check(
                "wall %s local" % b["corpus"], "blocks wall <= %g s on the local runner" % limit,
                "%.2f s (CPU %.2f s)%s" % (b["wall_s"], b["cpu_s"], _vs_topn(b)),
                b["wall_s"] <= limit))
    b = _row(rows, workloads["tiny"], "blocks", "local")
    if b is not None:
        out.append(common.check(
            "CPU %s local" % b["corpus"], "blocks CPU <= %g s in all on the local runner"
            % TARGET_TINY_CPU_S, "%.2f s CPU (%.2f s wall, %s task processes)" % (
                b["cpu_s"], b["wall_s"], b["task_processes_seen"]),
            b["cpu_s"] <= TARGET_TINY_CPU_S))
    for runner, limit in TARGET_TEXT_CPU.items():
        b = _row(rows, workloads["text"], "blocks", runner)
        if b is not None:
            out.append(common.check(
                "text %s %s" % (b["corpus"], runner), "blocks CPU <= %gx the floor's" % limit,
                "%.2fx (%.1f s vs %.2f s)%s" % (
                    b["cpu_vs_floor"], b["cpu_s"], corpora_stats[b["corpus"]]["floor_cpu_s"],
                    _vs_topn(b)), b["cpu_vs_floor"] <= limit))
    return out


def _k_checks(rows, workloads):
    out, name = [], workloads["dense"]
    for variant, k in K_VARIANTS.items():
        r = _row(rows, name, "blocks", variant=variant)
        base = r and _row(rows, name, "blocks", r["runner"])
        if variant and base is not None:
            ratio = r["wall_s"] / base["wall_s"]
            out.append(common.check(
                "top-k %s k=%d" % (name, k), "wall <= %gx the top-k %d wall"
                % (TARGET_K_RATIO[k], TOP_K), "%.2fx (%.1f s vs %.1f s)%s" % (
                    ratio, r["wall_s"], base["wall_s"], _vs_topn(r)),
                ratio <= TARGET_K_RATIO[k]))
    return out


def _prune_checks(rows, workloads):
    """Each question's speed-up from pruning, with the same bytes."""
    out = []
    for name in dict.fromkeys((workloads["prune"], workloads["dense"])
                              + workloads.get("prune_more", ())):
        if not any(r["corpus"] == name and r["variant"].startswith("t") for r in rows):
            continue
        for variant, limit in TARGET_PRUNE_SPEEDUP.items():
            p = _row(rows, name, "blocks", variant=variant)
            if p is None:
                continue
            label = variant or "top-k %d" % TOP_K
            if not variant:
                out.append(common.check(
                    "prune %s %s" % (name, label), "pruned >= %gx faster, same bytes" % limit,
                    "not pruned: --top-k alone runs every product (1.00x; docs/internals/benchmarks.md says why)",
                    False))
                continue
            f = _row(rows, name, "blocks", p["runner"], variant=variant + " no-prune")
            if f is None:
                continue
            w, fw = p["work"], f["work"]
            speedup = f["wall_s"] / p["wall_s"]
            skipped = 1 - w.get("products computed", 0) / max(fw.get("products computed", 1), 1)
            same = p["output_sha256"] == f["output_sha256"]
            out.append(common.check(
                "prune %s %s" % (name, label), "pruned >= %gx faster, same bytes" % limit,
                "%.2fx wall (%.1f s vs %.1f s), %.2fx CPU; %.1f%% of the products skipped; "
                "%s bytes" % (speedup, p["wall_s"], f["wall_s"], f["cpu_s"] / p["cpu_s"],
                              100 * skipped, "same" if same else "DIFFERENT"),
                speedup >= limit and same))
    return out


def _peer_checks(peer_rows, workloads):
    """The peers' scripts against the job on the dense and the text workload:
    the same neighbours but for ties at the k-th place (which the job breaks
    by the smaller UUID and a peer as its heap leaves), scores within
    :data:`bench.peer_runs.RTOL`."""
    out = []
    for name in dict.fromkeys((workloads["dense"], workloads["text"])):
        rows = [r for r in peer_rows if r["corpus"] == name]
        job = next((r for r in rows if r["kind"] == "job"), None)
        scripts = [r for r in rows if r["kind"] == "peer"]
        if job is None or not scripts:
            continue
        out.append(common.check(
            "peers %s" % name, "each peer's script (%d threads) finds the job's neighbours "
            "(but ties at the k-th), scores within %g" % (floor.TOPN_THREADS, peer_runs.RTOL),
            "job %.1f s wall, %.1f s CPU; %s" % (job["wall_s"], job["cpu_s"], "; ".join(
                "%s %.1f s wall, %.1f s CPU (product %.2f s), %s, max rel. diff %.1e"
                % (r["who"], r["wall_s"], r["cpu_s"], r["product_wall_s"] or 0,
                   "same neighbours" if r["same_neighbours_as_job"] else
                   "%d lines with other neighbours, %d tied at the k-th" % (
                       r["lines_differing"], r["lines_tied_at_cut"]),
                   r["max_rel_diff"]) for r in scripts)),
            all(r.get("scores_ok_but_ties") for r in scripts)))
    return out


def evaluate_checks(rows, corpora_stats, workloads, peer_rows=()):
    """Every target of the run (see the module's TARGET_* constants and
    :mod:`bench.checks`'s)."""
    checks = []
    for w in dict.fromkeys(("dense", "large", "W1")):
        name = workloads[w]
        if w == "dense" or name != workloads["dense"]:
            checks += _floor_check(rows, corpora_stats, name, TARGET_FLOOR_RATIO[w])
    checks += _dense_checks(rows, corpora_stats, workloads["dense"])
    checks += _speed_checks(rows, corpora_stats, workloads)
    checks += _k_checks(rows, workloads)
    checks += _prune_checks(rows, workloads)
    checks += _peer_checks(peer_rows, workloads)
    checks += more_checks.e2e_checks(peer_rows, workloads)
    checks += more_checks.compact_checks(rows, peer_rows, workloads)
    checks += more_checks.temp_disk_check(rows)
    return checks


# -- output --------------------------------------------------------------------------

CORPUS_TABLE = [
    ("name", "corpus"), ("family", "family"), ("vectors", "vectors", "{:,}"),
    ("kept_nnz", "kept nnz", "{:,}"), ("features_dropped", "cut feats", "{:,}"),
    ("pairs", "pairs", "{:,}"), ("stripes_estimate_gb", "stripes est. GB", "{:,.2f}"),
    ("floor_wall_s", "floor s", "{:.2f}"), ("floor_cpu_s", "floor CPU s", "{:.2f}"),
    ("floor_passes", "passes", "{}"), ("floor_max_rss_mb", "floor RSS MB", "{:,.0f}"),
    ("topn_wall_s", "topn s", "{:.2f}"), ("topn_cpu_s", "topn CPU s", "{:.2f}"),
    ("topn_same_scores_as_floor", "topn scores=floor"),
    ("rs_wall_s", "rs s", "{:.2f}"), ("rs_cpu_s", "rs CPU s", "{:.2f}"),
    ("rs_same_scores_as_floor", "rs scores=floor"),
]
TABLE = [
    ("corpus", "corpus"), ("strategy", "strategy"), ("runner", "runner"),
    ("variant", "variant"),
    ("blocks", "B", "{:,}"), ("wall_s", "wall s", "{:,.1f}"), ("cpu_s", "CPU s", "{:,.1f}"),
    ("wall_vs_floor", "wall/floor", "{:,.2f}"), ("cpu_vs_floor", "CPU/floor", "{:,.2f}"),
    ("wall_vs_topn", "wall/topn", "{:,.2f}"), ("cpu_vs_topn", "CPU/topn", "{:,.2f}"),
    ("wall_vs_rs", "wall/rs", "{:,.2f}"), ("cpu_vs_rs", "CPU/rs", "{:,.2f}"),
    ("wall_vs_stripes", "wall/stripes", "{:.3f}"), ("shuffle_mb", "shuffle MB", "{:,.1f}"),
    ("shuffle_vs_estimate", "shuffle/est.", "{:.4f}"),
    ("task_peak_mb", "task peak MB", "{:,.0f}"), ("tree_pss_mb", "tree PSS MB", "{:,.0f}"),
    ("temp_disk_mb", "tmp disk MB", "{:,.1f}"), ("temp_disk_vs_input", "tmp/input", "{:.2f}"),
    ("output_pairs", "out entries", "{:,}"),
]
CONSISTENCY_TABLE = [
    ("run", "run"), ("pairs_scored_match", "pairs=floor"), ("work_match", "work=corpus"),
    ("same_neighbours_as_floor", "neighbours=floor"),
    ("score_sum_rel_diff_floor", "score sum rel. diff", "{:.1e}"),
    ("same_neighbours_as_blocks", "neighbours=blocks"), ("same_lines_as_blocks", "lines=blocks"),
    ("score_sum_rel_diff_blocks", "vs blocks", "{:.1e}"),
]


PEER_TABLE = [
    ("corpus", "corpus"), ("vectors", "vectors", "{:,}"), ("who", "who"),
    ("wall_s", "wall s", "{:,.2f}"), ("cpu_s", "CPU s", "{:,.2f}"),
    ("wall_vs_job", "wall/job", "{:.2f}"), ("cpu_vs_job", "CPU/job", "{:.2f}"),
    ("product_wall_s", "product s", "{:,.2f}"), ("product_cpu_s", "product CPU s", "{:,.2f}"),
    ("matrix_wall_s", "on matrix s", "{:,.2f}"), ("matrix_cpu_s", "on matrix CPU s", "{:,.2f}"),
    ("parse_wall_s", "parse s", "{:,.2f}"), ("write_wall_s", "write s", "{:,.2f}"),
    ("max_rss_mb", "largest process MB", "{:,.0f}"),
    ("same_neighbours_as_job", "neighbours=job"), ("lines_tied_at_cut", "ties at k-th", "{:,}"),
    ("lines_differing", "other lines", "{:,}"), ("same_order", "order=job"),
    ("max_rel_diff", "max rel. diff", "{:.1e}"), ("same_neighbours_as_floor", "neighbours=floor"),
]


def peer_table_title(peer_rows):
    return ("End to end: the job (blocks, top-%d) against each peer's script (%d threads: "
            "parse the job's input, CSR, normalise, top-k product, write the job's lines; best "
            "of %d processes; product s: the script's own timing of the product; on matrix: "
            "the product alone as bench.floor times it, best of its passes; largest "
            "process: its peak RSS (VmHWM, sampled); "
            "neighbours=job: the same neighbours as the job's lines, scores within %g; ties at "
            "k-th: lines whose neighbours differ only by a tie at the cut; order=job: also in "
            "the same order; "
            "load average %s on %d cores: timings are noisy)" % (
                TOP_K, floor.TOPN_THREADS, max(r.get("passes") or 1 for r in peer_rows),
                peer_runs.RTOL, " ".join("%.1f" % x for x in os.getloadavg()), os.cpu_count()))


def _run_name(r):
    return " ".join(x for x in (r["corpus"], r["strategy"], r["runner"], r["variant"]) if x)


def print_tables(rows, corpora_stats, consist, checks, not_run, peer_rows=()):
    common.print_table(list(corpora_stats.values()), CORPUS_TABLE,
                       title="Corpora, the scipy floor (1 core), sparse_dot_topn (topn) and "
                             "sp_matmul_rs (rs) on the parsed matrix (%d threads; the product "
                             "alone) (--measure %s --top-k %d)"
                             % (floor.TOPN_THREADS, MEASURE, TOP_K))
    common.print_table(rows, TABLE, title="MRSparseDotProducts --measure %s --top-k %d "
                       "--num-cores %d (one run each; memory sampled every %.1f s)"
                       % (MEASURE, TOP_K, NUM_CORES, SAMPLE_INTERVAL))
    n = max([r["steps"] for r in rows] + [0])
    step_rows = [{"run": _run_name(r), **{"s%d" % i: t for i, t in enumerate(r["step_wall_s"])},
                  **{"b%d" % i: b / 1e6 for i, b in enumerate(r["shuffle_bytes_by_step"])}}
                 for r in rows]
    common.print_table(step_rows, [("run", "run")] + [
        ("s%d" % i, "step %d s" % (i + 1), "{:,.1f}") for i in range(n)] + [
        ("b%d" % i, "step %d MB in" % (i + 1), "{:,.1f}") for i in range(n)],
        title="Per step: wall seconds and bytes into the reducers")
    task_rows = [{"run": _run_name(r), "tasks": r["task_processes_seen"],
                  "max_rss": r["max_rss_bytes"] / 1e6,
                  "largest": "%s %.0f" % (r["largest_process"]["name"],
                                          r["largest_process"]["peak_rss_bytes"] / 1e6),
                  "peaks": ", ".join("%s %.0f" % (k, v / 1e6) for k, v in r["task_peaks"].items())
                  or "(one process)"} for r in rows]
    common.print_table(task_rows, [("run", "run"), ("tasks", "task procs"),
                                   ("max_rss", "max RSS MB", "{:,.0f}"),
                                   ("largest", "largest process, MB"),
                                   ("peaks", "peak RSS MB per task kind")],
                       title="Task memory (VmHWM sampled; max RSS exact, any process)")
    for n in not_run:
        print("\nNOT RUN: %s %s %s (stripes estimate %s)" % (
            n["corpus"], n["strategy"], n["runner"],
            common.size_label(n["stripes_estimate_bytes"])))
    if peer_rows:
        common.print_table(peer_rows, PEER_TABLE, title=peer_table_title(peer_rows))
    common.print_table(consist, CONSISTENCY_TABLE, title="Consistency (PASS = equal; blocks = "
                       "the blocks run on the same corpus, inline if any; lines = the set of "
                       "output lines, scores to the last bit)")
    common.print_checks(checks)


# -- the run ---------------------------------------------------------------------------

def parse_args(argv=None):
    ap = common.arg_parser("python -m bench.jobs", __doc__.split("\n\n")[0].replace("``", ""),
                           "jobs.json, jobs.png, jobs-profile.txt")
    ap.add_argument("--workdir", type=Path, help="where corpora, outputs and mrjob tmp "
                    "dirs go (default: a new temporary directory, removed at the end)")
    ap.add_argument("--keep", action="store_true", help="keep the workdir's files")
    ap.add_argument("--only", type=lambda s: tuple(s.split(",")),
                    help="comma-separated corpora to run (default: all of the plan)")
    ap.add_argument("--floor-passes", type=int, default=3,
                    help="timings of each reference per corpus, best kept (fewer once "
                         "they have taken %g s)" % floor.SECONDS)
    ap.add_argument("--no-profile", action="store_true", help="skip the cProfile runs")
    ap.add_argument("--peer-passes", type=int, default=2,
                    help="runs of each peer's script per corpus, best kept")
    ap.add_argument("--no-peers", action="store_true", help="skip the peers' scripts")
    return common.parse(ap, argv)


def plan(args):
    """``(mode, corpora by name, runs)`` for the arguments."""
    mode = "quick" if args.quick else "full"
    corpora = {c.name: c for c in (QUICK_CORPORA if args.quick else FULL_CORPORA)}
    runs = QUICK_RUNS if args.quick else FULL_RUNS
    if args.only:
        unknown = set(args.only) - set(corpora)
        if unknown:
            sys.exit("unknown corpora %s; choose from %s" % (sorted(unknown), sorted(corpora)))
        corpora = {k: v for k, v in corpora.items() if k in args.only}
        runs = tuple(r for r in runs if r[0] in corpora)
    return mode, corpora, runs


def measure_all(mode, corpora, runs, args, workdir, log):
    """``(corpora_stats, rows, profiles)``: every reference, job run and profile."""
    corpora_stats, paths, specs, rows, profiles = {}, {}, {}, [], []
    for name, c in corpora.items():
        t0 = time.perf_counter()
        paths[name], spec = make_corpus(c, workdir)
        specs[name] = spec
        generate_s = time.perf_counter() - t0
        corpora_stats[name] = dict(run_references(c, spec, args, workdir, log), name=name,
                                   family=c.family, generator=asdict(c), generate_s=generate_s,
                                   input_bytes=paths[name].stat().st_size)
    k_name = WORKLOADS[mode][K_WORKLOAD]
    for k in sorted({K_VARIANTS[v] for c, _, _, v in runs if c == k_name and v in K_VARIANTS}
                    - {TOP_K}) if k_name in corpora else ():
        # the references at the other k of the runs, one pass each
        st = run_references(corpora[k_name], specs[k_name], args, workdir, log, k, passes=1)
        corpora_stats[k_name].setdefault("k_refs", {})[str(k)] = {
            key: v for key, v in st.items() if key.startswith(("floor_", "topn_", "rs_"))}
    refs = {} if args.no_peers else peer_reference_runs(runs, PREFERRED_RUNNER[mode])
    for name in dict.fromkeys(c for c, _, _, v in runs if v == "compact"):
        paths[name, "compact"] = compact_copy(paths[name], log)
    for run in runs:
        name, strategy, runner, variant = run
        rows.append(run_job(corpora[name], paths.get((name, variant), paths[name]), strategy,
                            runner, variant, args, workdir, log, keep=refs.get(name) == run))
    add_ratios(rows, corpora_stats)
    peer_rows = []
    for name in () if args.no_peers else corpora:
        peer_rows += run_peers(corpora[name], paths[name], refs.get(name), rows,
                               corpora_stats[name], args, workdir, log)
    for strategy, name in () if args.no_profile else PROFILES[mode]:
        if name in corpora:
            profiles.append(profile_run(corpora[name], paths[name], strategy, args, workdir,
                                        corpora_stats, log))
    return corpora_stats, rows, profiles, peer_rows


def compact_copy(json_path, log):
    """The corpus converted once by ``python -m mrjobs.convert --to compact``
    (local runner, part files joined), beside it; the conversion is not part
    of any run's time."""
    from bench import hadoop

    path = Path(json_path).with_suffix(".compact")
    if not path.exists():
        seconds = hadoop.convert(json_path, path.with_suffix(".compact-tmp"), "compact")
        path.with_suffix(".compact-tmp").replace(path)
        log("%s -> %s: converted in %.1f s (%s -> %s)" % (
            Path(json_path).name, path.name, seconds, common.size_label(
                Path(json_path).stat().st_size), common.size_label(path.stat().st_size)))
    return path


def peer_reference_runs(runs, prefer):
    """``{corpus: run}``: the job run each peer's lines are compared with, the
    corpus's blocks run at top-10 (on ``prefer`` if there is one)."""
    ref = {}
    for run in runs:
        name, strategy, runner, variant = run
        if strategy == "blocks" and not variant and (
                name not in ref or runner == prefer and ref[name][2] != prefer):
            ref[name] = run
    return ref


def run_peers(corpus, corpus_path, ref, rows, st, args, workdir, log):
    """The rows of the end-to-end table for one corpus: the job's reference run
    (if the plan has one) and each installed peer's script, compared with
    it and with the floor; each peer's times also go into ``st`` (the
    corpus's stats: ``topn_e2e_wall_s``, ...) for the chart."""
    out, job, job_out = [], None, None
    base = {"corpus": corpus.name, "family": corpus.family, "vectors": corpus.vectors}
    if ref is not None:
        job = _row(rows, corpus.name, ref[1], ref[2], variant=ref[3])
        job_out = output_path(workdir, *ref)
        out.append(dict(base, kind="job", who="job (blocks, %s)" % ref[2],
                        command=job["command"], wall_s=job["wall_s"], cpu_s=job["cpu_s"],
                        wall_vs_job=1.0, cpu_vs_job=1.0,
                        max_rss_mb=job["largest_process"]["peak_rss_bytes"] / 1e6,
                        same_neighbours_as_floor=job["neighbours_sha256"]
                        == st["floor_neighbours_sha256"]))
    for peer, (_, prefix) in peer_runs.PEERS.items():
        if not peer_runs.installed(peer):
            log("%-11s %s is not installed: not run" % (corpus.name, peer))
            continue
        peer_out = Path(workdir) / ("out-%s-%s.txt" % (corpus.name, peer))
        r = peer_runs.run_peer(peer, corpus_path, peer_out, corpus.max_df, args.peer_passes,
                           SAMPLE_INTERVAL)
        ph = r.pop("phases")
        r.update(base, kind="peer", who=peer, max_rss_mb=r["max_rss_bytes"] / 1e6,
                 matrix_wall_s=st.get(prefix + "_wall_s"),
                 matrix_cpu_s=st.get(prefix + "_cpu_s"),
                 **{"%s_%s" % (k, c): ph.get(k, {}).get(c) for k in ("parse", "product",
                                                                      "write")
                    for c in ("wall_s", "cpu_s")},
                 phases=ph, same_neighbours_as_floor=r["neighbours_sha256"]
                 == st["floor_neighbours_sha256"])
        if job is not None:
            c = peer_runs.compare_outputs(job_out, peer_out)
            r.update(c, same_neighbours_as_job=c["same_neighbours"],
                     wall_vs_job=r["wall_s"] / job["wall_s"], cpu_vs_job=r["cpu_s"] / job["cpu_s"])
        if not args.keep:
            peer_out.unlink()
        st["%s_e2e_wall_s" % prefix], st["%s_e2e_cpu_s" % prefix] = r["wall_s"], r["cpu_s"]
        log("%-11s %-15s script %6.2fs wall, %6.2fs CPU (product %.2fs wall); %s" % (
            corpus.name, peer, r["wall_s"], r["cpu_s"], r["product_wall_s"] or 0,
            "no job run to compare with" if job is None else "%s, max rel. diff %.1e" % (
                "the same neighbours as the job's" if r["same_neighbours_as_job"] else
                "%d lines with other neighbours than the job's, %d tied at the k-th" % (
                    r["lines_differing"], r["lines_tied_at_cut"]), r["max_rel_diff"])))
        out.append(r)
    if job_out is not None and not args.keep:
        job_out.unlink()
    return out


def main(argv=None):
    args = parse_args(argv)
    mode, corpora, runs = plan(args)
    workloads, prefer, log = WORKLOADS[mode], PREFERRED_RUNNER[mode], common.logger()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="mrsparse-bench-jobs-"))
    workdir.mkdir(parents=True, exist_ok=True)
    log("workdir %s; %d corpora, %d job runs, --measure %s --top-k %d --num-cores %d"
        % (workdir, len(corpora), len(runs), MEASURE, TOP_K, NUM_CORES))
    try:
        corpora_stats, rows, profiles, peer_rows = measure_all(mode, corpora, runs, args,
                                                               workdir, log)
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    checks, consist = evaluate_checks(rows, corpora_stats, workloads, peer_rows), consistency(
        rows, corpora_stats)
    not_run = [{"corpus": c, "strategy": s, "runner": r,
                "stripes_estimate_bytes": corpora_stats[c]["stripes_estimate_bytes"]}
               for c, s, r in NOT_RUN if c in corpora and not args.quick]
    print_tables(rows, corpora_stats, consist, checks, not_run, peer_rows)
    if profiles:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "jobs-profile.txt").write_text(profiling.profile_text(profiles))
    settings = {"quick": args.quick, "measure": MEASURE, "top_k": TOP_K, "num_cores": NUM_CORES,
                "floor_passes": args.floor_passes, "sample_interval_s": SAMPLE_INTERVAL,
                "job": JOB_MODULE, "runs": [list(r) for r in runs], "workloads": workloads,
                "topn_threads": floor.TOPN_THREADS, "peer_passes": args.peer_passes,
                "method": {"measure": measure.__doc__, "references": floor.__doc__,
                           "peers": peer_runs.__doc__,
                           "peer_scripts": peer_scripts.__doc__}}
    title = ("MRSparseDotProducts --strategy blocks vs stripes vs a scipy floor, "
             "sparse_dot_topn and sp_matmul_rs (--measure %s --top-k %d, %s runner, "
             "--num-cores %d; %%s)"
             % (MEASURE, TOP_K, prefer, NUM_CORES))
    from bench.jobs_chart import draw_chart

    common.finish("jobs", {"settings": settings, "corpora": corpora_stats, "results": rows,
                           "peers": peer_rows, "not_run": not_run, "consistency": consist,
                           "checks": checks,
                           "profiles": profiles}, args, log, rows and (lambda date: draw_chart(
                               rows, corpora_stats, args.out, title % date, prefer,
                               workloads[K_WORKLOAD])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
