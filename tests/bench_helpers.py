"""Shared by the benchmark tests: run a benchmark module in its quick mode."""
import json
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def run_quick(module, name, out):
    """Run ``python -m bench.<module> --quick --out OUT``; return (out, results, stdout)."""
    proc = subprocess.run(
        [sys.executable, "-m", "bench.%s" % module, "--quick", "--out", str(out)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out, json.loads((out / ("%s.json" % name)).read_text()), proc.stdout
