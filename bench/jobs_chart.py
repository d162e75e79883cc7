"""The chart of :mod:`bench.jobs` (``jobs.png``): wall time, CPU time, shuffle
bytes and task memory against corpus size; wall time against k; pruned
against unpruned; end to end, the job against both peers' scripts
(sparse_dot_topn and sp_matmul_rs) and its temporary disk, against corpus
size.  Draws from the rows and corpus stats of a run; measures nothing.
"""
from bench import checks as more_checks
from bench import common, floor
from bench.jobs_settings import K_VARIANTS, STRATEGIES, TARGET_TASK_MEMORY, TOP_K

_row = more_checks.find_row

COLORS = {"blocks": "#d62728", "stripes": "#1f77b4", "floor": "#2ca02c", "topn": "#9467bd",
          "rs": "#ff7f0e", "topn_e2e": "#c5b0d5", "rs_e2e": "#ffbb78", "compact": "#8c564b"}
LABELS = {"blocks": "--strategy blocks", "stripes": "--strategy stripes",
          "floor": "scipy floor (1 core)",
          "topn": "sparse_dot_topn (%d threads), product" % floor.TOPN_THREADS,
          "rs": "sp_matmul_rs (%d threads), product" % floor.TOPN_THREADS,
          "topn_e2e": "sparse_dot_topn script, end to end",
          "rs_e2e": "sp_matmul_rs script, end to end",
          "compact": "blocks from --input-format compact"}
FAMILY_STYLE = {"exact": ("o", "-"), "df-cut": ("s", "--"), "text": ("^", ":"),
                "tf-idf": ("D", "-.")}


def _style(family, what):
    m, ls = FAMILY_STYLE[family.split()[0]]
    return dict(color=COLORS[what], marker=m, ls=ls)


def _value(rows, corpora_stats, name, what, key, prefer):
    """``key`` of the run of ``what`` (a strategy) on ``name``, or of the corpus."""
    if what in STRATEGIES:
        r = _row(rows, name, what, prefer=prefer)
        return None if r is None else r[key]
    return corpora_stats[name].get(key)


def _scaling_panels(axes, rows, corpora_stats, prefer):
    ax_wall, ax_cpu, ax_bytes, ax_mem = axes
    refs = ("floor", "topn", "rs", "topn_e2e", "rs_e2e") + STRATEGIES
    panels = ((ax_wall, refs, "wall_s"), (ax_cpu, refs, "cpu_s"),
              (ax_bytes, STRATEGIES, "shuffle_bytes"), (ax_mem, STRATEGIES, "task_peak_rss_bytes"))
    for fam in dict.fromkeys(st["family"] for st in corpora_stats.values()):
        names = [n for n, st in corpora_stats.items() if st["family"] == fam]
        for ax, whats, key in panels:
            for what in whats:
                k = key if what in STRATEGIES else what + "_" + key
                common.plot_series(ax, [(corpora_stats[n]["vectors"], _value(
                    rows, corpora_stats, n, what, k, prefer)) for n in names], **_style(fam, what))
        common.plot_series(ax_bytes, [(corpora_stats[n]["vectors"], corpora_stats[n][
            "stripes_estimate_bytes"]) for n in names], alpha=0.4, lw=1, **_style(fam, "stripes"))
    common.log_axes(ax_wall, "vectors (log)", "wall time, s (log)", "wall time against size")
    common.log_axes(ax_cpu, "vectors (log)", "CPU time, s (log)", "CPU time, all processes")
    common.log_axes(ax_bytes, "vectors (log)", "bytes into the reducers, all steps (log)",
                    "shuffle (faint: stripes' estimate, sum df^2/2 x %g B)"
                    % floor.BYTES_PER_PARTIAL_PRODUCT)
    common.log_axes(ax_mem, "vectors (log)", "largest peak RSS of one task, bytes",
                    "task memory (dotted: the target)", logy=False)
    ax_mem.axhline(TARGET_TASK_MEMORY, color="#777777", lw=1, ls=":")


def _k_panel(ax, rows, corpora_stats, name):
    """Wall time against k on one corpus: the job, the floor and the peer."""
    st = corpora_stats.get(name, {})
    refs = {TOP_K: st, **{int(k): v for k, v in st.get("k_refs", {}).items()}}
    runner = next((r["runner"] for r in rows if r["corpus"] == name and r["variant"]
                   in K_VARIANTS and r["variant"]), None)
    job = [(k, (_row(rows, name, "blocks", runner, variant=v) or {}).get("wall_s"))
           for v, k in K_VARIANTS.items()]
    common.plot_series(ax, job, color=COLORS["blocks"], marker="o")
    for what in ("floor", "topn", "rs"):
        common.plot_series(ax, [(k, r.get(what + "_wall_s")) for k, r in refs.items()],
                           color=COLORS[what], marker="o")
    common.log_axes(ax, "k (--top-k, log)", "wall time, s (log)", "time against k on %s "
                    "(%s vectors)" % (name, "{:,}".format(st.get("vectors", 0))))


