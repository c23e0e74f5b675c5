"""TL125 (block reduction in a loop) and TL134 (sequential scalar scan): firing and look-alikes that must not."""

from __future__ import annotations

from triage_helpers import locate, of

DOT_LOOP = """
import triton
import triton.language as tl

@triton.jit
def rowdot(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = 0.0
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=0.0)
        y = tl.load(y_ptr + offs, mask=offs < n, other=0.0)
        acc += tl.sum(x * y, axis=0)
    tl.store(out_ptr + row, acc)
"""


def test_tl125_fires_on_a_sum_accumulated_every_iteration() -> None:
    (f,) = of(DOT_LOOP, "TL125")
    assert f.span == locate(DOT_LOOP, "tl.sum(x * y, axis=0)")
    assert f.data["accumulator"] == "acc"


def test_tl125_fires_for_max_folded_with_maximum_through_a_local() -> None:
    src = DOT_LOOP.replace(
        "acc += tl.sum(x * y, axis=0)", "m = tl.max(x, axis=0)\n        acc = tl.maximum(acc, m)"
    )
    (f,) = of(src, "TL125")
    assert "tl.max" in f.message


def test_tl125_silent_for_online_softmax_rescaling() -> None:
    # The running max is used inside the loop (rescale, exp): the per-iteration reduction is the algorithm.
    src = """
    import triton
    import triton.language as tl

    @triton.jit
    def online(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        m = -float("inf")
        s = 0.0
        for start in range(0, n, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + row * n + offs, mask=offs < n, other=-float("inf"))
            m_new = tl.maximum(m, tl.max(x, axis=0))
            s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
            m = m_new
        tl.store(out_ptr + row, m + tl.log(s))
    """
    assert not of(src, "TL125")


def test_tl125_silent_for_segmented_sums_and_running_prefixes() -> None:
    segmented = DOT_LOOP.replace(
        "acc += tl.sum(x * y, axis=0)", "tl.store(out_ptr + row * 64 + start // BLOCK, tl.sum(x * y, axis=0))"
    )
    assert not of(segmented, "TL125")
    running = DOT_LOOP.replace(
        "acc += tl.sum(x * y, axis=0)",
        "tl.store(y_ptr + offs, acc + tl.cumsum(x, axis=0), mask=offs < n)\n        acc += tl.sum(x, axis=0)",
    )
    assert not of(running, "TL125")


SCAN = """
import triton
import triton.language as tl

@triton.jit
def prefix(x_ptr, y_ptr, n):
    row = tl.program_id(0)
    total = 0.0
    for i in range(n):
        v = tl.load(x_ptr + row * n + i)
        total += v
        tl.store(y_ptr + row * n + i, total)
"""


def test_tl134_fires_on_a_scalar_running_total_stored_each_step() -> None:
    (f,) = of(SCAN, "TL134")
    assert f.span.line == locate(SCAN, "for i in range(n):").line
    assert "tl.cumsum" in f.message


def test_tl134_fires_on_a_scalar_running_product() -> None:
    product = SCAN.replace("total = 0.0", "total = 1.0").replace("total += v", "total *= v")
    (f,) = of(product, "TL134")
    assert "running product `total`" in f.message and "tl.cumprod" in f.message


def test_tl134_silent_for_reductions_block_scans_and_cumsum() -> None:
    # A plain scalar reduction (stored once after the loop) is not a scan.
    reduction = SCAN.replace(
        "        tl.store(y_ptr + row * n + i, total)\n", "    tl.store(y_ptr + row, total)\n"
    )
    assert not of(reduction, "TL134")
    # Already a block scan.
    block = """
    import triton
    import triton.language as tl

    @triton.jit
    def prefix(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        carry = 0.0
        for start in range(0, n, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
            tl.store(y_ptr + offs, carry + tl.cumsum(x, axis=0), mask=offs < n)
            carry += tl.sum(x, axis=0)
    """
    assert not of(block, "TL134")
    # A store of a value that is not the running total (a copy loop with a counter).
    copy = SCAN.replace("tl.store(y_ptr + row * n + i, total)", "tl.store(y_ptr + row * n + i, v)")
    assert not of(copy, "TL134")


def test_tl134_silent_for_a_segmented_sum_stored_when_the_segment_ends() -> None:
    segmented = SCAN.replace(
        "        tl.store(y_ptr + row * n + i, total)",
        "        if v > 0:\n            tl.store(y_ptr + row * n + i, total)\n            total = 0.0",
    )
    assert not of(segmented, "TL134")


def test_tl125_silent_for_a_tile_reduced_along_one_axis() -> None:
    tile = DOT_LOOP.replace(
        "        acc += tl.sum(x * y, axis=0)",
        "        t = tl.load(x_ptr + offs[:, None] * n + offs[None, :])\n        acc += tl.sum(t, axis=1)",
    )
    assert not of(tile, "TL125")
