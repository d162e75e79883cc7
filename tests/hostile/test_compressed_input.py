"""Issue 44, item 8 (part): compressed inputs sized by their uncompressed
bytes, and read by the planner as the job reads them.

A gzipped corpus was sized from its compressed bytes (and its first line was
unknown), so the job chose more blocks and a rows step than for the same
corpus uncompressed; the planner read the compressed bytes as lines ("not one
vector in the 5000 sampled line(s)").  Here: the sizes (gzip's exact, bz2's
estimated), the job's own block choice and output bytes for plain, gzip and
bz2 input, and the plan of each (and of a directory holding both kinds).

And every member: a ``.gz`` of several gzip members (``cat a.gz b.gz``,
bgzip, ``pigz --independent``) or a ``.bz2`` of several streams was read by
mrjob up to the end of the first one only -- "vectors read=100" of 200, no
word of the rest -- where Hadoop reads them all; a truncated file was read
as far as it went, silently.  Here: two and three members, an empty one in
the middle, on the inline and local runners, give the plain file's output
bytes and count every line; a truncated or padded file stops the run with
one line naming it (Hadoop fails the task too); the sizes and the planner
count every member.  Results, not timings."""
import bz2
import gzip
import os
import re
import shutil
import subprocess
import sys

import pytest

from mrjobs.generate import write_corpus
from mrjobs import plan as P
from mrjobs.plan import cli as plan_cli
from mrjobs.strategies.sizing import (HEAD_BYTES, data_bytes, data_first_line, input_data_bytes,
                                     open_data)

#: 6,000 vectors (~15 MB; ~5.6 MB gzipped): past the small-input rule's
#: 100,000 entries even counted from the compressed bytes
VECTORS = 6000
ARGS = ("--measure", "cosine", "--top-k", "10", "-r", "local", "--num-cores", "2")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("compressed")
    plain = d / "c.jsonl"
    write_corpus(str(plain), vectors=VECTORS, seed=11, progress=False)
    data = plain.read_bytes()
    (d / "c.jsonl.gz").write_bytes(gzip.compress(data, 6))
    (d / "c.jsonl.bz2").write_bytes(bz2.compress(data, 9))
    return {"plain": str(plain), "gz": str(d / "c.jsonl.gz"), "bz2": str(d / "c.jsonl.bz2"),
            "size": len(data)}


@pytest.mark.slow
@pytest.mark.smoke
def test_sizes_are_the_uncompressed_bytes(inputs):
    """gzip: the trailer's ISIZE (exact for one member); bz2: the head's
    ratio (within 15% on this corpus)."""
    assert os.path.getsize(inputs["gz"]) < inputs["size"] / 2
    assert data_bytes(inputs["gz"]) == inputs["size"]
    assert data_bytes(inputs["bz2"]) == pytest.approx(inputs["size"], rel=0.15)
    assert data_bytes(inputs["plain"]) == inputs["size"]
    assert input_data_bytes([inputs["gz"], inputs["plain"]]) == 2 * inputs["size"]
    first = data_first_line([inputs["plain"]])
    assert first.startswith(b'{"id": ')
    assert data_first_line([inputs["gz"]]) == data_first_line([inputs["bz2"]]) == first


def test_a_small_gzip_is_sized_exactly(tmp_path):
    """A file under the head's size is decompressed whole; a corrupt one is
    sized by its bytes (mrjob says what is wrong with it)."""
    p = tmp_path / "s.jsonl.gz"
    p.write_bytes(gzip.compress(b"x" * 100_000))
    assert data_bytes(str(p)) == 100_000
    bad = tmp_path / "bad.gz"
    bad.write_bytes(b"not gzip at all\n")
    assert data_bytes(str(bad)) == len(b"not gzip at all\n")
    assert data_first_line([str(bad)]) is None


def _run(path):
    job = subprocess.run([sys.executable, "-m", "mrjobs.dot_products", path, *ARGS],
                         capture_output=True, check=True)
    blocks = re.search(rb"blocks strategy: (\d+) block\(s\)", job.stderr)
    return int(blocks.group(1)), job.stdout


@pytest.mark.slow
def test_the_job_chooses_the_same_blocks_and_writes_the_same_bytes(inputs):
    """The job's own block choice (its log line) for gzip and bz2 input is
    the plain input's (one block, no rows step), and the output bytes are
    the same."""
    blocks, out = _run(inputs["plain"])
    assert blocks == 1 and out
    for kind in ("gz", "bz2"):
        assert _run(inputs[kind]) == (blocks, out), kind


