"""The targets of issue 27 as rows of the job benchmark's table of targets:
the job against the peers' scripts end to end (wall, as the issue's table
is; CPU printed beside it), from the JSON file and from compact input, on
the text corpus, our C kernel's products per CPU second against
``sp_matmul_rs``'s on one block, and the temporary disk of a local run.

Each function takes the rows of :mod:`bench.jobs` (job runs, the end-to-end
table's rows, the kernel table's rows) and returns check rows
(:func:`bench.common.check`).  A target whose corpus or peer is not part of
the run gives a row too, with ``pass`` None and "not run" in what was
measured.  Nothing here measures anything.
"""
from bench import common

#: job wall / the peer's script wall, end to end, on the exact Zipf corpora
#: (the job reads the JSON file, as the script does)
TARGET_E2E = {"sparse_dot_topn": 1.0, "sp_matmul_rs": 1.5}
#: issue "Real text": the Zipf corpora's job wall / sp_matmul_rs's script wall, to stay under
TARGET_ZIPF_VS_RS = 0.5
#: job wall from compact input / sp_matmul_rs's script wall from the JSON file
TARGET_COMPACT_VS_RS = 1.0
#: text corpus: job wall / sparse_dot_topn's script wall
TARGET_TEXT_VS_TOPN = 1.5
#: our C pair kernel's products per CPU second / sp_matmul_rs's, one thread
TARGET_KERNEL_VS_RS = 0.8
#: peak bytes of a local run's temporary directory / bytes of its input
TARGET_TEMP_DISK = 4.0
#: the peers' short names, as in the check ids
SHORT = {"sparse_dot_topn": "topn", "sp_matmul_rs": "rs"}
#: the kernel table's rows compared (bench.peers.kernel_rows)
OUR_KERNEL, OUR_DOTS, RS_KERNEL = ("mrsparse pair_best (C)", "mrsparse dots() alone (C)",
                                   "sp_matmul_rs")


def find_row(rows, corpus, strategy, runner=None, prefer="local", variant=""):
    """The run of ``corpus``, ``strategy`` and ``variant`` on ``runner``; with
    None, on ``prefer`` if there is one, else on any runner."""
    found = {r["runner"]: r for r in rows
             if (r["corpus"], r["strategy"], r["variant"]) == (corpus, strategy, variant)}
    if runner is not None:
        return found.get(runner)
    return found.get(prefer) or next(iter(found.values()), None)


def not_run(cid, target, why):
    """A target's row when what it measures was not part of the run."""
    return common.check(cid, target, "not run: %s" % why, None)


def _peer_row(peer_rows, corpus, who):
    return next((r for r in peer_rows if r["corpus"] == corpus and r.get("kind") == "peer"
                 and r["who"] == who), None)


def _versus(cid, target, job, peer, limit, what="job"):
    """``job`` (a run) against ``peer`` (its end-to-end row): wall ratio <= limit."""
    ratio = job["wall_s"] / peer["wall_s"]
    return common.check(cid, target, "%.2fx wall (%s %.1f s vs %.1f s); CPU %.2fx (%.1f s vs "
                        "%.1f s)" % (ratio, what, job["wall_s"], peer["wall_s"],
                                     job["cpu_s"] / peer["cpu_s"], job["cpu_s"], peer["cpu_s"]),
                        ratio <= limit)


def _e2e_row(peer_rows, name, who, cid, target, limit):
    job = next((r for r in peer_rows if r["corpus"] == name and r.get("kind") == "job"), None)
    peer = _peer_row(peer_rows, name, who)
    if job is None:
        return not_run(cid, target, "no job run of %s at top-10 in this run" % name)
    if peer is None:
        return not_run(cid, target, "%s's script did not run on %s (not installed, or "
                       "--no-peers)" % (who, name))
    return _versus(cid, target, job, peer, limit)


