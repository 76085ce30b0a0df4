"""benchmarks/instruction_counts.py --registration runs its set-up under
callgrind; here without it: every step's round runs, with and without the
step, and leaves nothing registered."""
import importlib.util
from pathlib import Path

from dispatcher.registry import default_registry

_PATH = Path(__file__).resolve().parent.parent / "benchmarks" / "instruction_counts.py"


def test_the_registration_rounds_run_with_and_without_each_step():
    spec = importlib.util.spec_from_file_location("instruction_counts", _PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    namespace = {}
    exec(module.REGISTRATION_SETUP.format(library_import=module.LIBRARY_IMPORTS["ours"],
                                          keys=module.REGISTRATION_KEYS), namespace)
    before = set(default_registry.packet_names())
    for key in module.REGISTRATION_KEYS:
        for with_step in (True, False):
            namespace["round_"](key, with_step)
    assert set(default_registry.packet_names()) == before
