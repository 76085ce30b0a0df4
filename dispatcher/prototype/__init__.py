"""A small numpy-backed tensor library built only on the dispatcher's public API.

Its operators are torch's: ``x + y`` calls ``aten::add.Tensor``, ``x @ w``
``aten::matmul``, ``ones(2)`` ``aten::ones`` (``dispatcher.ops.aten``, from
the catalog of torch 2.13's schemas).  The prototype defines none: it
registers kernels for the few dozen it uses, at the keys torch 2.13 has
kernels for them, and shows what the dispatcher is for, one dispatch key at a time:

==========================  ==========================================================
CPU                         numpy kernels (kernels_cpu.py)
Meta                        shapes and dtypes without data (meta.py, shapes.py)
CompositeImplicitAutograd   torch's decompositions: matmul, reshape, to (composite.py)
CompositeExplicitAutograd   kernels for every backend: factories as "allocate, then
                            fill", copies, sum, mean, views of a new shape (composite.py)
BackendSelect               factories pick a backend from device and dtype (the
                            catalog's kernels, as torch generates them: factories.py)
ADInplaceOrView             version counters and view bases (inplace_or_view.py)
Autograd                    the graph and backward() (autograd.py, derivatives.py)
PrivateUse1 ("toy")         a new device with a CPU fallback (toy_device.py)
FuncTorchBatched            vmap: rules, decompositions, a loop fallback (vmap.py)
Python (a dispatch mode)    record and replay every call (tracing.py)
==========================  ==========================================================

There are three ways to give tensors a behaviour, as in PyTorch:

* per key: a kernel of an operator, or a backend fallback serving them all,
  at a dispatch key the tensors carry (every row above but the last);
* a dispatch mode: a ``TorchDispatchMode`` sees every call of its thread
  while it is active, whatever the tensors (tracing.py's ``Tracer``)::

      class Log(dispatcher.TorchDispatchMode):
          def __torch_dispatch__(self, func, types, args=(), kwargs=None):
              print(func)
              return func(*args, **(kwargs or {}))

      with Log():
          ones(2).exp()           # aten.ones.default, then aten.exp.default

* a tensor subclass: a ``TensorBase`` subclass that defines
  ``__torch_dispatch__`` carries the Python keys, and sees every call on its
  tensors (tests/test_python_key_examples.py has a wrapper)::

      class Wrapper(dispatcher.TensorBase):
          def __init__(self, elem):
              super().__init__(elem.key_set)
              self.elem = elem

          @classmethod
          def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
              args = [a.elem if isinstance(a, Wrapper) else a for a in args]
              return Wrapper(func(*args, **(kwargs or {})))

  or, as torch code writes it, a ``Tensor`` subclass made by
  ``Tensor._make_wrapper_subclass`` or ``Tensor._make_subclass`` in its
  ``__new__`` (subclassing.py): autograd records the subclass, its handler
  can reach the default one with ``super()``, and python_dispatch.py has
  torch.utils._python_dispatch's helpers (``no_dispatch``,
  ``return_and_correct_aliasing``, ...).  docs/subclass_zoo.md says which
  public examples run on it.

The package is opt-in: importing it registers its kernels of aten operators
(for CPU, Meta, the composite, autograd and vmap keys; another tensor type
calling them passes through the autograd and ADInplaceOrView ones) and
nothing that takes over a backend.  Two things are process-wide and so
happen only when asked: ``enable_toy_device()`` names the PrivateUse1
backend "toy" and registers its kernels, and ``install()`` (or ``with
installed():``) registers the backend fallbacks of vmap and the toy device,
which serve every operator of the process (see backend_fallbacks.py).

Custom operators (``dispatcher.custom_ops.custom_op``) work on its tensors:
autograd.py implements the dispatcher's AutogradEngine protocol, so that
``register_autograd`` formulas are recorded, and checks.py the TensorChecks
that ``opcheck`` uses.

``python -m dispatcher demo`` walks through all of it.
"""
try:
    import numpy  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError('dispatcher.prototype needs numpy: pip install "c10-dispatcher[demo]"') from exc

# Each module registers its kernels when imported.
from .dtypes import (
    DType, bfloat16, bool_, complex64, float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
)
from .tensor import Tensor, is_tensor, stack, tensor
from . import subclassing  # noqa: F401  (sets Tensor's subclass factories)
from . import kernels_cpu, meta, composite, indexing, inplace_or_view, strided_views, storage  # noqa: F401
from .factories import empty, empty_like, full, full_like, ones, ones_like, randn, zeros, zeros_like
from .random_factories import rand, randperm
from . import index_put  # noqa: F401  (index_put_ and its method)
from . import alias_op  # noqa: F401  (aten::alias, which a subclass's legacy constructor calls)
from . import copying  # noqa: F401  (copy.deepcopy and pickle of tensors)
from . import zero_tensors  # noqa: F401  (_efficientzerotensor and the ZeroTensor key)
from . import linalg  # noqa: F401  (linalg.lstsq)
from . import out_variants  # noqa: F401  (add.out)
from . import comparisons  # noqa: F401  (==, eq and all)
from . import convolution, fft  # noqa: F401  (conv2d and convolution; fft_fft2 and _fft_c2c)
from . import autocast_cpu  # noqa: F401  (torch's CPU autocast lists)
from . import math_bits  # noqa: F401  (negative and conjugate views: the Negative and Conjugate keys)
from .autograd import backward, grad, gradcheck, no_grad
from .inference_mode import inference_mode, is_inference_mode_enabled
from .function import Function
from . import derivatives  # noqa: F401
from . import inplace_arithmetic  # noqa: F401  (sub_, mul_, div_ and +=, -=, *=, /=)
from . import view_history  # noqa: F401  (in-place writes through views: CopySlices)
from .ranges import arange
from . import joining  # noqa: F401  (cat, split)
from . import cumulative  # noqa: F401  (cumprod)
from . import dtype_views  # noqa: F401  (view(dtype))
from . import advanced_indexing  # noqa: F401  (index.Tensor)
from .generator import manual_seed
from .meta import meta_tensor
from .toy_device import enable_toy_device, is_toy_device_enabled, use_cpu_fallback
from .vmap import BatchedTensor, set_vmap_fallback_warning_enabled, vmap
from .tracing import Graph, Tracer, trace
from . import checks, nn  # noqa: F401  (checks registers opcheck's TensorChecks)
from . import torch_function_methods  # noqa: F401  (__torch_function__ on Tensor's methods; last: it reads them all)
from .backend_fallbacks import install, installed, is_installed, uninstall
from dispatcher.value_types import device  # torch.device, what a tensor's .device is

__all__ = [
    "BatchedTensor", "DType", "Function", "Graph", "Tensor", "Tracer", "arange", "backward", "bfloat16", "bool_", "complex64",
    "device", "empty", "empty_like", "enable_toy_device", "float16", "float32", "float64", "full", "full_like",
    "grad", "gradcheck", "inference_mode", "install", "installed", "int16", "int32", "int64", "int8",
    "is_inference_mode_enabled", "is_installed", "is_tensor", "is_toy_device_enabled", "manual_seed", "meta_tensor",
    "nn", "no_grad", "ones", "ones_like", "rand", "randn", "randperm", "set_vmap_fallback_warning_enabled", "stack",
    "tensor", "trace", "uint16", "uint32", "uint64", "uint8", "uninstall", "use_cpu_fallback", "vmap", "zeros",
    "zeros_like",
]
