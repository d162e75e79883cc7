"""The plan's resources against real runs: whether pruning pays (the job's
own counters decide), the temporary disk of a local run (the plan is not
below what was measured), the JSON keys and --compare rows; and the job's
refusal to start when its temp dir has less room than the plan's peak.
Results, not timings."""
import json
import math
import os
import shutil
import subprocess
import sys

import pytest

from mrjobs.generate import write_corpus
from mrjobs import plan as P
from mrjobs.plan import cli as plan_cli
from mrjobs.plan.realruns import measure_run
from mrjobs.plan.cli import QUICK_FACTOR
from mrjobs.runtime.tempdisk import check_temp_disk
from mrjobs.testing import run_job
from mrjobs.dot_products import MRSparseDotProducts

KEYS = ("wall_s", "cpu_s", "peak_rss_bytes", "temp_disk_bytes", "prune_pays")


def corpus(path, n=2000, fpv=20, vocab=4000, seed=5, tfidf=False):
    """The generator's corpus; ``tfidf``: each weight times ln(N / df) of its
    feature (popular features weigh little, as in text), where pruning pays."""
    write_corpus(str(path), vectors=n, features_per_vector=fpv, vocabulary=vocab, seed=seed,
                 progress=False)
    if tfidf:
        docs = [json.loads(line) for line in open(path, encoding="utf-8")]
        df = {}
        for d in docs:
            for f in d["features"]:
                df[f] = df.get(f, 0) + 1
        with open(path, "w", encoding="utf-8") as out:
            for d in docs:
                d["features"] = {f: w * math.log(len(docs) / df[f])
                                 for f, w in d["features"].items() if df[f] < len(docs)}
                out.write(json.dumps(d) + "\n")
    return str(path)


def plan_of(*argv):
    o = plan_cli.parser().parse_args(list(argv) + ["-r", "local", "--num-cores", "2"])
    return P.plan(o)


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    d = tmp_path_factory.mktemp("resources")
    return {"zipf": corpus(d / "zipf.jsonl", fpv=50, vocab=100000),
            "tfidf": corpus(d / "tfidf.jsonl", n=3000, vocab=50000, seed=3, tfidf=True)}


def _computed(path, *args):
    return run_job(MRSparseDotProducts, None, [path, "--measure", "cosine", *args]).counters[
        "mrsparse work"]["products computed"]


@pytest.mark.parametrize("name, pays", [("tfidf", True), ("zipf", False)])
@pytest.mark.slow
def test_prune_pays_as_the_job_finds(corpora, name, pays):
    """Where the plan says pruning pays, the job skips most products; where
    it says it does not, the job computes them all."""
    e = plan_of(corpora[name], "--measure", "cosine", "--threshold", "0.5")
    pruned = _computed(corpora[name], "--threshold", "0.5")
    full = _computed(corpora[name], "--threshold", "0.5", "--no-prune")
    assert e["prune_pays"] is pays
    assert (pruned < full / 2) is pays and pruned <= full
    assert plan_of(corpora[name], "--measure", "cosine", "--top-k", "5")["prune_pays"] is None


@pytest.mark.slow
def test_temp_disk_of_a_local_run_within_30_percent_of_the_plan(corpora):
    """The plan's peak against the local runner's own note of its temp dir at
    the end of each phase (and a 50 ms sampling): within 30%, both ways."""
    e = plan_of(corpora["zipf"], "--measure", "cosine", "--top-k", "10")
    run = measure_run([corpora["zipf"], "--measure", "cosine", "--top-k", "10"])
    assert run["temp_disk_bytes"] >= os.path.getsize(corpora["zipf"])
    assert abs(e["temp_disk_bytes"] / run["temp_disk_bytes"] - 1) <= 0.3, (
        e["temp_disk_bytes"], run["temp_disk_bytes"])


