"""Build the compiled engine from the one source of both engines.

``dispatcher/_engine/core.py`` is compiled by Cython in pure-Python mode
(its C types in ``core.pxd``) into ``dispatcher._engine.core``; run
uncompiled it is the pure-Python engine.  ``csrc/_fastcall.pyx`` adds the
vectorcall entry points, which only C can express.  Everything else about
the package lives in pyproject.toml.

The compiled engine is required for speed, not for correctness, so, as
frozenlist and multidict do:

- ``DISPATCHER_NO_EXTENSIONS=1`` at build time (or ``--config-settings
  pure-python=true``, which buildconfig/dispatcher_build.py turns into it)
  builds no extension: a ``py3-none-any`` wheel, in seconds;
- interpreters other than CPython get that pure build by themselves (the
  engine's C is written against CPython's C API);
- when the extension cannot be built (no C compiler, say), the package
  installs with the pure-Python engine and says why once, naming the
  compiler that is missing; ``DISPATCHER_REQUIRE_EXTENSION=1`` makes a failed
  build an error instead (CI and the wheel builds set it, so a broken build
  cannot pass as the pure engine).

Release builds carry no debug information (``-g0``, and the linker strips
the symbols on Linux: 5.1 MB unstripped against under 1 MB);
``DISPATCHER_DEBUG_BUILD=1`` keeps both.  The C files Cython generates are
made at build time, next to their sources, and are left out of the sdist
(MANIFEST.in).
"""
import os
import platform
import shutil
import sys
from typing import Optional

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, ExecError, PlatformError

# The spellings dispatcher/_env.py reads (setup.py cannot import the package
# it builds; tests/test_error_hints.py checks the two agree).
FALSE_SPELLINGS = {"", "0", "false", "no", "off"}
TRUE_SPELLINGS = {"1", "true", "yes", "on"}


def env_flag(name: str) -> bool:
    value = os.environ.get(name, "").strip().lower()
    if value not in FALSE_SPELLINGS | TRUE_SPELLINGS:
        print(f"WARNING: {name}={os.environ[name]!r} is read as on; write 1/true/yes/on or 0/false/no/off",
              file=sys.stderr)
    return value not in FALSE_SPELLINGS


REQUIRED = env_flag("DISPATCHER_REQUIRE_EXTENSION")
DEBUG = env_flag("DISPATCHER_DEBUG_BUILD")


def pure_build_reason() -> Optional[str]:
    """Why this build makes no extension, or None to build it."""
    if env_flag("DISPATCHER_NO_EXTENSIONS"):
        return "DISPATCHER_NO_EXTENSIONS is set (or --config-settings pure-python=true)"
    if platform.python_implementation() != "CPython":
        return f"{platform.python_implementation()} is not CPython, whose C API the compiled engine is written against"
    return None


def compile_args() -> list[str]:
    if sys.platform == "win32":
        return ["/O2"]  # MSVC writes no debug information unless asked (/Zi)
    # -g0 last: it overrides the -g in the CFLAGS Python was built with.
    return ["-O3"] + ([] if DEBUG else ["-g0"])


def link_args() -> list[str]:
    # GNU ld and lld strip the symbol table with -s; Apple's linker has no
    # such flag (its debug information lives apart, in .dSYM bundles).
    return ["-s"] if sys.platform.startswith("linux") and not DEBUG else []


headers = ["csrc/dispatcher_bits.h", "dispatcher/_engine/core.pxd"]
cython_options = {
    "language_level": 3,
    # warn.unreachable off: in pure-Python mode, ``if cython.compiled:
    # return ...`` leaves the Python branch after it unreachable when
    # compiled, by design (one warning per such function otherwise).
    "compiler_directives": {"boundscheck": False, "wraparound": False, "cdivision": True, "embedsignature": True,
                            "warn.unreachable": False},
}


def engine_extension(name: str, source: str) -> Extension:
    # Both modules include dispatcher_bits.h and read core.pxd's declarations.
    return Extension(name, sources=[source], include_dirs=["csrc"], depends=headers,
                     extra_compile_args=compile_args(), extra_link_args=link_args())


extensions = [
    engine_extension("dispatcher._engine.core", "dispatcher/_engine/core.py"),
    engine_extension("dispatcher._engine._fastcall", "csrc/_fastcall.pyx"),
]


class BuildFailed(Exception):
    """The C compiler could not build an extension (not a distutils error,
    so that setup() lets it through to the fallback below)."""


def missing_compiler(compiler: object) -> Optional[str]:
    """The C compiler's command when it cannot be found, else None.  Unix
    compilers name it in ``compiler_so`` (``CC``, or the compiler this Python
    was built with); MSVC's absence is a PlatformError of its own."""
    command = getattr(compiler, "compiler_so", None)
    if not command:
        return None
    return None if shutil.which(command[0]) else command[0]


class OptionalBuildExt(build_ext):
    """Cythonize each extension when it is built (so that making an sdist
    needs neither Cython's output nor a compiler), and turn the compiler's
    failures into BuildFailed, named by their cause."""

    def run(self) -> None:
        try:
            super().run()
        except PlatformError as e:  # no compiler for this platform at all (MSVC missing, say)
            raise BuildFailed(f"no C compiler for this platform: {e}") from e

    def build_extensions(self) -> None:
        # Before Cython's minute of work: a compiler that is not there.
        missing = missing_compiler(self.compiler)
        if missing is not None:
            raise BuildFailed(f"no C compiler: {missing!r} is not installed or not on PATH "
                              "(install gcc or clang, or set CC to one)")
        super().build_extensions()

    def build_extension(self, ext: Extension) -> None:
        from Cython.Build import cythonize

        # The errors Cython finds in our sources are bugs, not a missing
        # compiler: they are not caught.
        ext.sources = cythonize([ext], **cython_options)[0].sources
        try:
            super().build_extension(ext)
        except PlatformError as e:
            raise BuildFailed(f"no C compiler for this platform: {e}") from e
        except (CCompilerError, ExecError) as e:
            # Its command line would bury the point; its own output is above.
            raise BuildFailed(f"the C compiler failed building {ext.name} ({e}; its messages are above)") from e


def main() -> None:
    reason = pure_build_reason()
    if reason is not None:
        if REQUIRED:
            sys.exit(f"error: no compiled engine is built ({reason}), and DISPATCHER_REQUIRE_EXTENSION is set")
        print(f"dispatcher: building the pure-Python engine only: {reason}", file=sys.stderr)
        setup()  # no ext_modules: a py3-none-any wheel
        return
    try:
        setup(ext_modules=extensions, cmdclass={"build_ext": OptionalBuildExt})
    except BuildFailed as e:
        if REQUIRED:
            sys.exit(f"error: the compiled engine could not be built: {e}; and DISPATCHER_REQUIRE_EXTENSION is set")
        print("*" * 75, f"WARNING: the compiled engine could not be built: {e}.",
              "dispatcher is installed with its pure-Python engine: the same behaviour, slower",
              "calls (dispatcher.HAS_EXTENSION is False; python -m dispatcher --version says",
              "which engine is in use).  With a C compiler, reinstall to build it; set",
              "DISPATCHER_REQUIRE_EXTENSION=1 to make a failed build an error.",
              "*" * 75, sep="\n", file=sys.stderr)
        setup()


# setuptools runs this file as __main__ (python setup.py, and its PEP 517
# backend alike); tests import it to check its decisions without building.
if __name__ == "__main__":
    main()
