"""TL102 (issue 24): a non-power-of-two constexpr that sizes only tl.full/tl.zeros is accepted by triton-ascend."""

from __future__ import annotations

from triage_helpers import of

from tritonlens.analysis.core.findings import Severity

ITERS = """
import triton
import triton.language as tl

@triton.jit
def iterate(x_ptr, ITERS: tl.constexpr = 20, N: tl.constexpr = 16):
    offs = tl.arange(0, N)
    history = tl.full((ITERS, N), 0.0, dtype=tl.float32)
    x = tl.load(x_ptr + offs)
    for i in range(ITERS):
        x = x * 0.5
    tl.store(x_ptr + offs, x + tl.sum(history, axis=0))
"""


def test_tl102_on_a_full_shape_is_cuda_only() -> None:
    (f,) = of(ITERS, "TL102")
    assert f.platforms == ("cuda",) and "tl.full" in f.message


def test_tl102_on_an_arange_size_stays_an_error_everywhere() -> None:
    found = of(ITERS.replace("N: tl.constexpr = 16", "N: tl.constexpr = 24"), "TL102")
    (f,) = [f for f in found if "N = 24" in f.message]
    assert f.severity == Severity.ERROR and set(f.platforms) == {"cuda", "ascend"}
