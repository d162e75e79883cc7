# Metadata lives in setup.cfg; this file only declares the two optional C
# extensions: the twin of mrcodecs (codecs/mrcodecs/_speedups.c) and the pair
# kernels of mrjobs (mrjobs/csrc/*.c).  optional=True: without a working
# compiler the install still succeeds and the pure-Python (numpy) twins are
# used, with identical bytes -- but never silently: a failed build, or a built
# module that cannot be imported, prints the warning below.
import os
import subprocess
import sys
import warnings

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

try:
    import numpy
except ImportError:  # pyproject.toml lists numpy as a build requirement
    include_dirs = []
else:
    include_dirs = [numpy.get_include()]

WARNING = """
******************************************************************************
WARNING: the C extension %s of mrsparse was not built:
  %s
%s
******************************************************************************
"""
#: what each extension's absence means, and how to check which twin is used
WITHOUT = {
    "_mrcodecs_speedups": (
        "mrsparse works without it: mrcodecs uses its pure-Python twin, which writes\n"
        "and reads identical bytes, several times slower.  Check which one is in use:\n"
        "  python -c \"import mrcodecs._impl as i; print(i.NAME, '-', i.REASON)\""),
    "_mrjobs_speedups": (
        "mrsparse works without it: the blocks strategy's pair kernel and the JSON\n"
        "output use their numpy and Python twins, which give identical results,\n"
        "slower.  Check which one is in use:\n"
        "  python -c \"import mrjobs._c as c; print(c.NAME, '-', c.REASON)\""),
}


#: the C sources of _mrjobs_speedups, one concern a file (mrjobs/csrc/speedups.h
#: lists them), and the headers they share (a change to one rebuilds them all)
MRJOBS_SOURCES = ["mrjobs/csrc/%s.c" % name for name in (
    "module", "arrays", "kernel", "scan", "topk", "select", "merge", "floatrepr", "json_out",
    "json_in", "compact_in")]
MRJOBS_HEADERS = ["mrjobs/csrc/%s.h" % name for name in ("speedups", "select", "kernel",
                                                          "floatrepr")]


class BuildExtWarn(build_ext):
    """build_ext that says loudly when the optional extension fails, and
    checks that what it built can be imported."""

    def build_extension(self, ext):
        if self.compiler.compiler_type == "unix":
            # a function missing from this Python's headers is an error here,
            # not a warning and a crash (or wrong bytes) at run time; no fused
            # multiply-add: the pair kernel's sums must be scipy's, bit for bit
            ext.extra_compile_args = list(ext.extra_compile_args or []) + [
                "-Werror=implicit-function-declaration", "-ffp-contract=off"]
        try:
            super().build_extension(ext)
        except Exception as e:  # any build failure: warn, then let optional=True apply
            self._warn(ext.name, "%s: %s" % (type(e).__name__, e))
            raise
        path = self.get_ext_fullpath(ext.name)
        check = subprocess.run(
            [sys.executable, "-c",
             "import importlib.util as u, sys; s = u.spec_from_file_location(%r, sys.argv[1]); "
             "u.module_from_spec(s)" % ext.name, path],
            capture_output=True, text=True)
        if check.returncode != 0:
            os.remove(path)
            self._warn(ext.name, "built, but importing it failed: %s"
                       % (check.stderr.strip().splitlines() or ["(no message)"])[-1])

    @staticmethod
    def _warn(name, reason):
        text = WARNING % (name, reason, WITHOUT[name])
        sys.stderr.write(text)
        sys.stderr.flush()
        # pip shows a build's output only with -v; warnings raised in the build
        # backend are relayed at the end of the build
        warnings.warn(text, BuildWarning, stacklevel=1)


class BuildWarning(UserWarning):
    """The C extension was not built."""


setup(
    cmdclass={"build_ext": BuildExtWarn},
    ext_modules=[
        Extension(
            "_mrcodecs_speedups",
            ["codecs/mrcodecs/_speedups.c"],
            include_dirs=include_dirs,
            optional=True,
        ),
        Extension("_mrjobs_speedups", MRJOBS_SOURCES, depends=MRJOBS_HEADERS, optional=True),
    ],
)
