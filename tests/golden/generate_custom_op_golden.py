"""Regenerate custom_op_golden.json: torch 2.13's custom operators, for tests/test_custom_ops.py.

Run with a Python that has torch 2.13 (never needed by the tests):

    /tmp/torchenv/bin/python tests/golden/generate_custom_op_golden.py

Records

* ``infer_schema``: for every function of custom_op_cases.py (built with
  torch's annotation types), the schema torch infers or the error it raises
  (its text with the signature, the lists of valid types and the tensor
  type's name replaced by placeholders: see normalized_error);
* ``dispatch_key_for_device``: torch._C._dispatch_key_for_device per device type;
* ``ops``: PyTorch's custom-op tutorial patterns (custom_op + register_fake
  + register_autograd, numpy kernels) on fixed inputs: each operator's
  schema, tags, the keys it has kernels for, its results, gradients,
  grad_fn name, version-counter bumps, and the errors of misuse;
* ``opcheck``: torch.library.opcheck's result per test for good and broken
  operators (``"SUCCESS"``, or the exception's type and message).

tests/test_custom_ops.py writes the same operators with dispatcher's
custom_op on dispatcher.prototype tensors ("imports changed") and compares.
"""
import json
import pathlib
import sys

import numpy as np
import torch
from torch import Tensor
from torch._library import infer_schema as torch_infer_schema_module
from torch.library import Library, custom_op, infer_schema, opcheck

HERE = pathlib.Path(__file__).parent
OUT = HERE / "custom_op_golden.json"
sys.path.insert(0, str(HERE))

from custom_op_cases import Types, infer_schema_cases, normalized_error  # noqa: E402

KEYS = ["CPU", "CUDA", "Meta", "PrivateUse1", "BackendSelect", "ADInplaceOrView", "Autograd", "AutogradCPU",
        "CompositeExplicitAutograd", "CompositeImplicitAutograd"]
DEVICE_TYPES = ["cpu", "cuda", "meta", "xla", "mps", "hpu", "lazy", "xpu", "mtia", "maia", "ipu", "ve", "hip",
                "fpga", "vulkan", "privateuseone", "cuda:0", "", "CPU", "foo"]


def error(exc: BaseException) -> dict:
    return {"error": type(exc).__name__, "message": str(exc)}


def record_infer_schema() -> dict:
    types = Types(torch.Tensor, torch.types.Number, torch.dtype, torch.device, torch.device("cpu"), torch.float32,
                  lambda name: getattr(torch.Tag, name))
    out = {}
    for case in infer_schema_cases(types):
        try:
            out[case.name] = {"schema": infer_schema(case.fn, **case.kwargs)}
        except Exception as exc:
            out[case.name] = {
                "error": type(exc).__name__,
                "message": normalized_error(str(exc), case.fn, torch.Tensor,
                                            torch_infer_schema_module.SUPPORTED_PARAM_TYPES,
                                            torch_infer_schema_module.SUPPORTED_RETURN_TYPES),
            }
    return out


def record_device_keys() -> dict:
    out = {}
    for device_type in DEVICE_TYPES:
        try:
            out[device_type] = torch._C._dispatch_key_for_device(device_type)
        except Exception as exc:
            out[device_type] = error(exc)
    return out


# -- the tutorial operators ----------------------------------------------------------------------
def numpy_of(t: Tensor) -> np.ndarray:
    return t.detach().numpy()


@custom_op("golden::numpy_sin", mutates_args=())
def numpy_sin(x: Tensor) -> Tensor:
    return torch.from_numpy(np.sin(numpy_of(x)))


@numpy_sin.register_fake
def _(x):
    return torch.empty_like(x)


@custom_op("golden::numpy_cos", mutates_args=())
def numpy_cos(x: Tensor) -> Tensor:
    return torch.from_numpy(np.cos(numpy_of(x)))


@numpy_cos.register_fake
def _(x):
    return torch.empty_like(x)


def sin_setup_context(ctx, inputs, output):
    (x,) = inputs
    ctx.save_for_backward(x)