def e2e_checks(peer_rows, workloads):
    """The job (blocks, top-10, the end-to-end table's run) against each peer's
    script on each exact Zipf corpus of ``workloads["zipf_e2e"]``, and against
    sparse_dot_topn's on the text corpus; wall time."""
    out = []
    for name in workloads.get("zipf_e2e", ()):
        for who, limit in TARGET_E2E.items():
            out.append(_e2e_row(peer_rows, name, who, "e2e %s vs %s" % (name, SHORT[who]),
                                "job wall <= %gx %s's script, end to end" % (limit, who), limit))
        out.append(_e2e_row(peer_rows, name, "sp_matmul_rs", "e2e %s vs rs, real text" % name,
                            "job wall <= %gx sp_matmul_rs's script, end to end (issue Real "
                            "text)" % TARGET_ZIPF_VS_RS, TARGET_ZIPF_VS_RS))
    name = workloads["text"]
    out.append(_e2e_row(peer_rows, name, "sparse_dot_topn", "e2e %s vs topn" % name,
                        "job wall <= %gx sparse_dot_topn's script, end to end"
                        % TARGET_TEXT_VS_TOPN, TARGET_TEXT_VS_TOPN))
    return out


def compact_checks(rows, peer_rows, workloads):
    """The job reading ``--input-format compact`` (converted beforehand, not
    timed) against sp_matmul_rs's script reading the JSON file."""
    out = []
    for name in workloads.get("compact", ()):
        cid = "e2e %s compact vs rs" % name
        target = ("job wall from --input-format compact <= %gx sp_matmul_rs's script "
                  "(from JSON)" % TARGET_COMPACT_VS_RS)
        job = find_row(rows, name, "blocks", variant="compact")
        peer = _peer_row(peer_rows, name, "sp_matmul_rs")
        if job is None:
            out.append(not_run(cid, target, "no compact-input run of %s" % name))
        elif peer is None:
            out.append(not_run(cid, target, "sp_matmul_rs's script did not run on %s" % name))
        else:
            json_run = find_row(rows, name, "blocks", job["runner"])
            c = _versus(cid, target, job, peer, TARGET_COMPACT_VS_RS, "job")
            if json_run is not None:
                c["measured"] += "; from JSON the job took %.1f s" % json_run["wall_s"]
            out.append(c)
    return out


def temp_disk_check(rows):
    """Every local run's temporary directory at its peak against its input."""
    cid, target = "temp disk", ("a local run's temporary disk <= %gx its input (every local run)"
                                % TARGET_TEMP_DISK)
    local = [r for r in rows if r["runner"] == "local" and r.get("temp_disk_peak_bytes")
             is not None and r.get("input_bytes")]
    if not local:
        return [not_run(cid, target, "no local run")]
    worst = max(local, key=lambda r: r["temp_disk_peak_bytes"] / r["input_bytes"])
    ratio = worst["temp_disk_peak_bytes"] / worst["input_bytes"]
    name = " ".join(x for x in (worst["corpus"], worst["strategy"], worst["runner"],
                                worst["variant"]) if x)
    return [common.check(cid, target, "largest %.2fx (%s: %s peak vs %s input; sampled)" % (
        ratio, name, common.size_label(worst["temp_disk_peak_bytes"]),
        common.size_label(worst["input_bytes"])), ratio <= TARGET_TEMP_DISK)]


def kernel_check(kernel_rows):
    """Our pair kernel's products per CPU second against sp_matmul_rs's, on
    the block of :func:`bench.peers.kernel_rows` (one thread each)."""
    cid = "kernel vs rs"
    target = ("our C pair kernel >= %gx sp_matmul_rs's products per CPU s (1 thread, one "
              "block)" % TARGET_KERNEL_VS_RS)
    by = {r["kernel"]: r for r in kernel_rows}
    ours, rs, dots = by.get(OUR_KERNEL), by.get(RS_KERNEL), by.get(OUR_DOTS)
    if ours is None or rs is None:
        return [not_run(cid, target, "%s not measured" % (
            "the C extension" if ours is None else "sp_matmul_rs"))]
    ratio = ours["products_per_cpu_s"] / rs["products_per_cpu_s"]
    text = ("%.2fx (%.1f M vs %.1f M products/CPU s; %.3f s vs %.3f s CPU for the same top-10: "
            "%.2fx rs's time" % (ratio, ours["products_per_cpu_s"] / 1e6,
                                 rs["products_per_cpu_s"] / 1e6, ours["cpu_s"], rs["cpu_s"],
                                 ours["cpu_s"] / rs["cpu_s"]))
    if dots is not None:
        text += "; dots() alone %.2fx" % (dots["products_per_cpu_s"] / rs["products_per_cpu_s"])
    return [common.check(cid, target, text + ")", ratio >= TARGET_KERNEL_VS_RS)]
