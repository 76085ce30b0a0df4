"""torch's older CustomOp API (``torch._custom_op``), which torch 2.13 still ships,
deprecated for ``torch.library.custom_op``: the ``custom_op`` decorator making
``CustomOp`` objects (impl.py) and the autograd kernel built from their
``impl_save_for_backward``/``impl_backward`` formulas (autograd.py).  Its
function-style face, ``torch._custom_ops``, is dispatcher/_custom_ops.py.

Kept because code written for it (PyTorch's own tests among it) ports by
changing its imports; new code should use ``dispatcher.library.custom_op``.
"""
