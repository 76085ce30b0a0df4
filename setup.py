"""Build the compiled core ``dispatcher._C`` from ``csrc/_C.pyx``.

Everything else about the package lives in pyproject.toml.  The extension is
required for speed, not for correctness: ``dispatcher/_core_py.py`` is a
pure-Python twin, and ``DISPATCHER_REQUIRE_EXTENSION=1`` turns a missing build
into an import error (CI sets it).
"""
import sys

from Cython.Build import cythonize
from setuptools import Extension, setup

extra_compile_args = ["/O2"] if sys.platform == "win32" else ["-O3"]

extensions = [
    Extension(
        "dispatcher._C",
        sources=["csrc/_C.pyx"],
        include_dirs=["csrc"],
        depends=["csrc/dispatcher_bits.h", "csrc/_boxing.pxi"],
        extra_compile_args=extra_compile_args,
    )
]

setup(
    ext_modules=cythonize(
        extensions,
        language_level=3,
        compiler_directives={
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "embedsignature": True,
        },
    )
)
