"""TL140: decode attention whose programs are only (batch, head) walks the whole KV length (no split-KV)."""

from __future__ import annotations

from triage_helpers import locate, of

from tritonlens.analysis.core.findings import Severity

DECODE = """
import triton
import triton.language as tl

@triton.jit
def decode(q_ptr, k_ptr, v_ptr, o_ptr, lens_ptr, stride_b, stride_h, stride_t,
           D: tl.constexpr, BLOCK_N: tl.constexpr):
    b = tl.program_id(0)
    h = tl.program_id(1)
    seq_len = tl.load(lens_ptr + b)
    d = tl.arange(0, D)
    q = tl.load(q_ptr + b * stride_b + h * stride_h + d)
    m = -float("inf")
    l = 0.0
    acc = tl.zeros([D], dtype=tl.float32)
    for start in range(0, seq_len, BLOCK_N):
        t = start + tl.arange(0, BLOCK_N)
        kv = b * stride_b + h * stride_h + t[:, None] * stride_t + d[None, :]
        k = tl.load(k_ptr + kv, mask=t[:, None] < seq_len, other=0.0)
        s = tl.sum(q[None, :] * k, axis=1)
        s = tl.where(t < seq_len, s, -float("inf"))
        m_new = tl.maximum(m, tl.max(s, axis=0))
        p = tl.exp(s - m_new)
        alpha = tl.exp(m - m_new)
        v = tl.load(v_ptr + kv, mask=t[:, None] < seq_len, other=0.0)
        acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
        l = l * alpha + tl.sum(p, axis=0)
        m = m_new
    tl.store(o_ptr + b * stride_b + h * stride_h + d, acc / l)
"""


def test_tl140_on_decode_attention_with_a_batch_head_grid() -> None:
    (f,) = of(DECODE, "TL140")
    assert f.severity == Severity.INFO and f.span.line == locate(DECODE, "for start in range").line
    assert "flash-decoding" in f.message


def test_tl140_silent_when_the_kv_length_is_split_over_a_grid_axis() -> None:
    split = DECODE.replace("    h = tl.program_id(1)\n", "    h = tl.program_id(1)\n    split = tl.program_id(2)\n").replace(
        "range(0, seq_len, BLOCK_N)", "range(split * 1024, tl.minimum(split * 1024 + 1024, seq_len), BLOCK_N)"
    )
    assert not of(split, "TL140")


def test_tl140_silent_for_prefill_with_a_query_block_axis() -> None:
    prefill = DECODE.replace("    h = tl.program_id(1)\n", "    h = tl.program_id(1)\n    pid_m = tl.program_id(2)\n").replace(
        "    d = tl.arange(0, D)\n", "    d = tl.arange(0, D)\n    rows = pid_m * BLOCK_N + tl.arange(0, BLOCK_N)\n"
    )
    assert not of(prefill, "TL140")


def test_tl140_silent_for_a_loop_that_is_not_attention() -> None:
    no_max = DECODE.replace("tl.maximum(m, tl.max(s, axis=0))", "tl.max(s, axis=0)")
    assert not of(no_max, "TL140")
    no_exp = DECODE.replace("tl.exp(", "(")
    assert not of(no_exp, "TL140")
