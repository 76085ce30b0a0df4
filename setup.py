"""Build the compiled engine from the one source of both engines.

``dispatcher/_engine/core.py`` is compiled by Cython in pure-Python mode
(its C types in ``core.pxd``) into ``dispatcher._engine.core``; run
uncompiled it is the pure-Python engine.  ``csrc/_fastcall.pyx`` adds the
vectorcall entry points, which only C can express.  Everything else about
the package lives in pyproject.toml.  The compiled engine is required for
speed, not for correctness; ``DISPATCHER_REQUIRE_EXTENSION=1`` turns a
missing build into an import error (CI sets it).
"""
import sys

from Cython.Build import cythonize
from setuptools import Extension, setup

extra_compile_args = ["/O2"] if sys.platform == "win32" else ["-O3"]
headers = ["csrc/dispatcher_bits.h", "dispatcher/_engine/core.pxd"]


def engine_extension(name: str, source: str) -> Extension:
    # Both modules include dispatcher_bits.h and read core.pxd's declarations.
    return Extension(name, sources=[source], include_dirs=["csrc"], depends=headers,
                     extra_compile_args=extra_compile_args)


extensions = [
    engine_extension("dispatcher._engine.core", "dispatcher/_engine/core.py"),
    engine_extension("dispatcher._engine._fastcall", "csrc/_fastcall.pyx"),
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
