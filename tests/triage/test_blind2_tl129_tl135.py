"""TL129 / TL135 (issue 24): a softplus already guarded by tl.where, and a division by a constexpr, are fine."""

from __future__ import annotations

from triage_helpers import of

GATE = """
import triton
import triton.language as tl

@triton.jit
def gate(x_ptr, out_ptr, n, beta: tl.constexpr, threshold: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    scaled = x * beta
    y = tl.where(scaled > threshold, x, tl.log(1.0 + tl.exp(scaled)) / beta)
    tl.store(out_ptr + offs, y, mask=offs < n)
"""


def test_guarded_softplus_is_not_tl129() -> None:
    assert not of(GATE, "TL129")


def test_unguarded_softplus_is_still_tl129() -> None:
    src = GATE.replace(
        "tl.where(scaled > threshold, x, tl.log(1.0 + tl.exp(scaled)) / beta)", "tl.log(1.0 + tl.exp(scaled))"
    )
    (f,) = of(src, "TL129")
    assert f.data["function"] == "softplus"


# TL135 reports divisions in a loop over tiles with per-element math only (blind sample 3): the tiles are looped.
SCALED = """
import triton
import triton.language as tl

@triton.jit
def gate(x_ptr, out_ptr, n, beta: tl.constexpr, threshold: tl.constexpr, BLOCK: tl.constexpr):
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        tl.store(out_ptr + offs, tl.exp(x) / beta, mask=offs < n)
"""


def test_division_by_a_power_of_two_constexpr_is_not_tl135() -> None:
    # beta defaults to 1.0: x / 1.0 (any 2**k) is folded into a multiplication by the compiler
    assert not of(
        SCALED.replace("beta: tl.constexpr,", "beta: tl.constexpr = 1.0,")
        .replace("BLOCK: tl.constexpr", "BLOCK: tl.constexpr = 256")
        .replace("threshold: tl.constexpr,", "threshold: tl.constexpr = 20.0,"),
        "TL135",
    )


def test_division_by_other_constexprs_or_runtime_scalars_is_still_tl135() -> None:
    (f,) = of(
        SCALED.replace("beta: tl.constexpr,", "beta: tl.constexpr = 30.0,")
        .replace("BLOCK: tl.constexpr", "BLOCK: tl.constexpr = 256")
        .replace("threshold: tl.constexpr,", "threshold: tl.constexpr = 20.0,"),
        "TL135",
    )
    assert f.data["divisor"] == "beta"  # a softcap of 30: still an IEEE division per element
    (g,) = of(SCALED.replace("beta: tl.constexpr,", "beta,"), "TL135")
    assert g.data["divisor"] == "beta"
