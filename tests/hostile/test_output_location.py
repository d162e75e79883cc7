"""An ``--output-dir`` the commit cannot rename into place is refused before
any work (issue 44, item 3): a mount point, a parent on a read-only
filesystem, a parent this user cannot write.

Each run is a real launcher process (``python -m mrjobs.dot_products``) on
the inline or local runner, with a temporary directory of its own, so the
test sees that nothing ran (no step began, no counters) and nothing was left
behind.  Before the fix each of these ran the whole job and failed at the
commit ("Device or resource busy", "Read-only file system").

Mount points: ``/proc`` is one on every Linux machine; ``/dev/shm`` on most;
a tmpfs of the test's own where it may mount one (root with CAP_SYS_ADMIN).
Unwritable parents: ``/sys`` (sysfs: no new entries for anyone), a directory
of mode 0555 (as root the job runs without the capabilities that pass
permission checks, where ``setpriv`` can drop them), a read-only tmpfs (where
the test may mount one).
"""
import os
import shutil
import subprocess
import sys
import uuid

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SAMPLE = os.path.join(REPO, "examples", "sample.jsonl")
LINUX = sys.platform.startswith("linux")
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


#: root without the capabilities that pass permission checks (``setpriv``),
#: so that a directory of mode 0555 stops it as it stops any other user
NO_OVERRIDE = ["setpriv"] + ["--%s=-dac_override,-dac_read_search,-fowner" % s
                             for s in ("inh-caps", "bounding-set")]


def refused(tmp_path, output_dir, *extra, runner="inline", prefix=()):
    """Run the job onto ``output_dir``; check that it was refused before any
    work and left nothing in its temporary directory.  Returns the message."""
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    env = dict(os.environ, PYTHONPATH=REPO, TMPDIR=str(tmp))
    argv = [sys.executable, "-m", "mrjobs.dot_products", "-r", runner, SAMPLE, "--measure",
            "cosine", "--top-k", "3", "--output-dir", str(output_dir)] + list(extra)
    proc = subprocess.run(list(prefix) + argv, env=env, cwd=str(tmp_path), text=True,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    # the plan's line, then the refusal: no step began, nothing was counted
    assert lines[-1].startswith("mrsparse: error: --output-dir %s " % output_dir), proc.stderr
    for sign in ("Running step", "Counters", "Traceback", "mrsparse:"):
        assert sign not in "\n".join(lines[:-1]), proc.stderr
    assert os.listdir(tmp) == []
    return lines[-1]


def left_beside(path):
    """What a run onto ``path`` can leave beside it: its staged output, a
    probe, or its output kept after a failed commit."""
    parent, name = os.path.split(str(path).rstrip("/"))
    return [n for n in os.listdir(parent) if n.lstrip(".").startswith("%s.mrsparse-" % name)]


# -- mount points ---------------------------------------------------------------

@pytest.mark.skipif(not (LINUX and os.path.ismount("/proc")), reason="no /proc mount")
@pytest.mark.parametrize("runner", ["inline", "local"])
def test_a_mount_point_is_refused_before_the_work(tmp_path, runner):
    # /proc is not empty: only --overwrite-output would replace it, and a
    # rename cannot (before the fix: the whole run, then "Device or resource busy")
    message = refused(tmp_path, "/proc", "--overwrite-output", runner=runner)
    assert message == (
        "mrsparse: error: --output-dir /proc is a mount point, which the job cannot "
        "replace (it writes its output beside it and renames it into place at the end): "
        "give a directory inside it, e.g. /proc/output")
    assert left_beside("/proc") == []


@pytest.mark.skipif(not (os.path.ismount("/dev/shm") and os.path.isdir("/dev/shm")
                         and not os.listdir("/dev/shm")),
                    reason="/dev/shm is not an empty mount point here")
def test_an_empty_mount_point_is_refused(tmp_path):
    # empty, so nothing else stops it: what a user's first try looks like
    message = refused(tmp_path, "/dev/shm")
    assert "--output-dir /dev/shm is a mount point" in message
    assert message.endswith("give a directory inside it, e.g. /dev/shm/output")
    assert os.listdir("/dev/shm") == []
    assert left_beside("/dev/shm") == []


def _mount_tmpfs(path, *options):
    path.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(("size=1m",) + options),
                           "tmpfs", str(path)], capture_output=True, text=True)
    if proc.returncode:
        pytest.skip("cannot mount a tmpfs here: %s" % proc.stderr.strip())


