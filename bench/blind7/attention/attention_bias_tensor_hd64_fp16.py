"""Attention with an additive learned per-head bias tensor, head dim 64.

Computes
    scores = q @ k^T / sqrt(D) + bias      (bias broadcast over the batch)
    out    = softmax(scores, dim=-1) @ v
which is torch.nn.functional.scaled_dot_product_attention(q, k, v,
attn_mask=bias) with a float additive mask.

Shapes / dtypes:
    q, k, v: (B, H, S, D) float16, B=2, H=8, S=1024, D=64
    bias:    (H, S, S) float16 (per-head learned bias, passed as an input)
    out:     (B, H, S, D) float16

Known problems:
- The bias tile is re-read from global memory by every batch element
  (B programs read the same (H, S, S) bias); no sharing of a bias tile
  across the batch inside one program.
- The bias loads are masked 2-D gathers done in the inner loop next to the
  K/V loads, adding memory traffic (bias is S*S per head, larger than K/V)
  with no prefetch beyond what num_stages gives.
- Block sizes (BLOCK_M=64, BLOCK_N=64), num_warps and num_stages are fixed
  guesses, not tuned.
- Every tile load is masked even for full interior tiles.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

B = 2
H = 8
S = 1024
D = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v, bias):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias)


@triton.jit
def _attn_bias_fwd_kernel(
    Q, K, V, BIAS, O,
    stride_qb, stride_qh, stride_qs, stride_qd,
    stride_kb, stride_kh, stride_ks, stride_kd,
    stride_vb, stride_vh, stride_vs, stride_vd,
    stride_bh, stride_bm, stride_bn,
    stride_ob, stride_oh, stride_os, stride_od,
    NH, SEQ, HEAD_DIM, sm_scale,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):
    LOG2E: tl.constexpr = 1.4426950408889634
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // NH
    h = pid_bh % NH

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    mask_m = offs_m < SEQ
    mask_d = offs_d < HEAD_DIM

    q_ptrs = Q + b * stride_qb + h * stride_qh + offs_m[:, None] * stride_qs + offs_d[None, :] * stride_qd
    q = tl.load(q_ptrs, mask=mask_m[:, None] & mask_d[None, :], other=0.0)

    k_base = K + b * stride_kb + h * stride_kh
    v_base = V + b * stride_vb + h * stride_vh
    bias_base = BIAS + h * stride_bh + offs_m[:, None] * stride_bm

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)

    for start_n in range(0, SEQ, BLOCK_N):
        cols = start_n + offs_n
        mask_n = cols < SEQ
        kt = tl.load(k_base + cols[None, :] * stride_ks + offs_d[:, None] * stride_kd,
                     mask=mask_n[None, :] & mask_d[:, None], other=0.0)  # [BLOCK_D, BLOCK_N]
        bias = tl.load(bias_base + cols[None, :] * stride_bn,
                       mask=mask_m[:, None] & mask_n[None, :], other=0.0)
        s = tl.dot(q, kt) * sm_scale + bias.to(tl.float32)
        s = s * LOG2E
        s = tl.where(mask_n[None, :], s, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)

        v = tl.load(v_base + cols[:, None] * stride_vs + offs_d[None, :] * stride_vd,
                    mask=mask_n[:, None] & mask_d[None, :], other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    acc = acc / l_i[:, None]
    o_ptrs = O + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_os + offs_d[None, :] * stride_od
    tl.store(o_ptrs, acc.to(O.dtype.element_ty), mask=mask_m[:, None] & mask_d[None, :])


def triton_attention_bias(q, k, v, bias):
    Bq, Hq, Sq, Dq = q.shape
    assert bias.shape == (Hq, Sq, Sq)
    out = torch.empty_like(q)
    BLOCK_M = 64
    BLOCK_N = 64
    BLOCK_D = max(16, triton.next_power_of_2(Dq))
    sm_scale = 1.0 / math.sqrt(Dq)
    grid = (triton.cdiv(Sq, BLOCK_M), Bq * Hq)
    _attn_bias_fwd_kernel[grid](
        q, k, v, bias, out,
        q.stride(0), q.stride(1), q.stride(2), q.stride(3),
        k.stride(0), k.stride(1), k.stride(2), k.stride(3),
        v.stride(0), v.stride(1), v.stride(2), v.stride(3),
        bias.stride(0), bias.stride(1), bias.stride(2),
        out.stride(0), out.stride(1), out.stride(2), out.stride(3),
        Hq, Sq, Dq, sm_scale,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D,
        num_warps=4, num_stages=2,
    )
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v, bias):
        return triton_attention_bias(q, k, v, bias)


def get_inputs():
    q = torch.randn(B, H, S, D, dtype=torch.float16)
    k = torch.randn(B, H, S, D, dtype=torch.float16)
    v = torch.randn(B, H, S, D, dtype=torch.float16)
    bias = torch.randn(H, S, S, dtype=torch.float16)
    return [q, k, v, bias]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 1, "H": 2, "S": 37, "D": 64},
    {"B": 2, "H": 3, "S": 100, "D": 64},
    {"B": 1, "H": 2, "S": 129, "D": 32},
]
