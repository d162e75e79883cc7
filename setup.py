# Metadata lives in setup.cfg; this file only declares the optional C twin of
# mrcodecs.framing. optional=True: without a compiler the pure-Python twin is used.
from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "_mrcodecs_speedups",
            ["codecs/mrcodecs/_speedups.c"],
            optional=True,
        )
    ]
)