@pytest.fixture
def own_tmpfs(tmp_path):
    """A tmpfs mounted for the test (skips where that is not allowed);
    ``mount(options...)`` mounts it, the fixture unmounts it."""
    if not (LINUX and ROOT):
        pytest.skip("mounting a tmpfs needs root")
    mounted = []

    def mount(*options):
        path = tmp_path / ("mnt-%d" % len(mounted))
        _mount_tmpfs(path, *options)
        mounted.append(path)
        return path

    yield mount
    for path in mounted:
        subprocess.run(["umount", str(path)], check=True)


@pytest.mark.slow
def test_a_tmpfs_of_its_own_is_refused_as_a_mount_point(tmp_path, own_tmpfs):
    mnt = own_tmpfs()
    message = refused(tmp_path, mnt)
    assert "--output-dir %s is a mount point" % mnt in message
    assert os.listdir(mnt) == []
    # a directory inside it is what the message proposes, and it works
    proc = subprocess.run([sys.executable, "-m", "mrjobs.dot_products", SAMPLE, "-q",
                           "--measure", "cosine", "--top-k", "3", "--output-dir",
                           str(mnt / "output")], env=dict(os.environ, PYTHONPATH=REPO),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(mnt / "output")) == ["_MANIFEST.json", "_SUCCESS", "part-00000"]


# -- parents where nothing can be made -----------------------------------------

def test_a_read_only_filesystem_is_refused_before_the_work(tmp_path, own_tmpfs):
    mnt = own_tmpfs("ro")
    message = refused(tmp_path, mnt / "out")
    assert message == (
        "mrsparse: error: --output-dir %s/out cannot be written: making and renaming a "
        "directory in %s failed (Read-only file system), and the job writes its output "
        "there and renames it into place at the end: choose a directory you can write to"
        % (mnt, mnt))


@pytest.mark.skipif(not (LINUX and os.path.isdir("/sys")), reason="no /sys")
def test_a_parent_on_sysfs_is_refused_before_the_work(tmp_path):
    # sysfs takes no new entries from anyone, root included (EPERM; EACCES
    # for other users): an unwritable parent every Linux machine has
    out = "/sys/mrsparse-out-%s" % uuid.uuid4().hex[:8]
    message = refused(tmp_path, out)
    assert message.startswith("mrsparse: error: --output-dir %s cannot be written: making "
                              "and renaming a directory in /sys failed (" % out)
    assert message.endswith("), and the job writes its output there and renames it into "
                            "place at the end: choose a directory you can write to")
    assert not os.path.exists(out)


@pytest.mark.skipif(ROOT and not shutil.which("setpriv"),
                    reason="root passes permission checks, and there is no setpriv to "
                    "run the job without that capability")
@pytest.mark.parametrize("depth", ["out", "missing/out"])
def test_a_parent_without_write_permission_is_refused(tmp_path, depth):
    # also where the parent is still to be made (the run would make it in
    # the read-only directory)
    parent = tmp_path / "read-only"
    parent.mkdir()
    parent.chmod(0o555)
    try:
        message = refused(tmp_path, parent / depth, prefix=NO_OVERRIDE if ROOT else ())
        assert message == (
            "mrsparse: error: --output-dir %s/%s cannot be written: making and renaming a "
            "directory in %s failed (Permission denied), and the job writes its output "
            "there and renames it into place at the end: choose a directory you can write "
            "to" % (parent, depth, parent))
        assert os.listdir(parent) == []
    finally:
        parent.chmod(0o755)


def test_a_writable_location_leaves_no_probe_behind(tmp_path):
    # the probe (a directory made, renamed and removed) is gone; the output is
    # in place, and nothing else beside it
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "mrjobs.dot_products", SAMPLE, "-q",
                           "--measure", "cosine", "--top-k", "3", "--output-dir", str(out)],
                          env=dict(os.environ, PYTHONPATH=REPO, TMPDIR=str(tmp_path)),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["out"]
    assert sorted(os.listdir(out)) == ["_MANIFEST.json", "_SUCCESS", "part-00000"]
