"""``PythonDispatcher``: watch the dispatcher compute an operator's table.

A port of PyTorch 2.13's ``torch/_python_dispatcher.py``, the teaching tool:
register dummy kernels (``fn_<key>``) on a few keys of a test operator
``__test__::foo`` and print which kernel every runtime key ends up with::

    d = PythonDispatcher()
    d.register(["CPU", "XLA", "CompositeImplicitAutograd"])
    print(d.dispatchTable())

It offers one example key per use case (PyTorch's choice): CPU/AutogradCPU
(in-tree backends with their own autograd kernels), FPGA/AutogradOther (in-tree
backends sharing AutogradOther), XLA/AutogradXLA and Lazy/AutogradLazy
(out-of-tree backends), and the alias keys CompositeExplicitAutograd,
Autograd and CompositeImplicitAutograd.  Its outputs are PyTorch's character
for character.

Beyond PyTorch 2.13 it also takes the seed's names: ``Math`` and
``DefaultBackend`` (the old names of CompositeImplicitAutograd and
CompositeExplicitAutograd, registered as those keys) and ``QuantizedCPU``
(another AutogradOther backend, shown in the table once registered).
"""
from __future__ import annotations

import re
from typing import Sequence

from .standard_fallbacks import STANDARD_FALLBACK_DEBUG
from .compat import torch_C as C

__all__ = ["PythonDispatcher"]

# Backend fallback texts dispatchTable() leaves out: PyTorch's framework
# fallbacks (its regex), and this package's standard ones.
_FALLBACK_TEXT = re.compile(
    r"registered at .*FallbackKernel\.cpp.*(\[)" + "|" + rf"(?:fallthrough )?{re.escape(STANDARD_FALLBACK_DEBUG)}.*(\[)"
)


class PythonDispatcher:
    namespace = "__test__"
    name = "foo"
    # fmt: off
    runtime_keys = [
        "CPU", "AutogradCPU",
        "FPGA", "AutogradOther",
        "XLA", "AutogradXLA",
        "Lazy", "AutogradLazy",
    ]
    # fmt: on
    alias_keys = [
        "CompositeExplicitAutograd",
        "Autograd",
        "CompositeImplicitAutograd",
    ]
    supported_keys = runtime_keys + alias_keys
    # The seed's names (see the module docstring); keys() does not list them.
    legacy_names = {"Math": "CompositeImplicitAutograd", "DefaultBackend": "CompositeExplicitAutograd"}
    extra_runtime_keys = ["QuantizedCPU"]

    def __init__(self) -> None:
        self._qualname = f"{self.namespace}::{self.name}"
        self.ref = C._dispatch_library("FRAGMENT", self.namespace, "")
        self.ref.def_(f"{self.name}(Tensor x) -> Tensor")
        self._extra_registered: list[str] = []

    def keys(self) -> list[str]:
        """The dispatch keys you can register kernels to."""
        return self.supported_keys

    def register(self, dispatchKeys: Sequence[str]) -> None:
        """Register a kernel ``fn_<key>`` to each of ``dispatchKeys``.

        Duplicates are refused (overriding is not what this tool shows), and
        so is registering both CompositeImplicitAutograd and
        CompositeExplicitAutograd (codegen forbids it).  Keys are registered
        in order; an unsupported one raises, leaving the ones before it
        registered, as in PyTorch.
        """
        keys = [self.legacy_names.get(k, k) for k in dispatchKeys]
        # PyTorch's two checks, then duplicates only legacy names reveal
        # (["Math", "CompositeImplicitAutograd"]).
        if len(set(dispatchKeys)) != len(dispatchKeys):
            raise RuntimeError(f"Overridden is not allowed but found duplicates in {dispatchKeys}.")
        if "CompositeImplicitAutograd" in keys and "CompositeExplicitAutograd" in keys:
            raise RuntimeError(
                "Registration to both CompositeImplicitAutograd and CompositeExplicitAutograd is not allowed."
            )
        if len(set(keys)) != len(keys):
            raise RuntimeError(f"Overridden is not allowed but found duplicates in {dispatchKeys}.")
        for key in keys:
            if key not in self.supported_keys and key not in self.extra_runtime_keys:
                raise RuntimeError(f"{key} is not supported, please select a dispatch key in {self.supported_keys}.")
            self.ref.impl_t_t(self.name, dispatch=key, debug="fn_" + key)
            if key in self.extra_runtime_keys:
                self._extra_registered.append(key)

    def _format_line(self, key: str, kernel: str) -> str:
        return f"{key:<15} {kernel}\n"

    def _format_header(self, header: str) -> str:
        return f"\n{header}\n" + self._format_line("key", "kernel") + "---------------------------\n"

    def rawRegistrations(self) -> str:
        """The operator's dump (``_dispatch_dump``), for debugging."""
        return C._dispatch_dump(self._qualname)

    def rawDispatchTable(self) -> str:
        """The operator's computed table (``_dispatch_dump_table``), for debugging."""
        return C._dispatch_dump_table(self._qualname)

    def registrations(self) -> str:
        """The kernels registered, to runtime and alias keys."""
        output = self._format_header("Registered Kernels")
        shown = self.supported_keys + self._extra_registered
        for line in self.rawRegistrations().split("\n"):
            first = line.split(":")[0]
            if any(first.startswith(k) for k in shown):
                kernel = line.split("::")[0].split(" ")[1]
                output += self._format_line(first, kernel)
        return output

    def dispatchTable(self) -> str:
        """The kernel each runtime key dispatches to (alias registrations
        decoded into the runtime keys they serve)."""
        output = self._format_header("Computed Dispatch Table")
        shown = self.runtime_keys + self._extra_registered
        for line in self.rawDispatchTable().split("\n"):
            k = line.split(":")[0]
            if k in shown:
                entry = _FALLBACK_TEXT.sub("[", line)
                output += self._format_line(k, entry.split(": ")[1])
        return output
