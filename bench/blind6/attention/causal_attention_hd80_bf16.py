"""Causal scaled-dot-product attention, head dim 80, bf16.

out = softmax(q @ k^T * scale + causal_mask) @ v, scale = 1/sqrt(D).
q, k, v: (B, H, S, D) bf16 -> out: (B, H, S, D) bf16.
Benchmark shape: B = 4, H = 16, S = 2048, D = 80.

Known problems:
- lines 82-83: the causal mask is built and applied on every key block, though only the diagonal block needs it; off-diagonal blocks pay for the compare and select.
- lines 55-56, 115: head dim 80 is padded to BLOCK_D=128, so 37.5% of the QK^T and PV tensor-core work (and of the q/acc registers) is spent on masked zeros.
- lines 114, 126: fixed BLOCK_M=BLOCK_N=64, num_warps=4, default num_stages, no autotuning; larger query tiles (128) with 8 warps and deeper K/V pipelining are usual on Hopper.
- line 116: the grid runs query blocks in increasing order while causal work grows with pid_m, so the longest programs start last and leave a load-imbalanced tail.
"""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

B = 4
H = 16
S = 2048
D = 80


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        scale = 1.0 / math.sqrt(q.shape[-1])
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=scale)


@triton.jit
def _causal_attn_fwd_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr,
    seq_len, head_dim, n_heads, qk_scale,
    stride_qb, stride_qh, stride_qs, stride_qd,
    stride_kb, stride_kh, stride_ks, stride_kd,
    stride_vb, stride_vh, stride_vs, stride_vd,
    stride_ob, stride_oh, stride_os, stride_od,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
    DOT_FP32: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // n_heads
    h = pid_bh % n_heads

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    d_mask = offs_d < head_dim

    q_base = q_ptr + b * stride_qb + h * stride_qh
    k_base = k_ptr + b * stride_kb + h * stride_kh
    v_base = v_ptr + b * stride_vb + h * stride_vh

    q_ptrs = q_base + offs_m[:, None] * stride_qs + offs_d[None, :] * stride_qd
    q = tl.load(q_ptrs, mask=(offs_m[:, None] < seq_len) & d_mask[None, :], other=0.0)
    if DOT_FP32:
        q = q.to(tl.float32)

    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)

    # causal: keys beyond the last query row of this block are never needed
    hi = tl.minimum((pid_m + 1) * BLOCK_M, seq_len)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        col_valid = cols < seq_len
        # k^T tile: (BLOCK_D, BLOCK_N)
        k_ptrs = k_base + cols[None, :] * stride_ks + offs_d[:, None] * stride_kd
        k = tl.load(k_ptrs, mask=col_valid[None, :] & d_mask[:, None], other=0.0)
        if DOT_FP32:
            k = k.to(tl.float32)
        qk = tl.dot(q, k) * qk_scale  # in log2 units
        causal = (offs_m[:, None] >= cols[None, :]) & col_valid[None, :]
        qk = tl.where(causal, qk, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)

        v_ptrs = v_base + cols[:, None] * stride_vs + offs_d[None, :] * stride_vd
        v = tl.load(v_ptrs, mask=col_valid[:, None] & d_mask[None, :], other=0.0)
        if DOT_FP32:
            v = v.to(tl.float32)
            p = p.to(tl.bfloat16).to(tl.float32)  # keep the bf16 rounding of p
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    out = acc / l_i[:, None]
    o_ptrs = o_ptr + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_os + offs_d[None, :] * stride_od
    tl.store(o_ptrs, out.to(o_ptr.dtype.element_ty), mask=(offs_m[:, None] < seq_len) & d_mask[None, :])


# Triton's CPU interpreter multiplies bf16 tl.dot operands wrongly; under the
# interpreter only, the operands are upcast to fp32 before tl.dot. On GPU the
# flag is False and the dots run on bf16 operands.
_INTERPRET = os.environ.get("TRITON_INTERPRET", "0") == "1"


def causal_attention(q, k, v):
    Bq, Hq, Sq, Dq = q.shape
    o = torch.empty_like(q)
    scale = 1.0 / math.sqrt(Dq)
    qk_scale = scale * 1.4426950408889634  # fold log2(e) for exp2
    BLOCK_M, BLOCK_N = 64, 64
    BLOCK_D = triton.next_power_of_2(Dq)
    grid = (triton.cdiv(Sq, BLOCK_M), Bq * Hq)
    _causal_attn_fwd_kernel[grid](
        q, k, v, o,
        Sq, Dq, Hq, qk_scale,
        q.stride(0), q.stride(1), q.stride(2), q.stride(3),
        k.stride(0), k.stride(1), k.stride(2), k.stride(3),
        v.stride(0), v.stride(1), v.stride(2), v.stride(3),
        o.stride(0), o.stride(1), o.stride(2), o.stride(3),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D,
        DOT_FP32=_INTERPRET,
        num_warps=4,
    )
    return o


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return causal_attention(q, k, v)


def get_inputs():
    q = torch.randn(B, H, S, D, dtype=torch.bfloat16)
    k = torch.randn(B, H, S, D, dtype=torch.bfloat16)
    v = torch.randn(B, H, S, D, dtype=torch.bfloat16)
    return [q, k, v]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 1, "H": 2, "S": 128, "D": 80},
    {"B": 2, "H": 3, "S": 100, "D": 80},
    {"B": 1, "H": 1, "S": 129, "D": 37},
]
