"""TL133 on a vector against a tile (blind sample 3, docs/precision.md): one row per program is a GEMV (info:
rows that other programs share the tiles with could be one tl.dot; the head-grouping caveat only for attention),
one finding per loop for manually unrolled copies, a warning only when the program walks several rows against the
same tiles, and nothing when every program reads its own tiles outside attention (nothing would help)."""

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


def test_single_row_per_program_is_an_info_gemv_with_neutral_wording_outside_attention() -> None:
    # every program streams the same key tiles: a block of 16+ rows per program could share them through tl.dot
    (f,) = of(DECODE, "TL133")
    assert f.severity == Severity.INFO
    assert f.data["gemv"] is True
    assert "KV head" not in f.message and "quer" not in f.message
    assert "leave it" not in f.message and "16+ rows" in f.message


# A dbias-style reduction: each program scales its own slab of rows by its own column vector; no other program
# reads the same tile, so taking more rows per program would not share anything (nothing to suggest).
OWN_TILES = """
import triton
import triton.language as tl

@triton.jit
def colscale(x_ptr, v_ptr, starts_ptr, out_ptr, n_cols, STEPS, BR: tl.constexpr, BC: tl.constexpr):
    part = tl.program_id(0)
    cblk = tl.program_id(1)
    first = tl.load(starts_ptr + part)
    cols = cblk * BC + tl.arange(0, BC)
    vec = tl.load(v_ptr + part * n_cols + cols, mask=cols < n_cols, other=0.0)
    for step in range(STEPS):
        rows = first + step * BR + tl.arange(0, BR)
        tile = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=cols[None, :] < n_cols, other=0.0)
        partial = tl.sum(tile * vec[None, :], axis=1)
        tl.atomic_add(out_ptr + rows, partial)
"""

# Single-query decode attention: one query per (batch, head) program against that head's keys.
ATTN_DECODE = """
import triton
import triton.language as tl

@triton.jit
def attn_one(q_ptr, k_ptr, v_ptr, o_ptr, n, D: tl.constexpr, BN: tl.constexpr):
    bh = tl.program_id(0)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + bh * D + d)
    m = -float("inf")
    l = 0.0
    acc = tl.zeros([D], dtype=tl.float32)
    for start in range(0, n, BN):
        keys = start + tl.arange(0, BN)
        k = tl.load(k_ptr + (bh * n + keys[:, None]) * D + d[None, :])
        s = tl.sum(q[None, :] * k, axis=1)
        m_new = tl.maximum(m, tl.max(s, axis=0))
        p = tl.exp(s - m_new)
        v = tl.load(v_ptr + (bh * n + keys[:, None]) * D + d[None, :])
        acc = acc * tl.exp(m - m_new) + tl.sum(p[:, None] * v, axis=0)
        l = l * tl.exp(m - m_new) + tl.sum(p, axis=0)
        m = m_new
    tl.store(o_ptr + bh * D + d, acc / l)
"""


def test_a_program_with_its_own_tiles_outside_attention_is_not_reported() -> None:
    assert not of(OWN_TILES, "TL133")
    # the same product where every program reads the same tile (no program id in its address) is reported
    shared = OWN_TILES.replace("rows = first + step * BR", "rows = step * BR")
    (f,) = of(shared, "TL133")
    assert f.severity == Severity.INFO and "KV head" not in f.message


def test_single_query_decode_attention_keeps_the_head_grouping_caveat() -> None:
    (f,) = of(ATTN_DECODE, "TL133")
    assert f.severity == Severity.INFO
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