def _plan(*paths):
    return P.plan(plan_cli.parse_options([*paths, *ARGS, "--calibration", os.devnull]))


@pytest.mark.slow
def test_the_planner_reads_compressed_input(inputs):
    """gzip: the same sample, vectors and blocks as the plain input; bz2: its
    estimated size scales them (within 15%), the same blocks."""
    plain = _plan(inputs["plain"])
    gz = _plan(inputs["gz"])
    bz = _plan(inputs["bz2"])
    for key in ("kept_entries", "products", "blocks", "input_bytes", "temp_disk_bytes"):
        assert gz[key] == pytest.approx(plain[key], rel=1e-9), key
    assert bz["blocks"] == plain["blocks"] == 1
    assert bz["input_bytes"] == pytest.approx(plain["input_bytes"], rel=0.15)
    assert bz["fams"][0].s.n == plain["fams"][0].s.n


@pytest.mark.slow
def test_the_planner_reads_a_directory_of_both(inputs, tmp_path):
    """A directory holding a gzip file and a plain one: both read, the input
    twice the corpus."""
    d = tmp_path / "dir"
    d.mkdir()
    shutil.copy(inputs["gz"], d / "a.jsonl.gz")
    shutil.copy(inputs["plain"], d / "b.jsonl")
    e = _plan(str(d))
    assert e["fams"][0].s.files == 2
    assert e["input_bytes"] == pytest.approx(2 * inputs["size"], rel=1e-9)
    text = subprocess.run([sys.executable, "-m", "mrjobs.plan", inputs["gz"], *ARGS],
                          capture_output=True, text=True)
    assert text.returncode == 0, text.stderr
    assert "1 (the job's default)" in text.stdout


# -- every member ---------------------------------------------------------------

#: a small corpus: every run of it takes about a second
SMALL = 150
SMALL_ARGS = ("--measure", "cosine", "--top-k", "3")
#: where each layout cuts the corpus's lines into members (None: an empty member)
LAYOUTS = {"2 members": (0, 50, SMALL), "3 members": (0, 40, 90, SMALL),
           "an empty member in the middle": (0, 75, None, SMALL)}
COMPRESS = {"gz": gzip.compress, "bz2": bz2.compress}


def _members(lines, cuts, compress):
    """``lines`` cut into members at ``cuts``, each compressed on its own and
    the results concatenated, as ``cat a.gz b.gz`` makes them."""
    parts, start = [], 0
    for cut in cuts[1:]:
        if cut is None:
            parts.append(compress(b""))
            continue
        parts.append(compress(b"".join(lines[start:cut])))
        start = cut
    return b"".join(parts)


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """The small corpus plain, and in every layout of members, gz and bz2."""
    d = tmp_path_factory.mktemp("members")
    plain = d / "s.jsonl"
    write_corpus(str(plain), vectors=SMALL, seed=12, progress=False)
    lines = plain.read_bytes().splitlines(keepends=True)
    assert len(lines) == SMALL
    files = {"plain": str(plain)}
    for i, cuts in enumerate(LAYOUTS.values()):
        for ext, compress in COMPRESS.items():
            path = d / ("s%d.jsonl.%s" % (i, ext))
            path.write_bytes(_members(lines, cuts, compress))
            files[i, ext] = str(path)
    return files


def _cli(path, runner, *args):
    return subprocess.run([sys.executable, "-m", "mrjobs.dot_products", path, "-r", runner,
                           *SMALL_ARGS, *args], capture_output=True)


def _vectors_read(stderr):
    return int(re.search(rb"\bvectors read=(\d+)", stderr).group(1))


@pytest.fixture(scope="module")
def plain_output(small):
    out = {}
    for runner in ("inline", "local"):
        job = _cli(small["plain"], runner)
        assert job.returncode == 0, job.stderr
        assert _vectors_read(job.stderr) == SMALL
        out[runner] = job.stdout
    assert out["inline"] == out["local"] and out["inline"].count(b"\n") == SMALL
    return out


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.parametrize("ext", ["gz", "bz2"])
@pytest.mark.parametrize("layout", range(len(LAYOUTS)), ids=list(LAYOUTS))
@pytest.mark.slow
def test_every_member_is_read(small, plain_output, runner, ext, layout):
    """The plain file's output bytes, and every line counted read."""
    job = _cli(small[layout, ext], runner)
    assert job.returncode == 0, job.stderr
    assert _vectors_read(job.stderr) == SMALL
    assert job.stdout == plain_output[runner]


