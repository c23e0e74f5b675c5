"""The flash tile probe's sweep (benchmarks/gpu/flash_tile_probe.py): the schedule's candidate with each tile,
warps and stages combination written into its launch's literals. Timing needs a GPU; the texts do not."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _probe():
    spec = importlib.util.spec_from_file_location("flash_tile_probe", ROOT / "benchmarks/gpu/flash_tile_probe.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TEXT = '''
def run(q):
    k[(4,)](q, BLOCK_M=64, BLOCK_N=64, BLOCK_D=D,
            num_warps=4,
     num_stages=2)
'''


def test_every_combination_is_written_into_the_launch_literals() -> None:
    probe = _probe()
    out = probe.variants(TEXT, "k")
    assert len(out) == 2 * 3 * 2 * 2
    configs = [c for c, _ in out]
    assert {"BLOCK_M": 128, "BLOCK_N": 32, "num_warps": 8, "num_stages": 3} in configs
    for config, text in out:
        call = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Call) and isinstance(n.func,
                                                                                               ast.Subscript))
        written = {kw.arg: kw.value.value for kw in call.keywords if isinstance(kw.value, ast.Constant)}
        assert written == config
        assert "BLOCK_D=D" in text  # a knob the sweep does not own is left alone


def test_a_knob_not_passed_as_a_literal_is_left_out() -> None:
    probe = _probe()
    out = probe.variants(TEXT.replace("num_stages=2", "num_stages=S"), "k")
    assert len(out) == 2 * 3 * 2 and all("num_stages" not in c for c, _ in out)
    assert probe.variants(TEXT, "other") == []
