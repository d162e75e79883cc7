"""Issue 44, item 2: the output a run to stdout stages in its temp dir.

Without ``--output-dir`` the local runner's last step writes the whole output
into the run's temp dir, and it is copied to stdout only at the end
(:func:`mrjobs.runtime.epilogue.write_output`).  Top-300 of 1,000 vectors
stages about 17 MB from 2.5 MB of input; the plan's peak, and so the job's
temp-disk check, counted none of it: on a small disk the run computed every
pair and then died with "No space left on device".  Here the plan's staged
output is held against the bytes a real run staged, the peaks with and
without ``--output-dir`` against each other and against the run's measured
peak, and (where a small file system can be mounted) the job refuses on it
before the work.  Results, not timings."""
import os
import shutil
import subprocess
import sys

import pytest

from mrjobs.generate import write_corpus
from mrjobs import plan as P
from mrjobs.plan import cli as plan_cli
from mrjobs.plan.realruns import measure_run

ARGS = ("--measure", "cosine", "--top-k", "300")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("tempdisk") / "c1k.jsonl"
    write_corpus(str(path), vectors=1000, seed=7, progress=False)
    return str(path)


def plan_of(corpus, *extra):
    o = plan_cli.parse_options([corpus, *ARGS, "-r", "local", "--num-cores", "2", *extra])
    return P.plan(o)


@pytest.fixture(scope="module")
def staged(corpus, tmp_path_factory):
    """The bytes a real local run staged: its output, as copied to stdout
    (the part files of its temp dir, byte for byte)."""
    out = tmp_path_factory.mktemp("tempdisk-out") / "stdout.txt"
    with open(out, "wb") as f:
        subprocess.run([sys.executable, "-m", "mrjobs.dot_products", corpus, *ARGS, "-r",
                        "local", "--num-cores", "2", "-q"], stdout=f, check=True)
    return os.path.getsize(out)


@pytest.mark.slow
def test_plan_counts_the_output_staged_for_stdout(corpus, staged):
    """To stdout, the plan's staged output is within 5% of the real run's
    and its peak holds it; to --output-dir nothing is staged and the peak is
    the steps' alone."""
    to_stdout = plan_of(corpus)
    to_dir = plan_of(corpus, "--output-dir", "/nonexistent/out")
    assert staged > 5 * os.path.getsize(corpus)  # the case: output well past the input
    assert to_stdout.get("staged_output_bytes", 0) == pytest.approx(staged, rel=0.05)
    assert to_stdout["output_bytes"] == to_dir["output_bytes"]
    assert to_dir["staged_output_bytes"] == 0
    assert to_stdout["temp_disk_bytes"] >= staged
    assert to_dir["temp_disk_bytes"] < staged
    assert to_stdout["temp_disk_bytes"] - to_dir["temp_disk_bytes"] <= staged * 1.05


@pytest.mark.slow
def test_plan_peak_against_the_measured_run(corpus, staged):
    """The run's measured temp-dir peak (its output left in the temp dir, as
    before the copy) holds the staged output, and the plan's peak to stdout
    is within 30% of it."""
    run = measure_run([corpus, *ARGS])
    e = plan_of(corpus)
    assert run["temp_disk_bytes"] >= staged
    assert abs(e["temp_disk_bytes"] / run["temp_disk_bytes"] - 1) <= 0.3, (
        e["temp_disk_bytes"], run["temp_disk_bytes"])


@pytest.mark.slow
def test_the_plan_text_names_the_staged_output(corpus):
    text = subprocess.run([sys.executable, "-m", "mrjobs.plan", corpus, *ARGS, "-r", "local"],
                          capture_output=True, text=True, check=True).stdout
    line = [l for l in text.splitlines() if "temporary disk" in l][0]
    assert "staged there for stdout" in line, line


def _mount_ok(where):
    if shutil.which("unshare") is None:
        return "no unshare(1) to mount a small file system"
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                            "mount -t tmpfs -o size=64k tmpfs %s" % where], capture_output=True)
    if probe.returncode:
        return "cannot mount a tmpfs in a user namespace here: %s" % probe.stderr[-200:]
    return None


@pytest.mark.slow
def test_a_small_temp_dir_is_refused_before_the_work(corpus, tmp_path, staged):
    """A real tmpfs between the steps' peak and the peak with the staged
    output: to stdout the job refuses in one line before any step runs; with
    --output-dir elsewhere the same disk takes the run."""
    small = tmp_path / "small"
    small.mkdir()
    why = _mount_ok(small)
    if why:
        pytest.skip(why)
    to_dir = plan_of(corpus, "--output-dir", "/nonexistent/out")
    size = int(max(3 * to_dir["temp_disk_bytes"], staged / 2))
    assert size < staged
    job = [sys.executable, "-m", "mrjobs.dot_products", corpus, *ARGS, "-r", "local",
           "--num-cores", "2", "--local-tmp-dir", str(small)]

    def run(extra):
        script = "mount -t tmpfs -o size=%d tmpfs %s && exec %s" % (
            size, small, " ".join(job + extra))
        return subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                               script], capture_output=True, text=True)
    refused = run([])
    assert refused.returncode == 1, refused.stderr[-500:]
    last = refused.stderr.strip().splitlines()[-1]
    assert last.startswith("mrsparse: error: the temp dir %s has " % small), last
    assert "Running step" not in refused.stderr and refused.stdout == ""
    assert "Traceback" not in refused.stderr
    out = tmp_path / "out"
    done = run(["--output-dir", str(out)])
    assert done.returncode == 0, done.stderr[-500:]
    # (in the namespace's own mount: the output dir lies outside it)
    assert sum(os.path.getsize(p) for p in out.glob("part-*")) == staged