def sin_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return grad * numpy_cos(x)


numpy_sin.register_autograd(sin_backward, setup_context=sin_setup_context)


@custom_op("golden::mymuladd", mutates_args=())
def mymuladd(a: Tensor, b: Tensor, c: float) -> Tensor:
    return torch.from_numpy(numpy_of(a) * numpy_of(b) + c)


@mymuladd.register_fake
def _(a, b, c):
    torch._check(a.shape == b.shape)
    torch._check(a.dtype == b.dtype)
    return torch.empty_like(a)


def muladd_setup_context(ctx, inputs, output):
    a, b, c = inputs
    saved_a = b if ctx.needs_input_grad[0] else None
    saved_b = a if ctx.needs_input_grad[1] else None
    ctx.save_for_backward(saved_a, saved_b)


def muladd_backward(ctx, grad):
    a, b = ctx.saved_tensors
    grad_a = grad * a if ctx.needs_input_grad[0] else None
    grad_b = grad * b if ctx.needs_input_grad[1] else None
    return grad_a, grad_b, None


torch.library.register_autograd("golden::mymuladd", muladd_backward, setup_context=muladd_setup_context)


@custom_op("golden::mymul", mutates_args=())
def mymul(a: Tensor, b: Tensor) -> Tensor:
    return torch.from_numpy(numpy_of(a) * numpy_of(b))


@torch.library.register_fake("golden::mymul")
def _(a, b):
    return torch.empty_like(a)


@custom_op("golden::myadd_out", mutates_args=("out",))
def myadd_out(a: Tensor, b: Tensor, out: Tensor) -> None:
    np.add(numpy_of(a), numpy_of(b), out=out.numpy())


@custom_op("golden::numpy_scale", mutates_args=())
def numpy_scale(x: Tensor, *, val: float) -> Tensor:
    return torch.from_numpy(numpy_of(x) * val)


@numpy_scale.register_fake
def _(x, *, val):
    return torch.empty_like(x)


def scale_setup_context(ctx, inputs, keyword_only_inputs, output):
    ctx.val = keyword_only_inputs["val"]


numpy_scale.register_autograd(lambda ctx, grad: grad * ctx.val, setup_context=scale_setup_context)


@custom_op("golden::numpy_cube", mutates_args=())
def numpy_cube(x: Tensor) -> tuple[Tensor, Tensor]:
    x_np = numpy_of(x)
    return torch.from_numpy(x_np ** 3), torch.from_numpy(3 * x_np ** 2)


@numpy_cube.register_fake
def _(x):
    return torch.empty_like(x), torch.empty_like(x)


def cube_setup_context(ctx, inputs, output):
    (x,) = inputs
    _, dx = output
    ctx.save_for_backward(x, dx)


def cube_backward(ctx, grad_out, grad_dx):
    x, dx = ctx.saved_tensors
    return grad_out * dx + grad_dx * 6 * x


numpy_cube.register_autograd(cube_backward, setup_context=cube_setup_context)


@custom_op("golden::weighted_sum", mutates_args=())
def weighted_sum(tensors: list[Tensor], weights: list[float]) -> Tensor:
    return torch.from_numpy(sum(numpy_of(t) * w for t, w in zip(tensors, weights)))


@weighted_sum.register_fake
def _(tensors, weights):
    return torch.empty_like(tensors[0])


def weighted_setup_context(ctx, inputs, output):
    ctx.weights = inputs[1]


def weighted_backward(ctx, grad):
    return [grad * w for w in ctx.weights], None


weighted_sum.register_autograd(weighted_backward, setup_context=weighted_setup_context)


@custom_op("golden::make_ones", mutates_args=(), device_types="cpu")
def make_ones(n: int, device: torch.device) -> Tensor:
    return torch.ones(n)


@custom_op("golden::no_backward", mutates_args=())
def no_backward(x: Tensor) -> Tensor:
    return x.clone()


@no_backward.register_fake
def _(x):
    return torch.empty_like(x)


