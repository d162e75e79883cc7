"""Shared by the benchmark tests: one quick run of a benchmark, reported once.

A module-scoped fixture that raises is re-raised for every test that uses
it (the same traceback once a test); :class:`QuickRun` instead fails the
first test that asks for a failed run, with the run's output, and skips the
others with one line.  No timeout: a slow machine makes the run slow, not
failed.  :meth:`QuickRun.close` removes every file the run wrote.
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


class QuickRun:
    """``python -m bench.<module> --quick --out DIRECTORY [extra...]``, run on first
    use (with ``env`` added to the environment)."""

    def __init__(self, module, directory, *extra, env=None):
        self.module, self.out, self.extra = module, Path(directory), extra
        self.env = dict(os.environ, **(env or {}))
        self._result = self._error = None
        self._reported = False

    def get(self):
        """``(out directory, results JSON, stdout)`` of the run."""
        if self._result is None and self._error is None:
            self._run()
        if self._error is None:
            return self._result
        if not self._reported:
            self._reported = True
            pytest.fail(self._error, pytrace=False)
        pytest.skip("python -m bench.%s --quick failed: reported once, by the first test "
                    "that used it" % self.module)

    def _run(self):
        cmd = [sys.executable, "-m", "bench.%s" % self.module, "--quick", "--out",
               str(self.out)] + [a.format(out=self.out) for a in self.extra]
        proc = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, env=self.env)
        try:
            if proc.returncode != 0:
                raise ValueError("exited %d" % proc.returncode)
            result = json.loads((self.out / ("%s.json" % self.module)).read_text())
        except (OSError, ValueError) as e:
            self._error = "python %s: %s; its output ends:\n%s" % (
                " ".join(cmd[1:]), e, (proc.stdout + proc.stderr)[-4000:])
        else:
            self._result = (self.out, result, proc.stdout)

    def close(self):
        """Remove the output directory and everything in it."""
        shutil.rmtree(self.out, ignore_errors=True)


def quick_run_fixture(module, *extra, env=None):
    """A module-scoped fixture of a :class:`QuickRun`, removed at teardown."""
    @pytest.fixture(scope="module")
    def quick_run(tmp_path_factory):
        run = QuickRun(module, tmp_path_factory.mktemp(module), *extra, env=env)
        try:
            yield run
        finally:
            run.close()
    return quick_run
