"""Check an sdist: it holds the engine's Cython sources and no generated C or
compiled module; the licences, the build backend, the tests, the docs and
the examples.

    python .ci/check_sdist.py dist/c10_dispatcher-X.tar.gz
"""
import sys
import tarfile

REQUIRED = ["pyproject.toml", "setup.py", "README.md", "MANIFEST.in", "csrc/_fastcall.pyx", "csrc/dispatcher_bits.h",
            "dispatcher/__init__.py", "dispatcher/_engine/core.py", "dispatcher/_engine/core.pxd",
            "dispatcher/_engine/_fastcall.pyi", "dispatcher/py.typed", "dispatcher/catalog/torch-2.13.txt",
            "LICENSE", "NOTICE", "CHANGELOG.md", "buildconfig/dispatcher_build.py", "tests/conftest.py",
            "tests/golden/keys_golden.json", "benchmarks/conftest.py", "docs/conf.py", "docs/index.md",
            "examples/privateuse1_backend.py"]
FORBIDDEN = (".c", ".so", ".pyd", ".html", ".pyc")


def main(path: str) -> int:
    with tarfile.open(path) as sdist:
        # Every member sits under the sdist's top folder (c10_dispatcher-X/).
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    missing = [name for name in REQUIRED if name not in names]
    generated = sorted(name for name in names if name.endswith(FORBIDDEN))
    for name in missing:
        print(f"{path}: missing {name}")
    for name in generated:
        print(f"{path}: holds the generated {name}")
    if not missing and not generated:
        print(f"{path}: {len(names)} files, the Cython sources and no generated ones")
    return 1 if missing or generated else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
