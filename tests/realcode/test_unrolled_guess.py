"""A constexpr that bounds a fully unrolled loop gets a small guessed value (a 64-way unroll of a guessed value
made one public Ascend kernel's compile take minutes)."""

from __future__ import annotations

import ast

from tritonlens.analysis.specialize.guess import typical_value

SOURCE = """
def kernel(x_ptr, n_blocks: tl.constexpr, BLOCK_D: tl.constexpr):
    scores = tl.zeros((n_blocks,), dtype=tl.float32)
    for i in tl.static_range(0, n_blocks):
        scores += tl.load(x_ptr + i * BLOCK_D + tl.arange(0, BLOCK_D)).sum()
"""


def test_unrolled_loop_bound_is_guessed_small_and_block_stays_typical() -> None:
    fn = ast.parse(SOURCE).body[0]
    assert typical_value(fn, "n_blocks") == 4
    assert typical_value(fn, "BLOCK_D") == 64


def test_many_guessed_block_dimensions_are_guessed_smaller() -> None:
    from tritonlens.analysis.specialize.guess import typical_values

    fn = ast.parse(
        "def k(x, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, N: tl.constexpr):\n"
        "    a = tl.zeros((BLOCK_M, BLOCK_N, BLOCK_K), dtype=tl.float32)\n"
    ).body[0]
    assert typical_values(fn, ["BLOCK_M", "BLOCK_N", "BLOCK_K", "N"]) == {
        "BLOCK_M": 32,
        "BLOCK_N": 32,
        "BLOCK_K": 32,
        "N": 1024,
    }
    assert typical_values(fn, ["BLOCK_M", "BLOCK_N"]) == {"BLOCK_M": 64, "BLOCK_N": 64}
