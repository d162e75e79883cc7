"""Job benchmark: the two strategies of ``MRSparseDotProducts`` (``--strategy
blocks``, the default, and ``--strategy stripes``) against each other and
against a single-machine scipy floor, on mrjob's local runner.

Corpora are made by the examples generator (``examples.generate``) with fixed
seeds: a Poisson number of features per vector (mean 50), Zipf exponent 1.1
over 100,000 feature UUIDs.  Two families, each at several sizes:

*exact* (seed 2, no df-cut): the dense-overlap family.  A few features sit in
    nearly every vector, so almost every pair shares a feature.  ``W2`` is its
    5,000-vector member, ``dense`` its 20,000-vector member.
*df-cut* (seed 1, ``--max-df 1000``): features held by more than 1,000
    vectors are dropped.  ``W1`` is its 20,000-vector member.

Every run uses the same options, so every run is a point of the scaling
chart::

    python -m mrjobs.dot_products CORPUS [--max-df 1000] --strategy S \\
        --measure cosine --top-k 10 -r local --num-cores 2 > output

(the block count is the job's default, from the input size and the cores).
Stripes is not run where it would not finish in reasonable time; the JSON
says which runs were skipped and why.  The JSON-wire comparison of the
previous version of this benchmark is not repeated (it is recorded in the
README's history); every run uses the default compact wire.

What is measured, per job run (a child process, started as above):

wall, CPU
    Wall time of the child process; CPU time = user + system time of the
    child *and every descendant it waited for* (``os.wait4``): the local
    runner's task processes and its ``sort`` are included.
memory
    ``task_peak_rss``: the largest peak resident set (``VmHWM`` in
    ``/proc/PID/status``) of any task process (a ``--mapper`` or
    ``--reducer`` of some step), sampled every ``--sample-interval`` seconds
    while the task lives; ``task_peaks`` gives it per step and phase.  On
    the inline runner the whole run is one process, so its peak is the
    task peak.  ``max_rss`` is exact (``wait4``): the largest resident set
    of any single process of the run.  ``tree_pss``: the sampled peak of
    the summed proportional set size of the whole process tree.
bytes between map and reduce
    mrjob's inline and local runners sort each step's map output into
    ``<tmp>/step/NNN/reducer/sorted-input`` (``mrjob/sim.py``) and split
    that file among the reducers.  The job runs with ``--cleanup NONE`` and
    ``--local-tmp-dir`` so those files survive; their sizes, summed over all
    steps, are the shuffle bytes.
the stripes estimate
    What stripes would shuffle: Σdf²/2 partial products (over the kept
    features) at 24.5 bytes each (a compact float64 entry after combining),
    computed from the corpus.  It is compared with blocks' measured shuffle
    also where stripes itself is not run.
output
    Lines, neighbour entries, the SHA-256 of the bytes and of the neighbour
    sets; both strategies must give the same output on the same corpus.

The scipy floor, per corpus, in a child process, on the already-parsed
matrix (generation and parsing are not timed): rows ordered by UUID bytes,
cosine-normalised over the whole vector, then the cut features dropped;
``Xn @ Xn.T`` in chunks of rows (about 8 million cells a chunk, so the
product -- 4·10⁸ entries at 20,000 vectors -- is never whole in memory);
each chunk densified, the vector itself excluded, ``numpy.partition`` for
each row's 10th best score, then an exact sort of the candidates: score
descending, ties by smaller UUID bytes, as the job does.  scipy's product
holds no explicit zeros, so an absent pair and a zero dot product are the
same to it; the generator's weights are positive, so no pair sharing a
feature scores 0.  Best of ``--floor-passes`` (3; fewer once the passes
have taken 30 s in all).  Its neighbour sets are hashed like the job's
output, so the floor checks the job as well.

Targets (printed PASS/FAIL; reported, never asserted): on ``dense``, blocks
wall <= 3x the floor, blocks shuffle <= 2% of the stripes estimate, every
task's peak RSS <= 1.5 GB; on ``W1`` and ``W2``, blocks wall <= 0.2x
stripes wall.

A cProfile of one inline run per strategy (blocks on ``W2``, stripes on
``cut-5k``) says where the time goes: ``jobs-profile.txt`` and the JSON.

Run ``python -m bench.jobs`` (budgeted from single runs on the project's
2-core VM at about 20 minutes, more on a busy machine; the total time is
printed at the end) or ``python -m bench.jobs --quick`` (about a minute;
small corpora, mostly on the inline runner).  ``--only`` picks
corpora.  Results go to ``bench/results/jobs.json``, ``jobs.png`` and
``jobs-profile.txt``.  The benchmark reports; it never asserts.
"""
import argparse
import hashlib
import io
import json
import math
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

if __package__ in (None, ""):  # run as ``python bench/jobs.py``
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common  # noqa: E402

JOB_MODULE = "mrjobs.dot_products"
MEASURE = "cosine"
TOP_K = 10
NUM_CORES = 2
STRATEGIES = ("blocks", "stripes")
#: bytes of one partial product on the compact wire (float64, after combining)
BYTES_PER_PARTIAL_PRODUCT = 24.5

#: the issue's targets
TARGET_FLOOR_RATIO = 3.0         # dense: blocks wall / floor wall
TARGET_SHUFFLE_SHARE = 0.02      # dense: blocks shuffle / stripes estimate
TARGET_TASK_MEMORY = 1.5e9       # dense: every task's peak RSS, bytes
TARGET_STRIPES_RATIO = 0.2       # W1, W2: blocks wall / stripes wall


@dataclass(frozen=True)
class Corpus:
    """A generated corpus: generator options and the job's df-cut."""

    name: str
    vectors: int
    seed: int
    max_df: int = None
    features_per_vector: float = 50
    vocabulary: int = 100000
    zipf: float = 1.1

    @property
    def family(self):
        return "exact" if self.max_df is None else "df-cut %d" % self.max_df

    def generator_args(self):
        return ["--vectors", str(self.vectors), "--features-per-vector",
                "%g" % self.features_per_vector, "--vocabulary", str(self.vocabulary),
                "--zipf", "%g" % self.zipf, "--seed", str(self.seed)]


FULL_CORPORA = (
    Corpus("exact-1k", 1000, 2),
    Corpus("W2", 5000, 2),
    Corpus("dense", 20000, 2),
    Corpus("exact-50k", 50000, 2),
    Corpus("cut-1k", 1000, 1, 1000),
    Corpus("cut-5k", 5000, 1, 1000),
    Corpus("W1", 20000, 1, 1000),
    Corpus("cut-50k", 50000, 1, 1000),
)
QUICK_CORPORA = (
    Corpus("exact-q200", 200, 2, vocabulary=20000),
    Corpus("W2-quick", 400, 2, vocabulary=20000),
    Corpus("dense-quick", 1000, 2, vocabulary=20000),
    Corpus("cut-q300", 300, 1, 100, vocabulary=20000),
    Corpus("W1-quick", 1000, 1, 100, vocabulary=20000),
)
#: the workloads the targets name: dense, W1, W2
WORKLOADS = {"full": {"dense": "dense", "W1": "W1", "W2": "W2"},
             "quick": {"dense": "dense-quick", "W1": "W1-quick", "W2": "W2-quick"}}