def _prune_panel(ax, rows):
    """Wall time of each pruned question next to the same run with --no-prune."""
    pairs = [(p, _row(rows, p["corpus"], "blocks", p["runner"], variant=p["variant"]
                      + " no-prune")) for p in rows
             if p["variant"].startswith("t") and not p["variant"].endswith("no-prune")]
    pairs = [(p, f) for p, f in pairs if f is not None]
    x = list(range(len(pairs)))
    ax.bar([i - 0.2 for i in x], [f["wall_s"] for _, f in pairs], 0.4,
           color=COLORS["stripes"], label="--no-prune")
    ax.bar([i + 0.2 for i in x], [p["wall_s"] for p, _ in pairs], 0.4,
           color=COLORS["blocks"], label="pruned (default)")
    ax.set_xticks(x, ["%s\n--threshold %s" % (p["corpus"], p["variant"][1:]) for p, _ in pairs],
                  fontsize=8)
    ax.set(ylabel="wall time, s")
    ax.set_title("pruning under --threshold (the same bytes)", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.25)


def _e2e_series(rows, corpora_stats, names, prefer):
    """``{what: [(vectors, wall s)]}`` end to end on the corpora ``names``: the
    job (blocks, top-10; from compact input) and each peer's script."""
    job = {what: [(corpora_stats[n]["vectors"], (_row(rows, n, "blocks", prefer=prefer,
                                                       variant=v) or {}).get("wall_s"))
                  for n in names] for what, v in (("blocks", ""), ("compact", "compact"))}
    return dict(job, **{what: [(corpora_stats[n]["vectors"], corpora_stats[n].get(
        what + "_wall_s")) for n in names] for what in ("topn_e2e", "rs_e2e")})


def _e2e_panels(axes, rows, corpora_stats, prefer):
    """End to end against corpus size: wall time of the job and of both peers'
    scripts; the job's wall over each script's, with the targets; a local
    run's temporary disk over its input, with the target."""
    ax_wall, ax_ratio, ax_disk = axes
    for fam in dict.fromkeys(st["family"] for st in corpora_stats.values()):
        names = [n for n, st in corpora_stats.items() if st["family"] == fam]
        series = _e2e_series(rows, corpora_stats, names, prefer)
        for what, points in series.items():
            common.plot_series(ax_wall, points, **_style(fam, what))
        for peer in ("topn", "rs"):
            theirs = dict(series[peer + "_e2e"])
            common.plot_series(ax_ratio, [(x, common.ratio(y, theirs.get(x)))
                                          for x, y in series["blocks"]], **_style(fam, peer))
        common.plot_series(ax_disk, [(r["vectors"], r["temp_disk_vs_input"]) for r in rows
                                     if r["corpus"] in names and r["runner"] == "local"
                                     and not r["variant"]], **_style(fam, "blocks"))
    common.log_axes(ax_wall, "vectors (log)", "wall time, s (log)",
                    "end to end: the job (top-%d, %s runner) and the peers' scripts (%d threads)"
                    % (TOP_K, prefer, floor.TOPN_THREADS))
    common.log_axes(ax_ratio, "vectors (log)", "job wall / script wall (log)",
                    "the job's wall over each peer's script (colours of the products; dotted: "
                    "targets %s)" % ", ".join(
                        "%g %s" % (v, k) for k, v in more_checks.TARGET_E2E.items()))
    for peer, limit in more_checks.TARGET_E2E.items():
        ax_ratio.axhline(limit, color=COLORS[more_checks.SHORT[peer]], lw=1, ls=":")
    common.log_axes(ax_disk, "vectors (log)", "peak temporary bytes / input bytes",
                    "temporary disk of local runs (dotted: the target)", logy=False)
    ax_disk.axhline(more_checks.TARGET_TEMP_DISK, color="#777777", lw=1, ls=":")
    ax_disk.set_ylim(bottom=0)


def draw_chart(rows, corpora_stats, directory, title, prefer="local", k_corpus=None):
    """Wall time, CPU time, shuffle bytes and task memory against corpus size;
    wall time against k; pruned against unpruned; end to end against both
    peers' scripts, and temporary disk, against corpus size."""
    from matplotlib.lines import Line2D

    fig, axes = common.pyplot().subplots(3, 3, figsize=(21, 16))
    _scaling_panels(axes[:2, :2].ravel(), rows, corpora_stats, prefer)
    _k_panel(axes[0, 2], rows, corpora_stats, k_corpus)
    _prune_panel(axes[1, 2], rows)
    _e2e_panels(axes[2], rows, corpora_stats, prefer)
    handles = [Line2D([], [], color=COLORS[w], lw=6, label=LABELS[w]) for w in COLORS]
    handles += [Line2D([], [], color="#444444", marker=m, ls=ls, label="family: %s" % f)
                for f, (m, ls) in FAMILY_STYLE.items()]
    fig.legend(handles=handles, loc="upper center", ncol=(len(handles) + 1) // 2, fontsize=9,
               bbox_to_anchor=(0.5, 0.98), frameon=False)
    fig.suptitle(title, fontsize=12, y=0.997)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return common.save_figure(fig, "jobs", directory)
