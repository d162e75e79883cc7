"""The output on stdout: the part files copied by the kernel, the run's own
temporary part files freed piece by piece as they are sent."""
import os
import random
import threading

import pytest

from mrjobs.dot_products import MRSparseDotProducts
from mrjobs.runtime import epilogue
from tests.jobs_helpers import corpus


def _part(tmp_path, size):
    """A part file of ``size`` bytes of seeded JSON-like lines; its bytes."""
    rng = random.Random(7)
    lines, n = [], 0
    while n < size:
        line = b'"%032x"\t{"%032x": %r}\n' % (rng.getrandbits(128), rng.getrandbits(128),
                                              rng.random())
        lines.append(line)
        n += len(line)
    data = b"".join(lines)[:size]
    path = tmp_path / "part-00000"
    path.write_bytes(data)
    return path, data


@pytest.mark.parametrize("consume", [False, True])
def test_a_part_file_sent_whole_in_pieces(tmp_path, monkeypatch, consume):
    monkeypatch.setattr(epilogue, "SEND_CHUNK", 4096)  # many pieces, some not a page's multiple
    path, data = _part(tmp_path, 50_001)
    with open(tmp_path / "stdout", "wb") as out:
        out.write(b"before\n")  # the copy goes on from where the stream stands
        out.flush()
        assert epilogue._send_file(str(path), out, consume)
    assert (tmp_path / "stdout").read_bytes() == b"before\n" + data
    assert path.stat().st_size == len(data)  # the file keeps its length either way
    left = path.read_bytes()
    if not consume:
        assert left == data
    elif _holes(tmp_path):
        assert left == bytes(len(data))  # every piece sent was freed: zeros
    else:  # a file system without holes: the copy goes on without freeing
        assert left == data


def _holes(tmp_path):
    """Whether ``tmp_path``'s file system frees a file's range (punches a hole)."""
    probe = tmp_path / "probe"
    probe.write_bytes(b"x" * 8192)
    fd = os.open(probe, os.O_RDWR)
    try:
        return epilogue._free_range(fd, 0, 8192) and probe.read_bytes() == bytes(8192)
    finally:
        os.close(fd)


def test_a_part_file_sent_to_a_pipe(tmp_path, monkeypatch):
    monkeypatch.setattr(epilogue, "SEND_CHUNK", 1000)
    path, data = _part(tmp_path, 200_000)  # more than a pipe holds: the reader must drain it
    r, w = os.pipe()
    got = []

    def drain():
        with open(r, "rb") as f:
            got.append(f.read())

    reader = threading.Thread(target=drain)
    reader.start()
    with open(w, "wb") as out:
        assert epilogue._send_file(str(path), out, True)
    reader.join()
    assert got == [data]
    assert path.read_bytes() == data  # a pipe holds the file's pages: none freed


def _ran(tmp_path, *args):
    """A runner after a small local run (entered: its temp dir still there)."""
    path = tmp_path / "small.jsonl"
    path.write_text("\n".join(corpus(n=30)) + "\n")
    # (its temp dir under tmp_path: the one kept by --cleanup NONE goes with it)
    job = MRSparseDotProducts(["--no-conf", "-r", "local", "--local-tmp-dir",
                               str(tmp_path / "tmp"), str(path), *args])
    runner = job.make_runner()
    runner.__enter__()
    runner.run()
    return runner


@pytest.mark.slow
def test_only_the_runs_own_temporary_output_is_consumed(tmp_path):
    runner = _ran(tmp_path)
    try:
        assert epilogue._consumable(runner)  # the default cleanup removes the temp dir
        runner._output_dir = str(tmp_path / "elsewhere")  # as --output-dir's commit leaves it
        assert not epilogue._consumable(runner)
    finally:
        runner.__exit__(None, None, None)
    kept = _ran(tmp_path, "--cleanup", "NONE")
    try:
        assert not epilogue._consumable(kept)  # the user keeps the temp files: left whole
        assert kept.get_output_dir().startswith(kept._get_local_tmp_dir())
    finally:
        kept.__exit__(None, None, None)
