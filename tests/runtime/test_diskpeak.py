"""DiskPeak: the peak bytes of a directory tree, sampled while files come and
go (real files in a temporary directory)."""
import os
import shutil
import threading

import pytest

from mrjobs.runtime.diskpeak import DiskPeak, tree_size


def write(path, size):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(b"x" * size)


def test_tree_size_counts_regular_files_in_subfolders_and_not_symlinks(tmp_path):
    write(str(tmp_path / "a"), 100)
    write(str(tmp_path / "sub" / "deeper" / "b"), 250)
    os.symlink(str(tmp_path / "a"), str(tmp_path / "link"))
    assert tree_size(str(tmp_path)) == 350


def test_a_missing_tree_counts_zero(tmp_path):
    assert tree_size(str(tmp_path / "not-yet")) == 0
    assert tree_size(str(tmp_path / "file")) == 0  # missing file: nothing to walk


def test_the_peak_is_at_least_a_size_that_stayed_for_many_samples(tmp_path):
    root = str(tmp_path / "tmp")  # appears only after sampling has begun
    with DiskPeak(root, every=0.01) as disk:
        write(os.path.join(root, "step-1", "part-00000"), 40000)
        write(os.path.join(root, "step-1", "part-00001"), 60000)
        seen = disk.samples
        while disk.samples < seen + 3:  # present across several full walks
            threading.Event().wait(0.01)
        shutil.rmtree(os.path.join(root, "step-1"))
        write(os.path.join(root, "step-2", "part-00000"), 1000)
    assert disk.peak >= 100000
    assert disk.last == 1000  # the last sample, taken on leaving, sees the end state
    assert disk.samples >= 5


def test_files_vanishing_during_the_walks_do_not_break_it(tmp_path):
    root = str(tmp_path)
    stop = threading.Event()

    def churn():
        i = 0
        while not stop.is_set():
            folder = os.path.join(root, "d%d" % (i % 5))
            write(os.path.join(folder, "f"), 10)
            shutil.rmtree(folder, ignore_errors=True)
            i += 1

    writer = threading.Thread(target=churn)
    with DiskPeak(root, every=0.001) as disk:
        writer.start()
        while disk.samples < 50:
            threading.Event().wait(0.005)
        stop.set()
        writer.join()
    assert disk.samples >= 50
    assert 0 <= disk.peak <= 50  # never more than five 10-byte files at once


def test_a_peak_at_either_end_is_seen_whatever_the_interval(tmp_path):
    write(str(tmp_path / "before"), 500)
    with DiskPeak(str(tmp_path), every=3600) as disk:
        os.remove(str(tmp_path / "before"))
        write(str(tmp_path / "after"), 700)
    assert disk.peak == 700
    assert disk.samples == 2


def test_it_refuses_a_nonpositive_interval_and_a_second_start(tmp_path):
    with pytest.raises(ValueError):
        DiskPeak(str(tmp_path), every=0)
    disk = DiskPeak(str(tmp_path), every=1).start()
    with pytest.raises(RuntimeError):
        disk.start()
    disk.stop()
    assert disk.stop() == 0  # stopping twice is harmless
