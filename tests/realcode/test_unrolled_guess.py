"""A constexpr that bounds a fully unrolled loop gets a small guessed value (a 64-way unroll of a guessed value
made one public Ascend kernel's compile take minutes)."""

from __future__ import annotations

import ast

from tritonlens.analysis.specialization_guess import typical_value

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
