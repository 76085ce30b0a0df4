"""The build backend: setuptools' own, plus two settings of this project.

pyproject.toml names this module as the build backend (``backend-path``),
as frozenlist and multidict do with theirs.  What it adds:

- ``--config-settings pure-python=true`` (``pip install``, ``pip wheel``,
  ``python -m build -C pure-python=true``) builds no extension, as
  ``DISPATCHER_NO_EXTENSIONS=1`` in the build's environment does (setup.py
  reads that); such a build does not even install Cython.
- An editable install is setuptools' "compat" mode unless told otherwise
  (``-C editable_mode=...``): a path entry for the checkout, which type
  checkers (mypy, pyright) follow, where the default mode's import hook
  hides the package from them.

Every other setting goes to setuptools unchanged.
"""
import os
import platform
from typing import Any, Optional

from setuptools import build_meta as _setuptools
from setuptools.build_meta import (  # noqa: F401  (the hooks this backend does not change)
    build_sdist,
    get_requires_for_build_sdist,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

ConfigSettings = Optional[dict[str, Any]]

PURE_SETTING = "pure-python"
CYTHON = "Cython>=3.0"
FALSE_SPELLINGS = {"", "0", "false", "no", "off"}


def _own_settings(config_settings: ConfigSettings) -> dict[str, Any]:
    """setuptools' settings, after taking ours out of them (and acting on them)."""
    settings = dict(config_settings or {})
    pure = settings.pop(PURE_SETTING, None)
    if pure is not None:
        if str(pure).strip().lower() in FALSE_SPELLINGS:
            os.environ.pop("DISPATCHER_NO_EXTENSIONS", None)
        else:
            os.environ["DISPATCHER_NO_EXTENSIONS"] = "1"
    return settings


def _builds_extension() -> bool:
    return (platform.python_implementation() == "CPython"
            and os.environ.get("DISPATCHER_NO_EXTENSIONS", "").strip().lower() in FALSE_SPELLINGS)


def get_requires_for_build_wheel(config_settings: ConfigSettings = None) -> list[str]:
    settings = _own_settings(config_settings)
    extra = [CYTHON] if _builds_extension() else []
    return list(_setuptools.get_requires_for_build_wheel(settings)) + extra


def get_requires_for_build_editable(config_settings: ConfigSettings = None) -> list[str]:
    settings = _own_settings(config_settings)
    extra = [CYTHON] if _builds_extension() else []
    return list(_setuptools.get_requires_for_build_editable(settings)) + extra


def build_wheel(wheel_directory: str, config_settings: ConfigSettings = None,
                metadata_directory: Optional[str] = None) -> str:
    return _setuptools.build_wheel(wheel_directory, _own_settings(config_settings), metadata_directory)


def build_editable(wheel_directory: str, config_settings: ConfigSettings = None,
                   metadata_directory: Optional[str] = None) -> str:
    settings = _own_settings(config_settings)
    if "editable_mode" not in settings and "editable-mode" not in settings:
        settings["editable_mode"] = "compat"
    return _setuptools.build_editable(wheel_directory, settings, metadata_directory)
