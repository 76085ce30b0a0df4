"""The Meta backend fallback: an operator with no Meta kernel (nor a fake
implementation, which is one here) refuses Meta tensors with torch's error.

torch registers it for every operator of the process (ATen's
MetaFallbackKernel.cpp, ``TORCH_LIBRARY_IMPL(_, Meta, m)``), so that a call on
Meta tensors reaching no kernel names the operator and what to register,
before any error callback of the operator (the older CustomOp API's) is asked.
backend_fallbacks.install() registers it with the prototype's other fallbacks.
"""
from __future__ import annotations

from typing import Any

__all__ = ["meta_fallback"]


def meta_fallback(op: Any, keyset: Any, stack: list[Any]) -> None:
    """A boxed fallback: it never runs the operator, only raises (torch's text)."""
    raise NotImplementedError(
        f"{op.name()}: attempted to run this operator with Meta tensors, but there was no "
        "fake impl or Meta kernel registered. You may have run into this message "
        "while using an operator with PT2 compilation APIs (torch.compile/torch.export); "
        "in order to use this operator with those APIs you'll need to add a fake impl. "
        "Please see the following for next steps:  "
        "https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html"
    )