def _broken(small, tmp_path, how):
    """A broken copy of the 2-member gz (or bz2): cut inside its second member,
    or padded with zeros after its last (what Hadoop takes for "not a gzip
    file")."""
    ext = "bz2" if how == "truncated bz2" else "gz"
    data = open(small[0, ext], "rb").read()
    first = len(COMPRESS[ext](b"".join(open(small["plain"], "rb").readlines()[:50])))
    path = tmp_path / ("broken.jsonl.%s" % ext)
    path.write_bytes(data + b"\0" * 1024 if how == "zero padding" else
                     data[:first + (len(data) - first) // 2])
    return str(path)


@pytest.mark.parametrize("runner", ["inline", "local"])
@pytest.mark.parametrize("how, said", [
    ("truncated gz", "truncated gzip data: the file ends inside member 2, after "),
    ("truncated bz2", "truncated bz2 data: the file ends inside stream 2, after "),
    ("zero padding", "corrupt gzip data in member 3 (incorrect header check), after "),
])
@pytest.mark.slow
def test_a_broken_file_stops_the_run_in_one_line_naming_it(small, tmp_path, runner, how, said):
    """Not read as far as it goes: exit 1, no output, one line naming the file
    (the bytes of data read before it differ by layout: only their start is
    checked)."""
    path = _broken(small, tmp_path, how)
    job = _cli(path, runner)
    assert job.returncode == 1
    assert job.stdout == b""
    last = job.stderr.decode().rstrip("\n").splitlines()[-1]
    assert last.startswith("mrsparse: error: %s: %s" % (path, said)), job.stderr
    assert b"Traceback" not in job.stderr


def test_every_member_is_sized_and_opened(small):
    """A small file's size is exact over every member; its data and first
    line are the plain file's."""
    plain = open(small["plain"], "rb").read()
    for layout in range(len(LAYOUTS)):
        for ext in COMPRESS:
            path = small[layout, ext]
            assert data_bytes(path) == len(plain), path
            assert b"".join(open_data(path)) == plain, path
            assert data_first_line([path]) == plain.split(b"\n", 1)[0]


def _bgzip_like(data, block=1 << 16):
    """``data`` in gzip members of ``block`` bytes each (bgzip's layout)."""
    return b"".join(gzip.compress(data[i:i + block], 6) for i in range(0, len(data), block))


@pytest.mark.slow
def test_a_large_file_of_members_is_sized_by_all_of_them(inputs, tmp_path):
    """Past the head: a gzip trailer's ISIZE is its last member's size only,
    not taken for the file's; two concatenated gz (each past the head), one
    of bgzip-like 64 KiB members, and two bz2 streams are sized within their
    usual error of every member's bytes."""
    one = open(inputs["gz"], "rb").read()
    assert len(one) > HEAD_BYTES
    cat = tmp_path / "cat.jsonl.gz"
    cat.write_bytes(one + one)
    assert data_bytes(str(cat)) == pytest.approx(2 * inputs["size"], rel=0.02)
    blocks = tmp_path / "bgzip.jsonl.gz"
    blocks.write_bytes(_bgzip_like(open(inputs["plain"], "rb").read()))
    assert data_bytes(str(blocks)) == pytest.approx(inputs["size"], rel=0.02)
    two = tmp_path / "cat.jsonl.bz2"
    two.write_bytes(open(inputs["bz2"], "rb").read() * 2)
    assert data_bytes(str(two)) == pytest.approx(2 * inputs["size"], rel=0.15)


def test_the_planner_reads_every_member(small):
    """The plan of a 3-member gz (and of a 3-stream bz2) is the plain file's."""
    plain = P.plan(plan_cli.parse_options([small["plain"], *SMALL_ARGS,
                                           "--calibration", os.devnull]))
    for ext in COMPRESS:
        e = P.plan(plan_cli.parse_options([small[1, ext], *SMALL_ARGS,
                                           "--calibration", os.devnull]))
        for key in ("kept_entries", "products", "blocks", "input_bytes"):
            assert e[key] == plain[key], (ext, key)
