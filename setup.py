# Metadata lives in setup.cfg; this file only declares the optional C twin of
# mrcodecs (codecs/mrcodecs/_speedups.c).  optional=True: without a working
# compiler the install still succeeds and the pure-Python twin is used, with
# identical bytes -- but never silently: a failed build, or a built module
# that cannot be imported, prints the warning below.
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
WARNING: the C extension _mrcodecs_speedups of mrsparse was not built:
  %s
mrsparse works without it: mrcodecs uses its pure-Python twin, which writes
and reads identical bytes, several times slower.  Check which one is in use:
  python -c "import mrcodecs._impl as i; print(i.NAME, '-', i.REASON)"
******************************************************************************
"""


class BuildExtWarn(build_ext):
    """build_ext that says loudly when the optional extension fails, and
    checks that what it built can be imported."""

    def build_extension(self, ext):
        if self.compiler.compiler_type == "unix":
            # a function missing from this Python's headers is an error here,
            # not a warning and a crash (or wrong bytes) at run time
            ext.extra_compile_args = list(ext.extra_compile_args or []) + [
                "-Werror=implicit-function-declaration"]
        try:
            super().build_extension(ext)
        except Exception as e:  # any build failure: warn, then let optional=True apply
            self._warn("%s: %s" % (type(e).__name__, e))
            raise
        path = self.get_ext_fullpath(ext.name)
        check = subprocess.run(
            [sys.executable, "-c",
             "import importlib.util as u, sys; s = u.spec_from_file_location(%r, sys.argv[1]); "
             "u.module_from_spec(s)" % ext.name, path],
            capture_output=True, text=True)
        if check.returncode != 0:
            os.remove(path)
            self._warn("built, but importing it failed: %s"
                       % (check.stderr.strip().splitlines() or ["(no message)"])[-1])

    @staticmethod
    def _warn(reason):
        sys.stderr.write(WARNING % reason)
        sys.stderr.flush()
        # pip shows a build's output only with -v; warnings raised in the build
        # backend are relayed at the end of the build
        warnings.warn(WARNING % reason, BuildWarning, stacklevel=1)


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
        )
    ],
)