#: (corpus, strategy, runner) job runs, in the order they run
FULL_RUNS = (
    ("exact-1k", "blocks", "local"), ("exact-1k", "stripes", "local"),
    ("cut-1k", "blocks", "local"), ("cut-1k", "stripes", "local"),
    ("cut-5k", "blocks", "local"), ("cut-5k", "stripes", "local"),
    ("W2", "blocks", "local"), ("W2", "stripes", "local"),
    ("W1", "blocks", "local"), ("W1", "stripes", "local"),
    ("dense", "blocks", "local"),
    ("cut-50k", "blocks", "local"),
    ("exact-50k", "blocks", "local"),
)
#: runs left out on purpose; the JSON carries the reason and the stripes
#: estimate of the corpus
NOT_RUN = {
    ("dense", "stripes", "local"):
        "not run: stripes cannot finish the dense workload in reasonable time "
        "(its shuffle is the stripes estimate; W2, a quarter of the vectors, already "
        "takes minutes, and the work grows with the square of the vector count)",
    ("exact-50k", "stripes", "local"):
        "not run: as for dense, 6x more pairs",
    ("cut-50k", "stripes", "local"):
        "not run, to keep make bench within 30 minutes on 2 cores: W1 (20,000 vectors, "
        "same family) takes minutes, and cut-50k would take several times longer",
}
#: quick: the local runner costs about a second of process start-up per
#: task, so one run checks its plumbing (and task memory); the rest is inline
QUICK_RUNS = tuple(
    [(c, s, "inline") for c in ("exact-q200", "W2-quick", "dense-quick", "cut-q300",
                                "W1-quick") for s in STRATEGIES]
    + [("dense-quick", "blocks", "local")]
)
#: (strategy, corpus) profiled on the inline runner
PROFILES = {"full": (("blocks", "W2"), ("stripes", "cut-5k")),
            "quick": (("blocks", "W2-quick"), ("stripes", "W1-quick"))}
#: the floor's passes stop once they have taken this many seconds (wall) in
#: all: the best of 3 on small corpora, of 1 or 2 on the largest
FLOOR_SECONDS = 30.0
#: cells of one dense chunk of the floor's product (8 bytes each)
FLOOR_CHUNK_CELLS = 8_000_000


# -- corpora and the scipy floor ------------------------------------------------------

def make_corpus(corpus, workdir):
    """Write the corpus (JSON lines) into ``workdir``; return its path."""
    from examples.generate import write_corpus

    path = Path(workdir) / ("%s.jsonl" % corpus.name)
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        write_corpus(str(tmp), vectors=corpus.vectors,
                     features_per_vector=corpus.features_per_vector,
                     vocabulary=corpus.vocabulary, zipf=corpus.zipf, seed=corpus.seed,
                     fmt="json", edge_cases=False, progress=False)
        tmp.replace(path)
    return path


def floor_top_k(Xn, XT, k, measure):
    """Each row's ``k`` best neighbours in ``Xn @ XT``, the row itself excluded.

    Rows of ``Xn`` are in UUID order, so a smaller column index is a smaller
    UUID.  The product is made in chunks of rows, each densified (a cell
    scipy's product does not hold becomes ``-inf``) and cut with
    ``numpy.partition`` to the scores tied with the k-th best or better,
    which are then sorted exactly (score descending, ties by column) and cut
    to ``k`` a row.  (Densifying wins even on the df-cut family, where a
    fifth of the cells hold a score: a three-key ``numpy.lexsort`` of all
    the entries is several times slower than ``partition`` on the cells.)

    Returns
    -------
    (rows, cols, scores, products)
        Grouped by row, best first; ``products`` counts the pairs (with the
        diagonal) that scipy's product holds.
    """
    import numpy as np

    n = Xn.shape[0]
    step = max(1, FLOOR_CHUNK_CELLS // max(n, 1))
    out_r, out_c, out_s = [], [], []
    products = 0
    lowest = np.finfo(np.float64).min
    for s in range(0, n, step):
        e = min(n, s + step)
        P = Xn[s:e] @ XT
        products += P.nnz
        d = P.toarray()
        del P
        d[d == 0] = -np.inf
        if measure == "cosine":  # the job clamps cosines to [-1, 1]
            np.clip(d, -1.0, 1.0, out=d)
        d[np.arange(e - s), np.arange(s, e)] = -np.inf
        if n > k:
            # the k-th best is the k-th smallest of -d: numpy's introselect is
            # several times faster from that side when most cells are -inf
            kth = -np.partition(-d, k - 1, axis=1)[:, k - 1]
            kth[kth == -np.inf] = lowest
            r, c = np.nonzero(d >= kth[:, None])
        else:
            r, c = np.nonzero(d > -np.inf)
        sc = d[r, c]
        del d
        order = np.lexsort((c, -sc, r))
        r, c, sc = r[order], c[order], sc[order]
        keep = np.arange(r.shape[0]) - np.searchsorted(r, r) < k
        out_r.append(r[keep] + s)
        out_c.append(c[keep])
        out_s.append(sc[keep])
    return np.concatenate(out_r), np.concatenate(out_c), np.concatenate(out_s), products


def _uuid_text(raw16):
    h = raw16.ljust(16, b"\0").hex()  # numpy's S16 drops trailing NULs
    return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])


def neighbours_digest(keys, rows, cols, scores):
    """``neighbours_sha256``, ``output_lines``, ``output_pairs``, ``score_sum``
    of grouped top-k lists, computed as :func:`read_output` does."""
    import numpy as np

    names = [_uuid_text(b) for b in keys]
    digests = []
    if rows.shape[0]:
        bounds = np.flatnonzero(np.diff(rows)) + 1
        starts = np.concatenate(([0], bounds)).tolist()
        ends = np.concatenate((bounds, [rows.shape[0]])).tolist()
        cl = cols.tolist()
        for s, e in zip(starts, ends):
            key = ('"%s"' % names[int(rows[s])]).encode()
            digests.append(hashlib.sha256(
                key + b"\t" + ",".join(sorted(names[c] for c in cl[s:e])).encode()).digest())
    return {
        "output_lines": len(digests),
        "output_pairs": int(rows.shape[0]),
        "neighbours_sha256": hashlib.sha256(b"".join(sorted(digests))).hexdigest(),
        "score_sum": float(scores.sum()),
    }


