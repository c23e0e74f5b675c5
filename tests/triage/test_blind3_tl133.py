"""TL133 on a vector against a tile (blind sample 3, docs/precision.md): one row per program is a GEMV (info,
with the head-grouping caveat), one finding per loop for manually unrolled copies, and a warning only when the
program walks several rows against the same tiles."""

from __future__ import annotations

from triage_helpers import locate, of

from tritonlens.analysis.core.findings import Severity

# One query row per program against streamed key tiles, the q.k product unrolled twice by hand.
DECODE = """
import triton
import triton.language as tl

@triton.jit
def decode(q_ptr, k_ptr, o_ptr, n, D: tl.constexpr, BN: tl.constexpr):
    d = tl.arange(0, D)
    q = tl.load(q_ptr + tl.program_id(0) * D + d)
    acc = 0.0
    for start in range(0, n, 2 * BN):
        keys = start + tl.arange(0, BN)
        k0 = tl.load(k_ptr + keys[:, None] * D + d[None, :])
        k1 = tl.load(k_ptr + (keys + BN)[:, None] * D + d[None, :])
        s0 = tl.sum(q[None, :] * k0, axis=1)
        s1 = tl.sum(q[None, :] * k1, axis=1)
        acc += tl.sum(s0, axis=0) + tl.sum(s1, axis=0)
    tl.store(o_ptr + tl.program_id(0), acc)
"""

# The same product, but the program loops over rows and each row streams the same key tiles: a GEMM row by row.
ROWS = """
import triton
import triton.language as tl

@triton.jit
def rows(q_ptr, k_ptr, o_ptr, n, R, D: tl.constexpr, BN: tl.constexpr):
    d = tl.arange(0, D)
    for r in range(R):
        q = tl.load(q_ptr + (tl.program_id(0) * R + r) * D + d)
        acc = 0.0
        for start in range(0, n, BN):
            keys = start + tl.arange(0, BN)
            k = tl.load(k_ptr + keys[:, None] * D + d[None, :])
            s = tl.sum(q[None, :] * k, axis=1)
            acc += tl.sum(s, axis=0)
        tl.store(o_ptr + tl.program_id(0) * R + r, acc)
"""


def test_single_row_per_program_is_an_info_gemv_with_the_grouping_caveat() -> None:
    (f,) = of(DECODE, "TL133")
    assert f.severity == Severity.INFO
    assert f.data["gemv"] is True
    assert "share one KV head" in f.message


def test_unrolled_copies_of_one_loop_are_one_finding_that_names_the_others() -> None:
    (f,) = of(DECODE, "TL133")
    assert f.span == locate(DECODE, "tl.sum(q[None, :] * k0, axis=1)")
    copy = locate(DECODE, "tl.sum(q[None, :] * k1, axis=1)").line
    assert f.data["copies"] == [copy]
    assert f"line(s) {copy}" in f.message


def test_a_row_loop_around_the_key_loop_keeps_the_warning() -> None:
    (f,) = of(ROWS, "TL133")
    assert f.severity == Severity.WARNING
    assert f.data["gemv"] is False
    assert f"loop at line {locate(ROWS, 'for r in range(R):').line}" in f.message


def test_a_row_loaded_once_before_both_loops_is_still_one_row_per_program() -> None:
    # near miss: an outer loop exists, but the vector is loaded outside it: still one row per program
    once = ROWS.replace(
        "    for r in range(R):\n        q = tl.load(q_ptr + (tl.program_id(0) * R + r) * D + d)\n",
        "    q = tl.load(q_ptr + tl.program_id(0) * D + d)\n    for r in range(R):\n",
    )
    (f,) = of(once, "TL133")
    assert f.severity == Severity.INFO
