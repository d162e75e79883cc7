# Metadata lives in setup.cfg; this file only declares the optional C twin of
# mrcodecs' framing and vector records. optional=True: without a compiler the
# pure-Python code is used, with identical bytes.
from setuptools import Extension, setup

try:
    import numpy
except ImportError:  # pyproject.toml lists numpy as a build requirement
    include_dirs = []
else:
    include_dirs = [numpy.get_include()]

setup(
    ext_modules=[
        Extension(
            "_mrcodecs_speedups",
            ["codecs/mrcodecs/_speedups.c"],
            include_dirs=include_dirs,
            optional=True,
        )
    ]
)
