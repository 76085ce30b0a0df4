"""Build the compiled engine from the one source of both engines.

``dispatcher/_engine/core.py`` is compiled by Cython in pure-Python mode
(its C types in ``core.pxd``) into ``dispatcher._engine.core``; run
uncompiled it is the pure-Python engine.  ``csrc/_fastcall.pyx`` adds the
vectorcall entry points, which only C can express.  Everything else about
the package lives in pyproject.toml.

The compiled engine is required for speed, not for correctness.  When it
cannot be built (no C compiler, say), the package installs with the
pure-Python engine and says so once, as frozenlist and multidict do;
``DISPATCHER_REQUIRE_EXTENSION=1`` makes a failed build an error instead
(CI and the wheel builds set it, so a broken build cannot pass as the pure
engine).  The C files Cython generates are made at build time, next to their
sources, and are left out of the sdist (MANIFEST.in).
"""
import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, ExecError, PlatformError

REQUIRED = os.environ.get("DISPATCHER_REQUIRE_EXTENSION", "") not in ("", "0")

extra_compile_args = ["/O2"] if sys.platform == "win32" else ["-O3"]
headers = ["csrc/dispatcher_bits.h", "dispatcher/_engine/core.pxd"]
cython_options = {
    "language_level": 3,
    "compiler_directives": {"boundscheck": False, "wraparound": False, "cdivision": True, "embedsignature": True},
}


def engine_extension(name: str, source: str) -> Extension:
    # Both modules include dispatcher_bits.h and read core.pxd's declarations.
    return Extension(name, sources=[source], include_dirs=["csrc"], depends=headers,
                     extra_compile_args=extra_compile_args)


extensions = [
    engine_extension("dispatcher._engine.core", "dispatcher/_engine/core.py"),
    engine_extension("dispatcher._engine._fastcall", "csrc/_fastcall.pyx"),
]


class BuildFailed(Exception):
    """The C compiler could not build an extension (not a distutils error,
    so that setup() lets it through to the fallback below)."""


class OptionalBuildExt(build_ext):
    """Cythonize each extension when it is built (so that making an sdist
    needs neither Cython's output nor a compiler), and turn the compiler's
    failures into BuildFailed."""

    def run(self) -> None:
        try:
            super().run()
        except PlatformError as e:  # no compiler for this platform at all
            raise BuildFailed(e) from e

    def build_extension(self, ext: Extension) -> None:
        from Cython.Build import cythonize

        # The errors Cython finds in our sources are bugs, not a missing
        # compiler: they are not caught.
        ext.sources = cythonize([ext], **cython_options)[0].sources
        try:
            super().build_extension(ext)
        except PlatformError as e:
            raise BuildFailed(e) from e
        except (CCompilerError, ExecError) as e:
            # Its command line would bury the point; its own output is above.
            raise BuildFailed(f"the C compiler failed building {ext.name}") from e


try:
    setup(ext_modules=extensions, cmdclass={"build_ext": OptionalBuildExt})
except BuildFailed as e:
    if REQUIRED:
        sys.exit(f"error: the compiled engine could not be built ({e}), and DISPATCHER_REQUIRE_EXTENSION is set")
    print("*" * 75, f"WARNING: the compiled engine could not be built ({e}).",
          "dispatcher is installed with its pure-Python engine: the same behaviour, slower",
          "calls (dispatcher.HAS_EXTENSION is False).  With a C compiler, reinstall to",
          "build it; set DISPATCHER_REQUIRE_EXTENSION=1 to make a failed build an error.",
          "*" * 75, sep="\n", file=sys.stderr)
    setup()
