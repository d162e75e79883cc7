"""The peers end to end: each peer's script (:mod:`bench.peer_scripts`: parse
the job's JSON input, build and normalise the CSR matrix, the peer's top-k
product on 2 threads, write the job's output lines) in a child process,
measured as :mod:`bench.measure` measures a job run (wall; CPU of the
process, every thread), best of ``passes`` (:func:`run_peer`); its lines
compared with the job's output (the same neighbours, scores within 1e-9
relative: :func:`compare_outputs`).  Run on every corpus of ``python -m
bench.jobs`` and by ``python -m bench.peers``.
"""
import json
import sys

from bench import measure

#: the peers: name -> (module, key prefix in bench.floor's results)
PEERS = {"sparse_dot_topn": ("sparse_dot_topn", "topn"), "sp_matmul_rs": ("sp_matmul_rs", "rs")}
#: scores of the peers' lines against the job's: relative difference allowed
RTOL = 1e-9
TOP_K = 10


def installed(peer):
    """True when ``peer``'s package imports here."""
    import importlib.util

    return importlib.util.find_spec(PEERS[peer][0]) is not None


def peer_command(peer, corpus_path, out_path, max_df=None, top_k=TOP_K, threads=2):
    cmd = [sys.executable, "-m", "bench.peer_scripts", peer, str(corpus_path), str(out_path),
           "--top-k", str(top_k), "--threads", str(threads)]
    return cmd + (["--max-df", str(max_df)] if max_df is not None else [])


def run_peer(peer, corpus_path, out_path, max_df=None, passes=2, sample_interval=0.2):
    """The peer's script on ``corpus_path``, best of ``passes`` child processes:
    ``wall_s``, ``cpu_s`` (each the best pass), ``*_all``, ``max_rss_bytes``,
    ``phases`` (of the pass with the best wall) and the digest of its output
    (:func:`bench.measure.read_output`)."""
    cmd = peer_command(peer, corpus_path, out_path, max_df)
    runs = []
    for _ in range(passes):
        m = measure.run_checked(cmd, out_path, sample_interval)
        phases = next((json.loads(line)["phases"] for _, line in reversed(m["stderr"])
                       if line.startswith('{"phases"')), {})
        runs.append((m, phases))
    best = min(runs, key=lambda x: x[0]["wall_s"])
    return {"peer": peer, "command": " ".join(["python"] + cmd[1:]),
            "wall_s": best[0]["wall_s"], "cpu_s": min(m["cpu_s"] for m, _ in runs),
            "wall_s_all": [m["wall_s"] for m, _ in runs],
            "cpu_s_all": [m["cpu_s"] for m, _ in runs], "passes": passes,
            # VmHWM sampled from /proc: wait4's maxrss of a child that was
            # forked from this process counts this process's pages too
            "max_rss_bytes": max(b for m, _ in runs for _, b in m["process_peaks"] or [(0, 0)]),
            "phases": {k: {"wall_s": v[0], "cpu_s": v[1]} for k, v in best[1].items()},
            **measure.read_output(out_path)}


def read_lines(path):
    """``{vector: [(neighbour, score), ...]}`` of the job's output format."""
    out = {}
    with open(path, "rb") as f:
        for line in f:
            key, tab, value = line.partition(b"\t")
            if tab:
                out[json.loads(key)] = list(json.loads(value).items())
    return out


def _close(x, y, rtol):
    return abs(x - y) <= rtol * max(abs(x), abs(y))


def _tie_at_cut(a, b, rtol):
    """True if two lists of ``(neighbour, score)`` differ only by neighbours
    tied at the cut: the same scores (within ``rtol``), and every neighbour
    that is in one list only scores the list's lowest score."""
    sa, sb = sorted(s for _, s in a), sorted(s for _, s in b)
    if len(sa) != len(sb) or not all(_close(x, y, rtol) for x, y in zip(sa, sb)):
        return False
    only = {n for n, _ in a} ^ {n for n, _ in b}
    return all(_close(s, sa[0], rtol) for n, s in a + b if n in only)


def compare_outputs(job_path, peer_path, rtol=RTOL):
    """The peer's lines against the job's: ``same_neighbours`` (the same
    vectors, each with the same set of neighbours), ``same_order`` (and in
    the same order), ``max_rel_diff`` of the scores of the same pairs,
    ``scores_ok`` (the same neighbours and scores within ``rtol``), the line
    counts, ``lines_differing`` and ``lines_tied_at_cut`` (lines whose
    neighbours differ only by a tie at the k-th place: the job keeps the
    smaller UUID, a peer whichever its heap leaves), and ``same_but_ties``
    and ``scores_ok_but_ties`` (as above, those lines allowed)."""
    job, peer = read_lines(job_path), read_lines(peer_path)
    differing, tied, same_order, worst = 0, 0, True, 0.0
    for key in job.keys() | peer.keys():
        a, b = job.get(key, []), peer.get(key, [])
        if {n for n, _ in a} != {n for n, _ in b}:
            if _tie_at_cut(a, b, rtol):
                tied += 1
            else:
                differing += 1
        same_order &= [n for n, _ in a] == [n for n, _ in b]
        theirs = dict(b)
        for n, s in a:
            if n in theirs:
                worst = max(worst, abs(theirs[n] - s) / max(abs(s), 1e-300))
    same = differing == tied == 0
    return {"job_lines": len(job), "peer_lines": len(peer), "lines_differing": differing,
            "lines_tied_at_cut": tied, "same_neighbours": same, "same_order": same and same_order,
            "max_rel_diff": worst, "scores_ok": same and worst <= rtol,
            "same_but_ties": differing == 0, "scores_ok_but_ties": differing == 0 and worst <= rtol}