def floor_child(spec):
    """Body of the floor child process: stats of the corpus and the floor's
    timings.  ``spec`` holds the corpus fields, ``passes``, ``top_k`` and
    ``measure``; prints one JSON object."""
    import numpy as np
    import scipy.sparse as sp

    from examples.generate import generate_arrays

    passes, k, measure = spec.pop("passes"), spec.pop("top_k"), spec.pop("measure")
    corpus = Corpus(**spec)
    a = generate_arrays(corpus.vectors, corpus.features_per_vector, corpus.vocabulary,
                        corpus.zipf, corpus.seed)
    n, v = corpus.vectors, corpus.vocabulary
    keys = np.ascontiguousarray(a["doc_ids"]).view("S16").ravel()
    perm = np.argsort(keys, kind="stable")  # row order = UUID order
    X = sp.csr_matrix((a["weights"], a["indices"], a["indptr"]), shape=(n, v))[perm]
    df = np.bincount(X.indices, minlength=v)
    keep = df > 0 if corpus.max_df is None else (df > 0) & (df <= corpus.max_df)
    if measure == "cosine":  # normalised over the whole vector, before the cut
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        X = sp.csr_matrix(sp.diags(1.0 / norms) @ X)
    elif measure != "dot":
        raise ValueError("the floor knows the measures dot and cosine, not %r" % measure)
    Xn = X[:, np.flatnonzero(keep)].tocsr()
    Xn.sort_indices()
    kept = df[keep].astype(np.int64)
    walls, cpus, result = [], [], None
    while len(walls) < passes and (not walls or sum(walls) < FLOOR_SECONDS):
        result = None
        c0, t0 = time.process_time(), time.perf_counter()
        XT = Xn.T.tocsr()
        result = floor_top_k(Xn, XT, k, measure)
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        del XT
    rows, cols, scores, products = result
    # the diagonal: every vector with a kept feature meets itself
    nonempty = int((np.diff(Xn.indptr) > 0).sum())
    out = {
        "vectors": n,
        "nnz": int(a["indices"].shape[0]),
        "kept_nnz": int(Xn.nnz),
        "features_used": int((df > 0).sum()),
        "features_kept": int(keep.sum()),
        "features_dropped": int(((df > 0) & ~keep).sum()),
        "max_df": int(df.max()),
        "sum_df2": int((kept * kept).sum()),
        "partial_products": int((kept * (kept - 1) // 2).sum()),
        "pairs": int((products - nonempty) // 2),
        "stripes_estimate_bytes": float((kept * kept).sum()) / 2 * BYTES_PER_PARTIAL_PRODUCT,
        "floor_wall_s": min(walls),
        "floor_cpu_s": min(cpus),
        "floor_wall_s_all": walls,
        "floor_cpu_s_all": cpus,
        "floor_passes": len(walls),
        "floor_chunk_rows": max(1, FLOOR_CHUNK_CELLS // max(n, 1)),
        **{"floor_" + key: val for key, val in
           neighbours_digest(keys[perm], rows, cols, scores).items()},
    }
    print(json.dumps(out))


# -- measuring a child process ----------------------------------------------------------

def _children_map():
    kids = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry.name, "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # the command name may hold spaces; fields resume after the last ')'
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(entry.name))
    return kids


def task_label(argv):
    """``"step N mapper|reducer|combiner"`` for a task process's argv (a
    list of str), None for any other process (the runner, ``sort``, the
    shell wrapper)."""
    if not argv or os.path.basename(argv[0]) in ("sh", "bash", "dash"):
        return None
    step = phase = None
    for a in argv:
        if a.startswith("--step-num="):
            step = int(a.split("=", 1)[1]) + 1
        elif a in ("--mapper", "--reducer", "--combiner"):
            phase = a[2:]
    if step is None or phase is None:
        return None
    return "step %d %s" % (step, phase)


def _proc_argv(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return None


def _proc_hwm(pid):
    try:
        with open("/proc/%d/status" % pid, "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def tree_memory(root, peaks=None, labels=None):
    """``(rss, pss)`` bytes summed over ``root`` and its descendants, now.

    With ``peaks`` (a dict), also records each process's peak RSS so far
    (``VmHWM``) under its pid, and its argv in ``labels``."""
    kids = _children_map()
    todo, rss, pss = [root], 0, 0
    while todo:
        pid = todo.pop()
        todo.extend(kids.get(pid, ()))
        try:
            with open("/proc/%d/smaps_rollup" % pid, "rb") as f:
                for line in f:
                    if line.startswith(b"Rss:"):
                        rss += int(line.split()[1]) * 1024
                    elif line.startswith(b"Pss:"):
                        pss += int(line.split()[1]) * 1024
        except OSError:  # gone, or no smaps_rollup (kernel < 4.14)
            continue
        if peaks is not None:
            hwm = _proc_hwm(pid)
            if hwm is not None:
                peaks[pid] = max(peaks.get(pid, 0), hwm)
                if pid not in labels:
                    labels[pid] = _proc_argv(pid)
    return rss, pss


def run_measured(cmd, stdout_path, sample_interval, cwd=None, env=None):
    """Run ``cmd``; wall, CPU (with descendants), memory and timestamped stderr.

    Returns
    -------
    dict
        ``returncode``, ``wall_s``, ``user_s``, ``sys_s``, ``cpu_s``,
        ``max_rss_bytes`` (largest single process, from ``wait4``),
        ``tree_rss_peak_bytes``, ``tree_pss_peak_bytes`` (sampled),
        ``process_peaks`` (``[(argv, VmHWM bytes)]`` per process seen),
        ``samples``, ``stderr`` (list of ``(seconds, line)``).
    """
    lines = []
    peaks, labels = {}, {}
    with open(stdout_path, "wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, cwd=cwd, env=env)

        def drain():
            for raw in proc.stderr:
                lines.append((time.perf_counter() - t0, raw.decode("utf-8", "replace").rstrip()))

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        peak_rss = peak_pss = samples = 0
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                wall = time.perf_counter() - t0
                break
            rss, pss = tree_memory(proc.pid, peaks, labels)
            peak_rss, peak_pss = max(peak_rss, rss), max(peak_pss, pss)
            samples += 1
            time.sleep(sample_interval)
        proc.returncode = os.waitstatus_to_exitcode(status)
        reader.join(timeout=30)
    return {
        "returncode": proc.returncode,
        "wall_s": wall,
        "user_s": ru.ru_utime,
        "sys_s": ru.ru_stime,
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "max_rss_bytes": ru.ru_maxrss * 1024,
        "tree_rss_peak_bytes": peak_rss,
        "tree_pss_peak_bytes": peak_pss,
        "process_peaks": [(labels.get(p), b) for p, b in peaks.items()],
        "samples": samples,
        "stderr": lines,
    }


def process_name(argv):
    """A short name of a sampled process: its task label, else the program
    (``sort``, ``python -m mrjobs.dot_products``, ...)."""
    label = task_label(argv)
    if label is not None:
        return label
    if not argv:
        return "?"
    name = os.path.basename(argv[0])
    if name.startswith("python") and len(argv) > 2 and argv[1] == "-m":
        return "%s -m %s" % (name, argv[2])
    return name


def task_peaks(process_peaks):
    """Largest sampled peak RSS per task kind: ``{"step N reducer": bytes}``,
    in step order, and the number of task processes seen."""
    by, n = {}, 0
    for argv, b in process_peaks:
        label = task_label(argv)
        if label is None:
            continue
        n += 1
        by[label] = max(by.get(label, 0), b)
    order = sorted(by, key=lambda s: (int(s.split()[1]), s))
    return {k: by[k] for k in order}, n


def parse_counters(stderr_lines):
    """mrjob's logged counters: a list (one dict per step) of {group: {name: n}}."""
    steps, group = [], None
    for _, line in stderr_lines:
        if line.startswith("Running step "):
            steps.append({})
            group = None
        elif line.startswith("\t\t") and "=" in line and steps and group is not None:
            name, _, value = line.strip().rpartition("=")
            try:
                steps[-1][group][name] = int(value)
            except ValueError:
                pass
        elif line.startswith("\t") and not line.startswith("\t\t") and steps:
            group = line.strip()
            steps[-1].setdefault(group, {})
    return steps


def step_times(stderr_lines, wall):
    """Wall seconds of each step, from the times of mrjob's 'Running step' lines."""
    starts = [t for t, line in stderr_lines if line.startswith("Running step ")]
    ends = starts[1:] + [wall]
    return [e - s for s, e in zip(starts, ends)]


def shuffle_bytes(tmp_root):
    """Sizes of ``step/NNN/reducer/sorted-input`` under the runner's tmp dir, by step."""
    sizes = {}
    for path in Path(tmp_root).glob("*/step/*/reducer/sorted-input"):
        sizes[int(path.parent.parent.name)] = path.stat().st_size
    return [sizes[k] for k in sorted(sizes)]


def read_output(path):
    """Facts of the job's JSON output, to compare runs.

    Returns
    -------
    dict
        ``output_lines``, ``output_pairs`` (neighbour entries), ``output_bytes``,
        ``output_sha256`` (the bytes), ``lines_sha256`` (the set of lines: the
        order of lines depends on the number of reducers), ``neighbours_sha256``
        (each line's key and its set of neighbours, order-free: scores that
        differ in the last bit do not change it) and ``score_sum``.
    """
    h = hashlib.sha256()
    line_digests, whole_lines = [], []
    lines = pairs = 0
    total = 0.0
    with open(path, "rb") as f:
        for line in f:
            h.update(line)
            whole_lines.append(hashlib.sha256(line.rstrip(b"\r\n")).digest())
            key, tab, value = line.partition(b"\t")
            if tab:
                row = json.loads(value)
                lines += 1
                pairs += len(row)
                total += sum(row.values())
                line_digests.append(hashlib.sha256(
                    key + b"\t" + ",".join(sorted(row)).encode()).digest())
    return {
        "output_lines": lines,
        "output_pairs": pairs,
        "output_bytes": Path(path).stat().st_size,
        "output_sha256": h.hexdigest(),
        "lines_sha256": hashlib.sha256(b"".join(sorted(whole_lines))).hexdigest(),
        "neighbours_sha256": hashlib.sha256(b"".join(sorted(line_digests))).hexdigest(),
        "score_sum": total,
    }


def job_command(corpus_path, corpus, strategy, runner, tmp_dir, python=None):
    """The job's command line."""
    cmd = [python or sys.executable, "-m", JOB_MODULE, str(corpus_path),
           "--strategy", strategy, "--measure", MEASURE, "--top-k", str(TOP_K),
           "-r", runner, "--num-cores", str(NUM_CORES),
           "--local-tmp-dir", str(tmp_dir), "--cleanup", "NONE"]
    if corpus.max_df is not None:
        cmd += ["--max-df", str(corpus.max_df)]
    return cmd


def blocks_of(block_pairs):
    """The block count B from the number of block pairs B(B+1)/2."""
    if not block_pairs:
        return None
    return int(round((math.sqrt(8 * block_pairs + 1) - 1) / 2))


def run_job(corpus, corpus_path, strategy, runner, args, workdir, log):
    tag = "%s-%s-%s" % (corpus.name, strategy, runner)
    tmp_dir = Path(workdir) / ("tmp-" + tag)
    out_path = Path(workdir) / ("out-" + tag + ".txt")
    shutil.rmtree(tmp_dir, ignore_errors=True)
    tmp_dir.mkdir(parents=True)
    cmd = job_command(corpus_path, corpus, strategy, runner, tmp_dir)
    m = run_measured(cmd, out_path, args.sample_interval, cwd=common.REPO_ROOT)
    if m["returncode"] != 0:
        tail = "\n".join(line for _, line in m["stderr"][-30:])
        raise RuntimeError("%s failed (exit %d):\n%s" % (" ".join(cmd), m["returncode"], tail))
    by_step = shuffle_bytes(tmp_dir)
    shutil.rmtree(tmp_dir, ignore_errors=True)
    output = read_output(out_path)
    if not args.keep:
        out_path.unlink()
    counters = parse_counters(m["stderr"])
    work = {}
    for step in counters:
        for name, n in step.get("mrsparse work", {}).items():
            work[name] = work.get(name, 0) + n
    peaks, n_tasks = task_peaks(m["process_peaks"])
    biggest = max(m["process_peaks"], key=lambda p: p[1], default=(None, 0))
    if runner == "inline":  # one process runs every task
        task_peak = m["max_rss_bytes"]
    else:
        task_peak = max(peaks.values()) if peaks else None
    row = {
        "corpus": corpus.name,
        "family": corpus.family,
        "vectors": corpus.vectors,
        "strategy": strategy,
        "runner": runner,
        "command": " ".join(["python"] + cmd[1:]),
        "blocks": blocks_of(work.get("block pairs")) if strategy == "blocks" else None,
        "steps": len(counters),
        "wall_s": m["wall_s"],
        "cpu_s": m["cpu_s"],
        "user_s": m["user_s"],
        "sys_s": m["sys_s"],
        "step_wall_s": step_times(m["stderr"], m["wall_s"]),
        "max_rss_bytes": m["max_rss_bytes"],
        "task_peak_rss_bytes": task_peak,
        "task_peaks": peaks,
        "task_processes_seen": n_tasks,
        "largest_process": {"name": process_name(biggest[0]), "peak_rss_bytes": biggest[1]},
        "tree_rss_peak_bytes": m["tree_rss_peak_bytes"],
        "tree_pss_peak_bytes": m["tree_pss_peak_bytes"],
        "memory_samples": m["samples"],
        "shuffle_bytes": sum(by_step),
        "shuffle_bytes_by_step": by_step,
        **output,
        "work": work,
        "counters": counters,
    }
    log("%-11s %-7s %-6s wall %7.1fs  cpu %7.1fs  shuffle %8.1f MB  task peak %6.0f MB"
        % (corpus.name, strategy, runner, row["wall_s"], row["cpu_s"],
           row["shuffle_bytes"] / 1e6, (task_peak or 0) / 1e6))
    return row


def run_floor(corpus, args, workdir, log):
    spec = dict(asdict(corpus), passes=args.floor_passes, top_k=TOP_K, measure=MEASURE)
    cmd = [sys.executable, "-m", "bench.jobs", "--floor-child", json.dumps(spec)]
    out_path = Path(workdir) / ("floor-%s.json" % corpus.name)
    m = run_measured(cmd, out_path, args.sample_interval, cwd=common.REPO_ROOT)
    if m["returncode"] != 0:
        raise RuntimeError("floor child failed:\n%s"
                           % "\n".join(line for _, line in m["stderr"][-30:]))
    stats = json.loads(out_path.read_text())
    out_path.unlink()
    stats["floor_max_rss_bytes"] = m["max_rss_bytes"]
    stats["floor_process_wall_s"] = m["wall_s"]
    log("%-11s floor %.2fs wall, %.2fs CPU (best of %d)  pairs %d  sum df^2 %.3g"
        % (corpus.name, stats["floor_wall_s"], stats["floor_cpu_s"], stats["floor_passes"],
           stats["pairs"], stats["sum_df2"]))
    return stats


# -- the profile -------------------------------------------------------------------

#: (label, function): a function is ``module:qualname`` (matched by its code
#: object's file, first line and name), ``file:<path suffix>:<name>`` (for
#: closures) or a builtin's pstats name in ``<...>``.  A strategy's parts are
#: absent from the other strategy's profile.
PROFILE_PARTS = (
    ("mrjob sim: sort of map output (in memory)", "mrjob.sim:_sort_lines_in_memory"),
    ("mrjob sim: split reducer input", "mrjob.sim:SimMRJobRunner._split_reducer_input"),
    ("mrjob sim: split mapper input", "mrjob.sim:SimMRJobRunner._split_mapper_input"),
    ("mrjob: read lines + protocol read", "file:mrjob/job.py:read_lines"),
    ("mrjob: protocol write + write lines", "file:mrjob/job.py:write_line"),
    ("wire: decode_record", "mrcodecs.jobwire:decode_record"),
    ("wire: JobProtocol.write", "mrcodecs.jobwire:JobProtocol.write"),
    ("vectors mapper: parse, check input lines",
     "mrjobs.dot_products:MRSparseDotProducts.mapper_vectors"),
    ("vectors reducer: merge lines, prepare weights",
     "mrjobs.dot_products:MRSparseDotProducts.reducer_vectors"),
    ("  prepare batches, hand to the strategy",
     "mrjobs.dot_products:MRSparseDotProducts._prepare_batch"),
    ("blocks: df step (--max-df)", "mrjobs.blocks:BlocksStrategy.reducer_df"),
    ("blocks: regroup step (--max-df)", "mrjobs.blocks:BlocksStrategy.reducer_regroup"),
    ("blocks: block-pair reducer", "mrjobs.blocks:BlocksStrategy.reducer_pairs"),
    ("  scipy sparse products (all callers)",
     "scipy.sparse._compressed:_cs_matrix._matmul_sparse"),
    ("  _dense_best (top-k of dense chunks)", "mrjobs.blocks:_dense_best"),
    ("  _best (top-k of sparse chunks)", "mrjobs.blocks:_best"),
    ("stripes: posting lists -> stripes", "mrjobs.stripes:StripesStrategy.reducer_stripes"),
    ("stripes: sum stripes, score", "mrjobs.stripes:StripesStrategy.reducer_sum"),
    ("kernels.sort_sum (all callers)", "mrjobs.kernels:sort_sum"),
    ("kernels.top_k_groups (all callers)", "mrjobs.kernels:top_k_groups"),
    ("rows reducer: join partial rows, top-k",
     "mrjobs.dot_products:MRSparseDotProducts.reducer_rows"),
    ("output: NeighboursJSONProtocol.write", "mrjobs.wire:NeighboursJSONProtocol.write"),
)


def _resolve(spec):
    """pstats key parts ``(file, line, name)`` of a PROFILE_PARTS function."""
    import importlib

    if spec.startswith("<"):
        return ("~", 0, spec)
    if spec.startswith("file:"):
        _, suffix, name = spec.split(":")
        return ("~file", suffix, name)
    module, _, qualname = spec.partition(":")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    code = getattr(obj, "__code__", None)
    if code is None:
        return None
    return (os.path.realpath(code.co_filename), code.co_firstlineno, code.co_name)


def _profile_part(stats, spec):
    """``(self_s, cum_s)`` of one PROFILE_PARTS function in ``stats`` (None, None
    if it cannot be resolved or never ran)."""
    try:
        key = _resolve(spec)
    except (ImportError, AttributeError):
        key = None
    if key is None:
        return None, None
    tt = ct = 0.0
    hit_any = False
    for (filename, line, name), (_, _, t, c, _) in stats.stats.items():
        if key[0] == "~":
            hit = name == key[2]
        elif key[0] == "~file":
            hit = name == key[2] and filename.replace("\\", "/").endswith(key[1])
        else:
            hit = (name == key[2] and line == key[1]
                   and os.path.realpath(filename) == key[0])
        if hit:
            hit_any = True
            tt += t
            ct += c
    return (tt, ct) if hit_any else (None, None)


def profile_run(corpus, corpus_path, strategy, args, workdir, log):
    """cProfile of one inline run of ``strategy``; the summary dict."""
    tmp_dir = Path(workdir) / "tmp-profile"
    shutil.rmtree(tmp_dir, ignore_errors=True)
    tmp_dir.mkdir(parents=True)
    prof = Path(workdir) / ("jobs-%s.prof" % strategy)
    cmd = job_command(corpus_path, corpus, strategy, "inline", tmp_dir)
    cmd = [cmd[0], "-m", "cProfile", "-o", str(prof)] + cmd[1:]
    t0 = time.perf_counter()
    out_path = Path(workdir) / "out-profile.txt"
    with open(out_path, "wb") as out:
        proc = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE, cwd=common.REPO_ROOT)
    wall = time.perf_counter() - t0
    shutil.rmtree(tmp_dir, ignore_errors=True)
    out_path.unlink()
    if proc.returncode != 0:
        raise RuntimeError("profiled run failed:\n%s" % proc.stderr.decode()[-3000:])
    stats = pstats.Stats(str(prof))
    total = stats.total_tt
    parts = []
    for label, spec in PROFILE_PARTS:
        tt, ct = _profile_part(stats, spec)
        parts.append({"part": label, "function": spec, "cum_s": ct, "self_s": tt,
                      "share": ct / total if total and ct is not None else None})

    def top(key, n=args.profile_top):
        buf = io.StringIO()
        pstats.Stats(str(prof), stream=buf).strip_dirs().sort_stats(key).print_stats(n)
        text = buf.getvalue()
        return text[text.find("   ncalls"):].rstrip()

    summary = {
        "strategy": strategy,
        "corpus": corpus.name,
        "command": " ".join(["python"] + cmd[1:]),
        "profiled_total_s": total,
        "wall_s_under_profiler": wall,
        "parts": parts,
        "top_tottime": top("tottime"),
        "top_cumulative": top("cumulative"),
    }
    if not args.keep:
        prof.unlink()
    log("profile of %s on %s (inline): %.1f s under cProfile" % (strategy, corpus.name, total))
    return summary


def profile_text(profiles, corpora_stats):
    """The profiles as plain text: where the time goes, then the top functions."""
    lines = []
    for p in profiles:
        st = corpora_stats[p["corpus"]]
        lines += [
            "Profile: --strategy %s, inline runner, corpus %s (%s vectors, %s), "
            "--measure %s --top-k %d." % (p["strategy"], p["corpus"],
                                          "{:,}".format(st["vectors"]), st["family"],
                                          MEASURE, TOP_K),
            "Total under cProfile: %.1f s (profiler overhead included); the scipy floor "
            "on the same corpus: %.2f s." % (p["profiled_total_s"], st["floor_wall_s"]),
            "",
            "Where the time goes (cumulative seconds, share of the profiled total):",
        ]
        for part in p["parts"]:
            if part["cum_s"] is None:
                continue
            lines.append("  %-48s %8.2f s  %5.1f%%   (self %.2f s)"
                         % (part["part"], part["cum_s"], 100 * part["share"], part["self_s"]))
        lines.append("")
    for p in profiles:
        lines += ["Top functions by internal time (%s, %s):" % (p["strategy"], p["corpus"]),
                  p["top_tottime"], "",
                  "Top functions by cumulative time (%s, %s):" % (p["strategy"], p["corpus"]),
                  p["top_cumulative"], ""]
    return "\n".join(lines).rstrip() + "\n"


# -- derived numbers, checks -------------------------------------------------------

#: the runner whose runs the chart, the summary and the timing targets use
#: when a corpus has runs on both (quick: compare strategies on the same runner)
PREFERRED_RUNNER = {"full": "local", "quick": "inline"}


def _row(rows, corpus, strategy, runner=None, prefer="local"):
    """The run of ``corpus`` and ``strategy``: on ``runner``, or (None) on
    ``prefer`` if there is one, else on any runner."""
    found = {r["runner"]: r for r in rows
             if (r["corpus"], r["strategy"]) == (corpus, strategy)}
    if runner is not None:
        return found.get(runner)
    return found.get(prefer) or next(iter(found.values()), None)


def add_ratios(rows, corpora_stats):
    """Per run: ratios to the floor, to stripes on the same corpus and runner,
    and to the stripes estimate."""
    for r in rows:
        st = corpora_stats[r["corpus"]]
        stripes = _row(rows, r["corpus"], "stripes", r["runner"])
        r["wall_vs_floor"] = r["wall_s"] / st["floor_wall_s"]
        r["cpu_vs_floor"] = r["cpu_s"] / st["floor_cpu_s"]
        r["wall_vs_stripes"] = r["wall_s"] / stripes["wall_s"] if stripes else None
        r["cpu_vs_stripes"] = r["cpu_s"] / stripes["cpu_s"] if stripes else None
        r["shuffle_vs_estimate"] = (r["shuffle_bytes"] / st["stripes_estimate_bytes"]
                                    if st["stripes_estimate_bytes"] else None)
        r["shuffle_mb"] = r["shuffle_bytes"] / 1e6
        r["task_peak_mb"] = (r["task_peak_rss_bytes"] or 0) / 1e6
        r["max_rss_mb"] = r["max_rss_bytes"] / 1e6
        r["tree_pss_mb"] = r["tree_pss_peak_bytes"] / 1e6


def consistency(rows, corpora_stats):
    """Facts that must hold whatever the speed: the job's counters against the
    corpus, the same neighbours as the floor and as the other strategy."""
    out = []
    for r in rows:
        st = corpora_stats[r["corpus"]]
        w = r["work"]
        ref = _row(rows, r["corpus"], "blocks", "inline") or _row(rows, r["corpus"], "blocks")
        ref = None if ref is r else ref
        if r["strategy"] == "blocks":
            work_ok = w.get("block entries sent") == st["kept_nnz"] * (r["blocks"] or 0)
        else:
            work_ok = w.get("partial products") == st["partial_products"]
        out.append({
            "run": "%s %s %s" % (r["corpus"], r["strategy"], r["runner"]),
            "pairs_scored_match": w.get("pairs scored") == st["pairs"],
            "work_match": work_ok,
            "same_neighbours_as_floor": (
                r["neighbours_sha256"] == st["floor_neighbours_sha256"]
                and r["output_pairs"] == st["floor_output_pairs"]),
            "score_sum_rel_diff_floor": abs(r["score_sum"] - st["floor_score_sum"])
            / max(abs(st["floor_score_sum"]), 1e-300),
            "same_neighbours_as_blocks": (None if ref is None else
                                          r["neighbours_sha256"] == ref["neighbours_sha256"]),
            "same_lines_as_blocks": (None if ref is None
                                     else r["lines_sha256"] == ref["lines_sha256"]),
            "score_sum_rel_diff_blocks": (None if ref is None else
                                          abs(r["score_sum"] - ref["score_sum"])
                                          / max(abs(ref["score_sum"]), 1e-300)),
        })
    return out


def evaluate_checks(rows, corpora_stats, workloads, prefer="local"):
    checks = []
    name = workloads["dense"]
    b = _row(rows, name, "blocks", prefer=prefer)
    # task memory is only seen per task on the local runner
    m = _row(rows, name, "blocks", "local") or b
    if b is not None:
        st = corpora_stats[name]
        checks.append({
            "id": "floor %s" % name,
            "target": "blocks wall <= %gx the scipy floor" % TARGET_FLOOR_RATIO,
            "measured": "%.2fx (%.1f s vs %.1f s); CPU %.2fx (%.1f s vs %.1f s)" % (
                b["wall_vs_floor"], b["wall_s"], st["floor_wall_s"], b["cpu_vs_floor"],
                b["cpu_s"], st["floor_cpu_s"]),
            "pass": b["wall_vs_floor"] <= TARGET_FLOOR_RATIO,
        })
        checks.append({
            "id": "shuffle %s" % name,
            "target": "blocks shuffle <= %g%% of stripes' sum df^2/2 x %g bytes"
                      % (100 * TARGET_SHUFFLE_SHARE, BYTES_PER_PARTIAL_PRODUCT),
            "measured": "%.3f%% (%s vs %s)" % (
                100 * b["shuffle_vs_estimate"], _size_label(b["shuffle_bytes"]),
                _size_label(st["stripes_estimate_bytes"])),
            "pass": b["shuffle_vs_estimate"] <= TARGET_SHUFFLE_SHARE,
        })
        peaks = ", ".join("%s %s" % (k, _size_label(v)) for k, v in m["task_peaks"].items())
        checks.append({
            "id": "memory %s" % name,
            "target": "every task's peak RSS <= %.1f GB" % (TARGET_TASK_MEMORY / 1e9),
            "measured": "largest %s (%s runner%s); whole tree PSS %s" % (
                _size_label(m["task_peak_rss_bytes"] or 0), m["runner"],
                ": " + peaks if peaks else "", _size_label(m["tree_pss_peak_bytes"])),
            "pass": (m["task_peak_rss_bytes"] is not None
                     and m["task_peak_rss_bytes"] <= TARGET_TASK_MEMORY),
        })
    for key in ("W1", "W2"):
        name = workloads[key]
        for runner in dict.fromkeys((prefer, "local", "inline")):
            b, s = _row(rows, name, "blocks", runner), _row(rows, name, "stripes", runner)
            if b is None or s is None:
                continue
            checks.append({
                "id": "stripes %s %s" % (name, runner),
                "target": "blocks wall <= %gx stripes wall" % TARGET_STRIPES_RATIO,
                "measured": "%.3fx (%.1f s vs %.1f s); CPU %.3fx; shuffle %.3fx" % (
                    b["wall_vs_stripes"], b["wall_s"], s["wall_s"], b["cpu_vs_stripes"],
                    b["shuffle_bytes"] / s["shuffle_bytes"]),
                "pass": b["wall_vs_stripes"] <= TARGET_STRIPES_RATIO,
            })
            break
    return checks


def summary_lines(rows, corpora_stats, checks, prefer="local"):
    """A compact summary the README can quote (numbers of this run only)."""
    out = []
    for name, st in corpora_stats.items():
        b = _row(rows, name, "blocks", prefer=prefer)
        s = _row(rows, name, "stripes", prefer=prefer)
        parts = ["%s (%s, %s vectors): floor %.1f s" % (
            name, st["family"], "{:,}".format(st["vectors"]), st["floor_wall_s"])]
        if b:
            parts.append("blocks %.1f s (%.1fx floor, shuffle %s, task peak %s)" % (
                b["wall_s"], b["wall_vs_floor"], _size_label(b["shuffle_bytes"]),
                _size_label(b["task_peak_rss_bytes"] or 0)))
        if s:
            parts.append("stripes %.1f s (shuffle %s)" % (s["wall_s"],
                                                          _size_label(s["shuffle_bytes"])))
        else:
            parts.append("stripes not run (estimate %s)"
                         % _size_label(st["stripes_estimate_bytes"]))
        out.append("; ".join(parts))
    for c in checks:
        out.append("%s: %s -- %s (%s)" % (c["id"], common.pass_fail(c["pass"]), c["measured"],
                                          c["target"]))
    return out


# -- output --------------------------------------------------------------------------

TABLE = [
    ("corpus", "corpus"),
    ("strategy", "strategy"),
    ("runner", "runner"),
    ("blocks", "B", "{:,}"),
    ("wall_s", "wall s", "{:,.1f}"),
    ("cpu_s", "CPU s", "{:,.1f}"),
    ("wall_vs_floor", "wall/floor", "{:,.2f}"),
    ("wall_vs_stripes", "wall/stripes", "{:.3f}"),
    ("shuffle_mb", "shuffle MB", "{:,.1f}"),
    ("shuffle_vs_estimate", "shuffle/est.", "{:.4f}"),
    ("task_peak_mb", "task peak MB", "{:,.0f}"),
    ("tree_pss_mb", "tree PSS MB", "{:,.0f}"),
    ("output_pairs", "out entries", "{:,}"),
]

CORPUS_TABLE = [
    ("name", "corpus"),
    ("family", "family"),
    ("vectors", "vectors", "{:,}"),
    ("kept_nnz", "kept nnz", "{:,}"),
    ("features_dropped", "cut feats", "{:,}"),
    ("pairs", "pairs", "{:,}"),
    ("stripes_estimate_gb", "stripes est. GB", "{:,.2f}"),
    ("floor_wall_s", "floor s", "{:.2f}"),
    ("floor_cpu_s", "floor CPU s", "{:.2f}"),
    ("floor_passes", "passes", "{}"),
    ("floor_max_rss_mb", "floor RSS MB", "{:,.0f}"),
]

COLORS = {"blocks": "#d62728", "stripes": "#1f77b4", "floor": "#2ca02c"}
FAMILY_STYLE = {"exact": ("o", "-"), "df-cut": ("s", "--")}


def _size_label(n):
    return "%.2f GB" % (n / 1e9) if n >= 1e9 else "%.0f MB" % (n / 1e6) if n >= 1e7 else (
        "%.1f MB" % (n / 1e6))


def _style(family):
    return FAMILY_STYLE["exact" if family == "exact" else "df-cut"]


def draw_chart(rows, corpora_stats, not_run, workloads, path_dir, title, prefer="local"):
    """Wall time and shuffle bytes against corpus size (both families, both
    strategies, the floor); the three workloads; task memory."""
    from matplotlib.lines import Line2D

    plt = common.pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(15, 11))
    (ax_wall, ax_bytes), (ax_work, ax_mem) = axes
    families = list(dict.fromkeys(st["family"] for st in corpora_stats.values()))

    def series(fam, value, strategy=None):
        pts = []
        for name, st in corpora_stats.items():
            if st["family"] != fam:
                continue
            if strategy is None:
                y = value(st)
            else:
                r = _row(rows, name, strategy, prefer=prefer)
                if r is None:
                    continue
                y = value(r)
            if y:
                pts.append((st["vectors"], y))
        return sorted(pts)

    def plot(ax, pts, color, fam, **kw):
        if not pts:
            return
        m, ls = _style(fam)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color=color, marker=m, ls=ls, **kw)

    skipped = {}
    for n in not_run:
        if n["strategy"] == "stripes" and n["corpus"] in corpora_stats:
            st = corpora_stats[n["corpus"]]
            skipped.setdefault(st["family"], []).append(st["vectors"])

    for fam in families:
        plot(ax_wall, series(fam, lambda st: st["floor_wall_s"]), COLORS["floor"], fam)
        for s in STRATEGIES:
            plot(ax_wall, series(fam, lambda r: r["wall_s"], s), COLORS[s], fam)
        plot(ax_bytes, series(fam, lambda st: st["stripes_estimate_bytes"] / 1e9),
             COLORS["stripes"], fam, alpha=0.45, lw=1)
        for s in STRATEGIES:
            plot(ax_bytes, series(fam, lambda r: r["shuffle_bytes"] / 1e9, s), COLORS[s], fam)
        plot(ax_mem, series(fam, lambda r: (r["task_peak_rss_bytes"] or 0) / 1e9, "blocks"),
             COLORS["blocks"], fam)
        plot(ax_mem, series(fam, lambda r: (r["task_peak_rss_bytes"] or 0) / 1e9, "stripes"),
             COLORS["stripes"], fam)
    for ax in (ax_wall, ax_bytes):
        for fam, xs in skipped.items():
            ax.plot(xs, [0.04] * len(xs), ls="none", marker="x", ms=9, mew=2,
                    color=COLORS["stripes"], transform=ax.get_xaxis_transform(), clip_on=False)
    for ax in (ax_wall, ax_bytes, ax_mem):
        ax.set_xscale("log")
        ax.grid(True, which="both", alpha=0.25)
        ax.set_xlabel("vectors in the corpus (log)")
    ax_wall.set_yscale("log")
    ax_wall.set_ylabel("wall time, s (log)")
    ax_wall.set_title("wall time against corpus size", fontsize=10)
    ax_bytes.set_yscale("log")
    ax_bytes.set_ylabel("bytes between map and reduce, all steps, GB (log)")
    ax_bytes.set_title("shuffle bytes (faint: stripes' estimate, sum df^2/2 x %g B)"
                       % BYTES_PER_PARTIAL_PRODUCT, fontsize=10)
    ax_mem.axhline(TARGET_TASK_MEMORY / 1e9, color="#777777", lw=1, ls=":")
    ax_mem.set_ylim(0, max(TARGET_TASK_MEMORY / 1e9 * 1.15, ax_mem.get_ylim()[1]))
    ax_mem.set_ylabel("largest peak RSS of one task, GB")
    ax_mem.set_title("task memory (dotted: the %.1f GB target)" % (TARGET_TASK_MEMORY / 1e9),
                     fontsize=10)

    # the three workloads side by side
    names = [workloads[k] for k in ("dense", "W1", "W2") if workloads[k] in corpora_stats]
    width = 0.26
    for i, name in enumerate(names):
        st = corpora_stats[name]
        bars = [("blocks", _row(rows, name, "blocks", prefer=prefer)),
                ("stripes", _row(rows, name, "stripes", prefer=prefer)), ("floor", None)]
        for j, (what, r) in enumerate(bars):
            x = i + (j - 1) * width
            if what == "floor":
                y, text = st["floor_wall_s"], "%.3g s" % st["floor_wall_s"]
            elif r is None:
                ax_work.text(x, 0.03, "not run", rotation=90, ha="center", va="bottom",
                             fontsize=8, color="#555555",
                             transform=ax_work.get_xaxis_transform())
                continue
            else:
                y = r["wall_s"]
                text = "%.3g s" % y
            ax_work.bar(x, y, width, color=COLORS[what])
            ax_work.text(x, y, text, ha="center", va="bottom", fontsize=7)
    ax_work.set_yscale("log")
    lo, hi = ax_work.get_ylim()
    ax_work.set_ylim(lo, hi * 6)  # room for the labels above the bars
    ax_work.set_xticks(range(len(names)))
    labels = []
    for n in names:
        b = _row(rows, n, "blocks", prefer=prefer)
        ratios = "" if b is None else "\nblocks: %.3gx floor%s" % (
            b["wall_vs_floor"], ", %.2fx stripes" % b["wall_vs_stripes"]
            if b["wall_vs_stripes"] else "")
        labels.append("%s\n%s vectors, %s%s" % (
            n, "{:,}".format(corpora_stats[n]["vectors"]), corpora_stats[n]["family"], ratios))
    ax_work.set_xticklabels(labels, fontsize=9)
    ax_work.set_ylabel("wall time, s (log)")
    ax_work.set_title("the workloads (targets: blocks <= %gx floor on %s, <= %gx stripes on "
                      "%s, %s)" % (TARGET_FLOOR_RATIO, workloads["dense"], TARGET_STRIPES_RATIO,
                                   workloads["W1"], workloads["W2"]), fontsize=10)

    handles = [Line2D([], [], color=COLORS["blocks"], lw=6, label="--strategy blocks"),
               Line2D([], [], color=COLORS["stripes"], lw=6, label="--strategy stripes"),
               Line2D([], [], color=COLORS["floor"], lw=6, label="scipy floor (Xn @ Xn.T, top-k)")]
    for fam in families:
        m, ls = _style(fam)
        handles.append(Line2D([], [], color="#444444", marker=m, ls=ls,
                              label="family: %s" % fam))
    if skipped:
        handles.append(Line2D([], [], color=COLORS["stripes"], marker="x", mew=2, ls="none",
                              label="stripes not run (reason in jobs.json)"))
    fig.legend(handles=handles, loc="upper center", ncol=len(handles), fontsize=9,
               bbox_to_anchor=(0.5, 0.972), frameon=False)
    fig.suptitle(title, fontsize=12, y=0.995)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return common.save_figure(fig, "jobs", path_dir)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        prog="python -m bench.jobs",
        description="MRSparseDotProducts --strategy blocks vs stripes (local runner) and a "
                    "scipy floor, over two corpus families and sizes.")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run on small corpora (under a minute)")
    ap.add_argument("--out", type=Path, default=common.RESULTS_DIR,
                    help="directory for jobs.json, jobs.png, jobs-profile.txt "
                         "(default bench/results)")
    ap.add_argument("--workdir", type=Path, default=None,
                    help="where corpora, outputs and mrjob tmp dirs go (default: a new "
                         "temporary directory, removed at the end)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the workdir (corpora, job outputs, the .prof files)")
    ap.add_argument("--only", type=lambda s: tuple(s.split(",")), default=None,
                    help="comma-separated corpora to run (default: all of the plan)")
    ap.add_argument("--floor-passes", type=int, default=3,
                    help="floor timings per corpus, best kept (default 3; fewer once "
                         "they have taken %g s)" % FLOOR_SECONDS)
    ap.add_argument("--sample-interval", type=float, default=0.2,
                    help="seconds between /proc memory samples (default 0.2)")
    ap.add_argument("--profile-top", type=int, default=25,
                    help="functions listed per profile table (default 25)")
    ap.add_argument("--no-profile", action="store_true", help="skip the cProfile runs")
    ap.add_argument("--no-chart", action="store_true", help="skip jobs.png")
    ap.add_argument("--floor-child", metavar="SPEC", help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.floor_child:
        floor_child(json.loads(args.floor_child))
        return 0
    mode = "quick" if args.quick else "full"
    corpora = {c.name: c for c in (QUICK_CORPORA if args.quick else FULL_CORPORA)}
    runs = QUICK_RUNS if args.quick else FULL_RUNS
    if args.only:
        unknown = set(args.only) - set(corpora)
        if unknown:
            sys.exit("unknown corpora %s; choose from %s" % (sorted(unknown), sorted(corpora)))
        corpora = {k: v for k, v in corpora.items() if k in args.only}
        runs = tuple(r for r in runs if r[0] in corpora)
    workloads = WORKLOADS[mode]
    started = time.perf_counter()

    def log(msg):
        print("[%6.1fs] %s" % (time.perf_counter() - started, msg), flush=True)

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="mrsparse-bench-jobs-"))
    workdir.mkdir(parents=True, exist_ok=True)
    log("workdir %s; %d corpora, %d job runs, --measure %s --top-k %d --num-cores %d"
        % (workdir, len(corpora), len(runs), MEASURE, TOP_K, NUM_CORES))
    rows, profiles = [], []
    try:
        corpora_stats, paths = {}, {}
        for name, c in corpora.items():
            t0 = time.perf_counter()
            paths[name] = make_corpus(c, workdir)
            gen = time.perf_counter() - t0
            st = run_floor(c, args, workdir, log)
            st.update(name=name, family=c.family, generator=asdict(c),
                      input_bytes=paths[name].stat().st_size, generate_s=gen,
                      floor_max_rss_mb=st["floor_max_rss_bytes"] / 1e6,
                      stripes_estimate_gb=st["stripes_estimate_bytes"] / 1e9)
            corpora_stats[name] = st
        for name, strategy, runner in runs:
            rows.append(run_job(corpora[name], paths[name], strategy, runner, args, workdir,
                                log))
        add_ratios(rows, corpora_stats)
        if not args.no_profile:
            for strategy, name in PROFILES[mode]:
                if name in corpora:
                    profiles.append(profile_run(corpora[name], paths[name], strategy, args,
                                                workdir, log))
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)

    prefer = PREFERRED_RUNNER[mode]
    checks = evaluate_checks(rows, corpora_stats, workloads, prefer)
    consist = consistency(rows, corpora_stats)
    not_run = [] if args.quick else [
        {"corpus": c, "strategy": s, "runner": r, "reason": why,
         "stripes_estimate_bytes": corpora_stats[c]["stripes_estimate_bytes"]}
        for (c, s, r), why in NOT_RUN.items() if c in corpora]
    summary = summary_lines(rows, corpora_stats, checks, prefer)
    text = profile_text(profiles, corpora_stats) if profiles else None

    common.print_table(list(corpora_stats.values()), CORPUS_TABLE,
                       title="Corpora (examples.generate) and the scipy floor "
                             "(--measure %s --top-k %d)" % (MEASURE, TOP_K))
    common.print_table(rows, TABLE, title="MRSparseDotProducts --measure %s --top-k %d "
                       "--num-cores %d (one run each; memory sampled every %.1f s)"
                       % (MEASURE, TOP_K, NUM_CORES, args.sample_interval))
    n_steps = max([len(r["step_wall_s"]) for r in rows] + [0])
    step_rows = [{"run": "%s %s %s" % (r["corpus"], r["strategy"], r["runner"]),
                  **{"s%d_s" % (i + 1): t for i, t in enumerate(r["step_wall_s"])},
                  **{"s%d_mb" % (i + 1): b / 1e6
                     for i, b in enumerate(r["shuffle_bytes_by_step"])}} for r in rows]
    common.print_table(step_rows, [("run", "run")] + [
        ("s%d_s" % i, "step %d s" % i, "{:,.1f}") for i in range(1, n_steps + 1)] + [
        ("s%d_mb" % i, "step %d MB in" % i, "{:,.1f}") for i in range(1, n_steps + 1)],
        title="Per step: wall seconds and bytes into the reducers")
    task_rows = [{"run": "%s %s %s" % (r["corpus"], r["strategy"], r["runner"]),
                  "tasks": r["task_processes_seen"],
                  "peaks": ", ".join("%s %.0f" % (k, v / 1e6) for k, v in r["task_peaks"].items())
                  or "(one process: %.0f)" % (r["max_rss_bytes"] / 1e6),
                  "max_rss": r["max_rss_bytes"] / 1e6,
                  "largest": "%s %.0f" % (r["largest_process"]["name"],
                                          r["largest_process"]["peak_rss_bytes"] / 1e6)}
                 for r in rows]
    common.print_table(task_rows, [("run", "run"), ("tasks", "task procs"),
                                   ("max_rss", "max RSS MB", "{:,.0f}"),
                                   ("largest", "largest process, MB"),
                                   ("peaks", "peak RSS MB per task kind")],
                       title="Task memory (VmHWM sampled; max RSS exact, any process)")
    for n in not_run:
        print("\nNOT RUN: %s %s %s -- %s (stripes estimate %s)" % (
            n["corpus"], n["strategy"], n["runner"], n["reason"],
            _size_label(n["stripes_estimate_bytes"])))
    common.print_table(consist, [("run", "run"), ("pairs_scored_match", "pairs=floor"),
                                 ("work_match", "work=corpus"),
                                 ("same_neighbours_as_floor", "neighbours=floor"),
                                 ("score_sum_rel_diff_floor", "score sum rel. diff", "{:.1e}"),
                                 ("same_neighbours_as_blocks", "neighbours=blocks"),
                                 ("same_lines_as_blocks", "lines=blocks"),
                                 ("score_sum_rel_diff_blocks", "vs blocks", "{:.1e}")],
                       title="Consistency (PASS = equal; blocks = the blocks run on the same "
                             "corpus, inline if any; lines = the set of output lines, "
                             "scores to the last bit)")
    common.print_table(checks, [("id", "check"), ("pass", "result"), ("target", "target"),
                                ("measured", "measured")], title="Targets")
    print("\nSummary:")
    for line in summary:
        print("  " + line)

    elapsed = time.perf_counter() - started
    data = {
        "settings": {
            "quick": args.quick,
            "measure": MEASURE,
            "top_k": TOP_K,
            "num_cores": NUM_CORES,
            "floor_passes": args.floor_passes,
            "sample_interval_s": args.sample_interval,
            "job": JOB_MODULE,
            "runs": [list(r) for r in runs],
            "workloads": workloads,
            "targets": {"floor_ratio": TARGET_FLOOR_RATIO,
                        "shuffle_share_of_stripes_estimate": TARGET_SHUFFLE_SHARE,
                        "task_memory_bytes": TARGET_TASK_MEMORY,
                        "stripes_ratio": TARGET_STRIPES_RATIO},
            "method": {
                "wall": "wall time of the job's child process (python -m mrjobs.dot_products"
                        " ... > output), one run per variant",
                "cpu": "user + system time of the child and its waited-for descendants "
                       "(os.wait4), i.e. all task processes and sort",
                "task_peak_rss": "largest VmHWM of a task process (--mapper/--reducer), "
                                 "sampled from /proc; inline runner: max_rss",
                "max_rss": "largest resident set of a single process of the run (wait4)",
                "tree_pss": "peak over /proc samples of the summed PSS of the process tree",
                "shuffle": "sum over steps of the size of mrjob's "
                           "step/NNN/reducer/sorted-input, kept with --cleanup NONE",
                "stripes_estimate": "sum over kept features of df^2, / 2, x %g bytes"
                                    % BYTES_PER_PARTIAL_PRODUCT,
                "floor": "cosine Xn @ Xn.T in row chunks of ~%d cells, densified, "
                         "numpy.partition for the k-th score, exact sort of the candidates "
                         "(score desc., ties by smaller UUID bytes); parsed matrix, child "
                         "process, best of floor_passes" % FLOOR_CHUNK_CELLS,
            },
        },
        "corpora": corpora_stats,
        "results": rows,
        "not_run": not_run,
        "consistency": consist,
        "checks": checks,
        "summary": summary,
        "profiles": profiles,
        "elapsed_s": elapsed,
    }
    path = common.write_results("jobs", data, args.out)
    print("\nwrote %s" % path)
    if text:
        ppath = Path(args.out) / "jobs-profile.txt"
        ppath.write_text(text, encoding="utf-8")
        print("wrote %s" % ppath)
    if not args.no_chart and rows:
        title = ("MRSparseDotProducts --strategy blocks vs stripes vs a scipy floor "
                 "(--measure %s --top-k %d, %s runner, --num-cores %d; %s%s)" % (
                     MEASURE, TOP_K, prefer, NUM_CORES,
                     time.strftime("%Y-%m-%d"), ", quick" if args.quick else ""))
        print("wrote %s" % draw_chart(rows, corpora_stats, not_run, workloads, args.out,
                                      title, prefer))
    print("total %.1f s (%.1f min)" % (time.perf_counter() - started,
                                       (time.perf_counter() - started) / 60))
    return 0


if __name__ == "__main__":
    sys.exit(main())
