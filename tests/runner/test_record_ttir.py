"""The recorder keeps each compiled launch's TTIR, without location info, for the roofline's FLOP count."""

from __future__ import annotations

import sys
from pathlib import Path

# Worker modules import their siblings flat, as the worker process runs them (its folder on sys.path).
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "ascend_runner" / "worker"))

from launch_describe import MAX_TTIR_CHARS, ttir_of  # noqa: E402


class Compiled:
    def __init__(self, ttir: object) -> None:
        self.asm = {"ttir": ttir, "ptx": "..."}


def test_ttir_is_kept_without_locations() -> None:
    text = (
        '#loc = loc("k.py":1:0)\n'
        "module {\n"
        '  tt.func public @k(%x: !tt.ptr<f32> loc("x"(#loc))) {\n'
        "    %0 = arith.addf %a, %b : tensor<128xf32> loc(#loc3)\n"
        "  }\n"
        "}\n"
        "#loc3 = loc(unknown)\n"
    )
    kept = ttir_of(Compiled(text))
    assert kept is not None
    assert "#loc" not in kept.replace('loc("x"(#loc))', "")  # the header's argument names stay
    assert "arith.addf %a, %b : tensor<128xf32>\n" in kept + "\n"


def test_no_ttir_for_the_interpreter_or_odd_objects() -> None:
    assert ttir_of(None) is None
    assert ttir_of(Compiled(None)) is None
    assert len(ttir_of(Compiled("x" * (MAX_TTIR_CHARS + 10))) or "") == MAX_TTIR_CHARS
