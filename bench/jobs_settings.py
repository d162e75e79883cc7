"""What ``python -m bench.jobs`` runs and aims at: the job, its measure and
top-k, the strategies, the variants of a run, the targets; read by
:mod:`bench.jobs` and by its chart (:mod:`bench.jobs_chart`)."""

JOB_MODULE = "mrjobs.dot_products"
MEASURE = "cosine"
TOP_K = 10
NUM_CORES = 2
STRATEGIES = ("blocks", "stripes")

#: blocks wall / floor wall, by workload (dense: top-k 10 on the local runner)
TARGET_FLOOR_RATIO = {"dense": 0.8, "large": 0.5, "W1": 1.2}
TARGET_SHUFFLE_SHARE = 0.02      # dense: blocks shuffle / stripes estimate
TARGET_TASK_MEMORY = 1.5e9       # every task's peak RSS, bytes (every run)
TARGET_STRIPES_RATIO = 0.25      # W1: blocks wall / stripes wall
TARGET_WALL_S = {"small": 2.5, "W2": 3.5}  # wall seconds on the local runner
TARGET_TEXT_CPU = {"inline": 3.0, "local": 5.0}  # text: blocks CPU / floor CPU
TARGET_TINY_CPU_S = 4.0          # 50 vectors on the local runner, CPU s in all
TARGET_K_RATIO = {100: 1.25, 1000: 2.0}  # dense: top-k K wall / top-k 10 wall
#: pruning: wall without it / wall with it, by variant (the same bytes; t0.5:
#: issue 27's 2x on the tf-idf corpus)
TARGET_PRUNE_SPEEDUP = {"t0.5": 2.0, "t0.8": 5.0, "": 1.5}
#: issue 27's end-to-end, kernel and temporary-disk targets: bench.checks

#: a run's variant: the options after ``--measure cosine`` ("" is the default)
VARIANTS = {"": ("--top-k", str(TOP_K)), "k100": ("--top-k", "100"),
            "k1000": ("--top-k", "1000"),
            "t0.5": ("--threshold", "0.5"), "t0.5 no-prune": ("--threshold", "0.5", "--no-prune"),
            "t0.8": ("--threshold", "0.8"), "t0.8 no-prune": ("--threshold", "0.8", "--no-prune"),
            "compact": ("--top-k", str(TOP_K), "--input-format", "compact")}
K_VARIANTS = {"": TOP_K, "k100": 100, "k1000": 1000}
#: the top-k of each variant that has one (compact: the corpus converted by
#: ``python -m mrjobs.convert --to compact`` beforehand, untimed)
TOP_K_OF = {**K_VARIANTS, "compact": TOP_K}
