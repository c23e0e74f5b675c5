"""TL114, TL115, TL121: literal grids against Ascend's and CUDA's launch limits."""

from __future__ import annotations

from triage_helpers import locate, of

from tritonlens.analysis.core.findings import Severity

KERNEL = """
import triton
import triton.language as tl

@triton.jit
def fill(x_ptr, BLOCK: tl.constexpr):
    offs = (tl.program_id(0) + tl.program_id(1)) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 0.0)

def run(x):
    fill[GRID](x, BLOCK=1024)
"""


def src(grid: str) -> str:
    return KERNEL.replace("GRID", grid)


def test_tl114_fires_above_65535_programs() -> None:
    s = src("(1024, 128)")
    (f,) = of(s, "TL114")
    assert f.span == locate(s, "(1024, 128)")
    assert f.severity == Severity.ERROR and "131072" in f.message
    assert f.platforms == ("ascend",)


def test_tl114_resolves_a_grid_name_bound_to_a_literal() -> None:
    s = KERNEL.replace("    fill[GRID]", "    grid = (70000,)\n    fill[grid]")
    (f,) = of(s, "TL114")
    assert f.span == locate(s, "grid", 2)


def test_tl115_fires_far_above_core_count_but_below_limit() -> None:
    s = src("(4096,)")
    (f,) = of(s, "TL115")
    assert f.span == locate(s, "(4096,)")
    assert not of(s, "TL114")


def test_tl114_tl115_silent_for_core_sized_and_computed_grids(data_source) -> None:
    assert not of(src("(40,)"), "TL115")
    assert not of(src("(triton.cdiv(x.numel(), 1024),)"), "TL114")
    assert not of(data_source("good_ascend_add.py"), "TL115")


def test_tl121_fires_for_y_axis_over_65535() -> None:
    s = src("(1, 70000)")
    found = of(s, "TL121")
    assert [f.span for f in found] == [locate(s, "(1, 70000)")]
    assert "axis 1" in found[0].message and found[0].platforms == ("cuda",)


def test_tl121_silent_for_large_x_axis() -> None:
    assert not of(src("(70000, 1)"), "TL121")
