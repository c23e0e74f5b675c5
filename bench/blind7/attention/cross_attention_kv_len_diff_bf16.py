"""Non-causal cross attention with different query and key/value lengths, bf16.

Computes out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
(no mask, default scale 1/sqrt(D)) where the key/value sequence length Skv
differs from the query length Sq.

Shapes / dtypes:
    q:    (B, H, Sq, D)  bfloat16, B=4, H=8, Sq=512, D=64
    k, v: (B, H, Skv, D) bfloat16, Skv=3000 (not a multiple of the block size)
    out:  (B, H, Sq, D)  bfloat16

Known problems:
- Only Sq/BLOCK_M * B * H = 8 * 32 = 256 programs, each walking all 3000
  keys serially; no split over the KV length, so the GPU is under-filled.
- Every K/V tile load and score tile is masked, although only the last
  (partial) KV block of 3000 % 64 = 56 keys needs it.
- Block sizes (BLOCK_M=64, BLOCK_N=64), num_warps and num_stages are fixed,
  untuned guesses.
"""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

B = 4
H = 8
SQ = 512
SKV = 3000
D = 64

# Triton's CPU interpreter multiplies bf16 tl.dot operands wrongly; under the
# interpreter only, the dot operands are upcast to fp32. On a GPU the dots
# stay bf16.
_DOT_FP32 = os.environ.get("TRITON_INTERPRET") == "1"


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v)


@triton.jit
def _cross_attn_fwd_kernel(
    Q, K, V, O,
    stride_qb, stride_qh, stride_qs, stride_qd,
    stride_kb, stride_kh, stride_ks, stride_kd,
    stride_vb, stride_vh, stride_vs, stride_vd,
    stride_ob, stride_oh, stride_os, stride_od,
    NH, SEQ_Q, SEQ_KV, HEAD_DIM, qk_scale_log2,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
    DOT_FP32: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // NH
    h = pid_bh % NH

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    mask_m = offs_m < SEQ_Q
    mask_d = offs_d < HEAD_DIM

    q_ptrs = Q + b * stride_qb + h * stride_qh + offs_m[:, None] * stride_qs + offs_d[None, :] * stride_qd
    q = tl.load(q_ptrs, mask=mask_m[:, None] & mask_d[None, :], other=0.0)
    if DOT_FP32:
        q = q.to(tl.float32)

    k_base = K + b * stride_kb + h * stride_kh
    v_base = V + b * stride_vb + h * stride_vh

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)

    for start_n in range(0, SEQ_KV, BLOCK_N):
        cols = start_n + offs_n
        mask_n = cols < SEQ_KV
        kt = tl.load(k_base + cols[None, :] * stride_ks + offs_d[:, None] * stride_kd,
                     mask=mask_n[None, :] & mask_d[:, None], other=0.0)  # [BLOCK_D, BLOCK_N]
        if DOT_FP32:
            kt = kt.to(tl.float32)
        s = tl.dot(q, kt) * qk_scale_log2
        s = tl.where(mask_n[None, :], s, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)

        v = tl.load(v_base + cols[:, None] * stride_vs + offs_d[None, :] * stride_vd,
                    mask=mask_n[:, None] & mask_d[None, :], other=0.0)
        p = p.to(v.dtype)
        if DOT_FP32:
            pv = tl.dot(p.to(tl.float32), v.to(tl.float32))
        else:
            pv = tl.dot(p, v)
        acc = acc * alpha[:, None] + pv
        m_i = m_new

    acc = acc / l_i[:, None]
    o_ptrs = O + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_os + offs_d[None, :] * stride_od
    tl.store(o_ptrs, acc.to(O.dtype.element_ty), mask=mask_m[:, None] & mask_d[None, :])


def triton_cross_attention(q, k, v):
    Bq, Hq, Sq, Dq = q.shape
    Skv = k.shape[2]
    out = torch.empty_like(q)
    BLOCK_M = 64
    BLOCK_N = 64
    BLOCK_D = max(16, triton.next_power_of_2(Dq))
    qk_scale_log2 = (1.0 / math.sqrt(Dq)) * 1.4426950408889634
    grid = (triton.cdiv(Sq, BLOCK_M), Bq * Hq)
    _cross_attn_fwd_kernel[grid](
        q, k, v, out,
        q.stride(0), q.stride(1), q.stride(2), q.stride(3),
        k.stride(0), k.stride(1), k.stride(2), k.stride(3),
        v.stride(0), v.stride(1), v.stride(2), v.stride(3),
        out.stride(0), out.stride(1), out.stride(2), out.stride(3),
        Hq, Sq, Skv, Dq, qk_scale_log2,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D,
        DOT_FP32=_DOT_FP32,
        num_warps=4, num_stages=2,
    )
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return triton_cross_attention(q, k, v)


def get_inputs():
    q = torch.randn(B, H, SQ, D, dtype=torch.bfloat16)
    k = torch.randn(B, H, SKV, D, dtype=torch.bfloat16)
    v = torch.randn(B, H, SKV, D, dtype=torch.bfloat16)
    return [q, k, v]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 1, "H": 2, "SQ": 37, "SKV": 100, "D": 64},
    {"B": 2, "H": 1, "SQ": 100, "SKV": 37, "D": 64},
    {"B": 1, "H": 2, "SQ": 20, "SKV": 300, "D": 32},
]