@pytest.mark.slow
def test_json_and_compare_rows(corpora):
    out = subprocess.run([sys.executable, "-m", "mrjobs.plan", corpora["zipf"], "--measure",
                          "cosine", "--threshold", "0.5", "--json", "--compare"],
                         capture_output=True, text=True, check=True).stdout
    got = json.loads(out)
    assert all(got["plan"][k] is not None for k in KEYS), got["plan"]
    assert got["plan"]["peak_rss_bytes"] == max(got["plan"]["memory_by_kind"].values())
    rows = {r[0]: r[1:] for r in got["comparison"]}
    for row in ("wall s", "CPU s", "peak memory of a task or sort", "temporary disk"):
        plan, run = rows[row]
        assert plan > 0 and run > 0, row
    assert got["run"]["cpu_s"] > 0 and got["run"]["temp_disk_bytes"] > 0
    text = subprocess.run([sys.executable, "-m", "mrjobs.plan", corpora["zipf"],
                           "--measure", "cosine", "--threshold", "0.5"],
                          capture_output=True, text=True, check=True).stdout
    for words in ("wall", "of CPU", "peak memory of a process", "temporary disk",
                  "pruning: does not pay"):
        assert words in text, (words, text)


# -- the job's refusal ------------------------------------------------------------

def test_enough_room_makes_no_plan(corpora, tmp_path):
    """With QUICK_FACTOR times the input free, the check passes without a
    plan (it reads no option of the job but --output-dir, here given: no
    output is staged); with less, it plans (here the first option it reads
    stops the plan, and the check lets the run go)."""
    read = []

    class Options:
        output_dir = "/elsewhere"

        def __getattr__(self, name):
            read.append(name)
            raise RuntimeError("a plan was started")

    class Job:
        temp_disk_estimate = MRSparseDotProducts.temp_disk_estimate
        options = Options()
    free = shutil.disk_usage(tmp_path).free
    assert free >= QUICK_FACTOR * os.path.getsize(corpora["zipf"])
    check_temp_disk(Job(), str(tmp_path), [corpora["zipf"]])
    assert read == []
    big = tmp_path / "big.jsonl"
    with open(big, "wb") as f:  # sparse: its size, not its blocks
        f.truncate(free // QUICK_FACTOR + 1)
    check_temp_disk(Job(), str(tmp_path), [str(big)])
    assert len(read) == 1


@pytest.mark.slow
def test_a_run_that_would_fill_its_temp_dir_is_refused(corpora, tmp_path):
    """A real small file system (a 64 kB tmpfs in a user and mount namespace
    of its own): the job refuses in one line, exit status 1, and says where
    to point the temp dir."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare(1) to mount a small file system")
    small = tmp_path / "small"
    small.mkdir()
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                            "mount -t tmpfs -o size=64k tmpfs %s" % small],
                           capture_output=True)
    if probe.returncode:
        pytest.skip("cannot mount a tmpfs in a user namespace here: %s" % probe.stderr[-200:])
    script = ("mount -t tmpfs -o size=64k tmpfs {d} && exec {py} -m mrjobs.dot_products {c} "
              "-r local --local-tmp-dir {d} --measure cosine --top-k 3").format(
                  d=small, py=sys.executable, c=corpora["zipf"])
    run = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script],
                         capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("mrsparse: error: the temp dir %s has " % small), last
    assert "--local-tmp-dir (or TMPDIR)" in last and run.stdout == ""
    assert "Traceback" not in run.stderr


def test_calibrate_reports_every_constant_it_wrote():
    # a step's CPU model is a list, the steps a dict: the report after
    # --calibrate formatted each as a number (TypeError, after the file was written)
    import json
    from pathlib import Path

    import mrjobs.plan
    from mrjobs.plan.__main__ import _constants_text

    shipped = Path(mrjobs.plan.__file__).with_name("calibration.json")
    constants = json.loads(shipped.read_text())["constants"]
    text = _constants_text(constants)
    for step, model in constants["steps"].items():
        assert "%s=[%s]" % (step, ", ".join("%.3g" % x for x in model)) in text
    if "par" in constants:  # (fitted where a calibration run's step ran on several cores)
        assert "par=%.3g" % constants["par"] in text