# -- broken operators, for opcheck -----------------------------------------------------------------
@custom_op("golden::bad_mutation", mutates_args=())
def bad_mutation(x: Tensor) -> Tensor:
    x.numpy()[0] = 5
    return x.clone()


@bad_mutation.register_fake
def _(x):
    return torch.empty_like(x)


@custom_op("golden::unmutating", mutates_args=("x",))
def unmutating(x: Tensor) -> None:
    pass


@custom_op("golden::bad_fake_shape", mutates_args=())
def bad_fake_shape(x: Tensor) -> Tensor:
    return x.clone()


@bad_fake_shape.register_fake
def _(x):
    return x.new_empty(4)


@custom_op("golden::bad_fake_dtype", mutates_args=())
def bad_fake_dtype(x: Tensor) -> Tensor:
    return x.clone()


@bad_fake_dtype.register_fake
def _(x):
    return x.new_empty(3, dtype=torch.float64)


@custom_op("golden::no_fake", mutates_args=())
def no_fake(x: Tensor) -> Tensor:
    return x.clone()


@custom_op("golden::returns_input", mutates_args=())
def returns_input(x: Tensor) -> Tensor:
    return x


@returns_input.register_fake
def _(x):
    return torch.empty_like(x)


lib = Library("golden", "FRAGMENT")
lib.define("cpu_autograd(Tensor x) -> Tensor")
lib.impl("cpu_autograd", lambda x: x * 2, "CPU")

X = [0.0, 0.5, 1.0, 2.0]
A = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
B = [[0.5, -1.0, 2.0], [1.5, 0.25, -3.0]]
W = [[1.0, -2.0, 0.5], [3.0, 1.0, -1.0]]


def t(data, requires_grad=False):
    return torch.tensor(data, dtype=torch.float32, requires_grad=requires_grad)


def kernels(name: str) -> list:
    return [k for k in KEYS if torch._C._dispatch_has_kernel_for_dispatch_key(name, k)]


def op_facts(op) -> dict:
    overload = op._opoverload
    return {"schema": str(overload._schema), "tags": [str(tag).split(".")[-1] for tag in overload.tags],
            "kernels": kernels(overload._schema.name)}


def record_ops() -> dict:
    out = {}

    x = t(X, requires_grad=True)
    y = numpy_sin(x)
    y.backward(t([1.0, -1.0, 2.0, 0.5]))
    out["numpy_sin"] = {**op_facts(numpy_sin), "input": X, "output": y.tolist(), "grad": x.grad.tolist(),
                        "requires_grad": y.requires_grad, "grad_fn": y.grad_fn.name()}

    a, b = t(A, requires_grad=True), t(B, requires_grad=True)
    y = mymuladd(a, b, 1.5)
    (y * t(W)).sum().backward()
    out["mymuladd"] = {**op_facts(mymuladd), "a": A, "b": B, "c": 1.5, "w": W, "output": y.tolist(),
                       "grad_a": a.grad.tolist(), "grad_b": b.grad.tolist(), "grad_fn": y.grad_fn.name()}
    a = t(A, requires_grad=True)
    mymuladd(a, t(B), 1.5).sum().backward()  # b needs no grad: setup_context saves nothing for it
    out["mymuladd"]["grad_a_only"] = a.grad.tolist()

    out["mymul"] = {**op_facts(mymul), "output": mymul(t(A), t(B)).tolist(),
                    "requires_grad": mymul(t(A, requires_grad=True), t(B)).requires_grad}

    result = t(np.zeros((2, 3)).tolist())
    version = result._version
    returned = myadd_out(t(A), t(B), result)
    out["myadd_out"] = {**op_facts(myadd_out), "returned": returned, "out": result.tolist(),
                        "version_bump": result._version - version}

    x = t(X, requires_grad=True)
    y = numpy_scale(x, val=3.25)
    y.backward(t([1.0, 2.0, 3.0, 4.0]))
    out["numpy_scale"] = {**op_facts(numpy_scale), "output": y.tolist(), "grad": x.grad.tolist()}

    x = t(X, requires_grad=True)
    cube, dx = numpy_cube(x)
    (cube * t([1.0, 2.0, 3.0, 4.0]) + dx * t([0.5, -1.0, 1.0, 2.0])).sum().backward()
    out["numpy_cube"] = {**op_facts(numpy_cube), "output": [cube.tolist(), dx.tolist()], "grad": x.grad.tolist(),
                         "grad_fn": cube.grad_fn.name(), "same_node": cube.grad_fn is dx.grad_fn}
    x = t(X, requires_grad=True)
    numpy_cube(x)[1].sum().backward()  # no gradient for the first output: materialized as zeros
    out["numpy_cube"]["grad_second_output_only"] = x.grad.tolist()

    p, q = t(A, requires_grad=True), t(B, requires_grad=True)
    y = weighted_sum([p, q], [0.25, -2.0])
    (y * t(W)).sum().backward()
    out["weighted_sum"] = {**op_facts(weighted_sum), "output": y.tolist(), "grad_p": p.grad.tolist(),
                           "grad_q": q.grad.tolist()}

    out["make_ones"] = {**op_facts(make_ones), "output": make_ones(3, "cpu").tolist()}
    try:
        make_ones(3, "meta")
    except Exception as exc:
        out["make_ones"]["meta_error"] = error(exc)

    x = t(X, requires_grad=True)
    y = no_backward(x)
    out["no_backward"] = {"requires_grad": y.requires_grad, "grad_fn": y.grad_fn.name()}
    try:
        y.sum().backward()
    except Exception as exc:
        out["no_backward"]["backward_error"] = error(exc)

    try:
        returns_input(t(X))
    except Exception as exc:
        out["returns_input"] = {"call_error": error(exc)}
    return out


