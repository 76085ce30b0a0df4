"""dispatcher.prototype is opt-in: importing it names no backend and installs no process-wide fallback.

Naming PrivateUse1 is once per process, so each check runs in a fresh interpreter.
"""
import subprocess
import sys
import textwrap


def run(script):
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


FALLBACKS = """
    import dispatcher
    from dispatcher import DispatchKey
    from dispatcher.registry import default_registry

    def fallbacks():
        return {key.name: default_registry.backend_fallback(key) for key in DispatchKey}

    def privateuse1_kernels():
        return default_registry.registrations_for_dispatch_key(DispatchKey.PrivateUse1)
"""


def test_importing_the_prototype_takes_over_nothing():
    out = run(FALLBACKS + """
    before = fallbacks()
    import dispatcher.prototype as P
    assert dispatcher.get_privateuse1_backend_name() == "privateuseone"
    assert fallbacks() == before
    assert privateuse1_kernels() == []  # the toy device's kernels of aten operators wait for enable_toy_device()
    # The user's own backend can be named and given a fallback after the import.
    dispatcher.rename_privateuse1_backend("mine")
    lib = dispatcher.Library("_", "IMPL")
    lib.fallback(lambda op, *args, **kwargs: None, "PrivateUse1")
    assert P.tensor([1.0]).exp().item() > 2  # the prototype works on CPU regardless
    try:
        P.enable_toy_device()
    except RuntimeError as exc:
        print(exc)
    """)
    assert out == ("the PrivateUse1 backend is already named 'mine', and is named once per process "
                   "(rename_privateuse1_backend); it cannot also be named 'toy'\n")


def test_enable_toy_device_and_install_do_it_on_request():
    run(FALLBACKS + """
    import dispatcher.prototype as P
    try:
        P.tensor([1.0], device="toy")
    except ValueError as exc:
        assert "enable_toy_device()" in str(exc), exc
    before = fallbacks()
    P.install()  # no toy device yet: vmap's fallback, the math bits' (ZeroTensor, Negative, Conjugate), Meta's error
    changed = {name for name, kernel in fallbacks().items() if kernel is not before[name]}
    assert changed == {"FuncTorchBatched", "ZeroTensor", "Negative", "Conjugate", "Meta"}, changed
    assert privateuse1_kernels() == []
    P.enable_toy_device()  # joins the installed fallbacks
    assert dispatcher.get_privateuse1_backend_name() == "toy"
    assert privateuse1_kernels() == ["aten::_copy_from", "aten::empty.memory_format"]
    assert fallbacks()["PrivateUse1"] is not None
    assert P.tensor([1.0], device="toy").exp().device.type == "toy"
    P.uninstall()
    assert fallbacks() == before
    P.install()
    assert {name for name, kernel in fallbacks().items() if kernel is not before[name]} == \\
        {"FuncTorchBatched", "ZeroTensor", "Negative", "Conjugate", "Meta", "PrivateUse1"}
    """)
