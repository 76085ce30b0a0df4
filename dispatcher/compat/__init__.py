"""Compatibility layers with PyTorch's own APIs.

``dispatcher.compat.torch_C`` has the dispatcher functions of ``torch._C``
(``_dispatch_library``, ``_dispatch_dump``, ``_dispatch_key_parse``, ...), so
that code written against them runs after changing one import line::

    import dispatcher.compat.torch_C as C   # was: import torch._C as C
"""
from . import torch_C

__all__ = ["torch_C"]