def record_opcheck() -> dict:
    cases = {
        "numpy_sin": (numpy_sin, (t(X),)),
        "numpy_sin_requires_grad": (numpy_sin, (t(X, requires_grad=True),)),
        "mymuladd": (mymuladd, (t(A, requires_grad=True), t(B, requires_grad=True), 1.5)),
        "mymul": (mymul, (t(A), t(B))),
        "myadd_out": (myadd_out, (t(A), t(B), t(np.zeros((2, 3)).tolist()))),
        "numpy_scale": (numpy_scale, (t(X, requires_grad=True),), {"val": 2.0}),
        "numpy_cube": (numpy_cube, (t(X, requires_grad=True),)),
        "weighted_sum": (weighted_sum, ([t(A, requires_grad=True), t(B)], [0.25, -2.0])),
        "bad_mutation": (bad_mutation, (t(X),)),
        "unmutating": (unmutating, (t(X),)),
        "bad_fake_shape": (bad_fake_shape, (t([1.0, 2.0, 3.0]),)),
        "bad_fake_dtype": (bad_fake_dtype, (t([1.0, 2.0, 3.0]),)),
        "no_fake": (no_fake, (t(X),)),
        "returns_input": (returns_input, (t(X),)),
        "cpu_autograd": (torch.ops.golden.cpu_autograd.default, (t(X, requires_grad=True),)),
        "cpu_autograd_without_grad": (torch.ops.golden.cpu_autograd.default, (t(X),)),
        "no_backward": (no_backward, (t(X, requires_grad=True),)),
    }
    out = {}
    for name, (op, args, *kwargs) in cases.items():
        results = opcheck(op, args, kwargs[0] if kwargs else None, raise_exception=False)
        out[name] = {test: result if isinstance(result, str) else error(result) for test, result in results.items()}
    try:
        opcheck(bad_fake_shape, (t([1.0, 2.0, 3.0]),))
    except Exception as exc:
        out["raised"] = error(exc)
    return out


def main() -> None:
    golden = {
        "torch_version": torch.__version__,
        "infer_schema": record_infer_schema(),
        "dispatch_key_for_device": record_device_keys(),
        "ops": record_ops(),
        "opcheck": record_opcheck(),
    }
    OUT.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
