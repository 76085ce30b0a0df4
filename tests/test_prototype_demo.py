"""``python -m dispatcher demo``."""
import os
import subprocess
import sys


def run(*args):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=os.environ.copy())


def test_demo_walks_through_everything_in_one_screen():
    out = run("-m", "dispatcher", "demo")
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    lines = out.stdout.splitlines()
    assert len(lines) <= 50
    for section in ("1. A tensor's DispatchKeySet", "2. One call", "3. Autograd", "4. Meta", "5. A new device",
                    "6. vmap", "7. Tracing", "8. Train"):
        assert any(line.startswith(section) for line in lines), section
    # The dispatch trace of one call, and every check the demo makes, as it prints them.
    assert "   [call] op=[aten::mul.Tensor], key=[AutogradCPU]" in lines
    assert "    [redispatch] op=[aten::mul.Tensor], key=[CPU]" in lines
    assert "False" not in out.stdout
    losses = {line.split()[0]: [float(v) for v in line.split()[1:]] for line in lines[-3:]}
    assert set(losses) == {"cpu", "toy", "vmap"}
    for values in losses.values():
        assert values[-1] < values[0]


def test_demo_without_numpy_says_so_in_one_line():
    script = ("import sys; sys.modules['numpy'] = None\n"
              "from dispatcher.__main__ import main\n"
              "main(['demo'])\n")
    out = run("-c", script)
    assert out.returncode == 1
    assert out.stderr == 'python -m dispatcher demo needs numpy: pip install "c10-dispatcher[demo]"\n'
