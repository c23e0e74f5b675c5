"""O = softmax(Q K^T * scale) V, non-causal: Q, K, V (BATCH, HEADS, SEQ, 64) bf16, scale = 1/sqrt(64) -> O bf16.

Flash-attention style forward pass. The grid is (query blocks, BATCH * HEADS); each program loads one BLOCK_M x 64
tile of Q once, then streams K and V in BLOCK_N blocks. For every key block it computes S = Q K^T in fp32 with
tl.dot, applies the scale, masks keys past SEQ, and updates the running row max m_i, running denominator l_i and
the fp32 output accumulator with the online-softmax rescaling. P is cast to bf16 for the P @ V dot. At the end the
accumulator is divided by l_i and stored as bf16.

Known problems:
- lines 73-78: softmax uses tl.exp and multiplies the full S tile by the scale every iteration; folding
  scale * log2(e) into Q once and using tl.exp2 saves a multiply per element and maps directly to MUFU.EX2.
- line 74: the key-padding mask (tl.where) is applied on every key block although only the last block can be
  partial (and none is when SEQ is a multiple of BLOCK_N, as in the benchmark shape).
- lines 68-71: K and V loads carry bounds masks on every iteration for the same reason, and the K/V pointer
  tiles are rebuilt from cols each iteration instead of being advanced incrementally (minor integer work).
- lines 93-94: BLOCK_M = BLOCK_N = 64 with default num_warps=4 / num_stages; a 128-row Q tile with
  8 warps and 2-3 stages is typical for head_dim 64 on H200, and there is no autotuning.
- line 80: the accumulator is rescaled by alpha on every iteration even when the row max did not change.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

BATCH = 4
HEADS = 16
SEQ = 2048
HEAD_DIM = 64


@triton.jit
def attn_fwd_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr,
    stride_qb, stride_qh, stride_qs, stride_qd,
    stride_kb, stride_kh, stride_ks, stride_kd,
    stride_vb, stride_vh, stride_vs, stride_vd,
    stride_ob, stride_oh, stride_os, stride_od,
    H, S, sm_scale,
    HEAD_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_D)

    q_base = q_ptr + b * stride_qb + h * stride_qh
    k_base = k_ptr + b * stride_kb + h * stride_kh
    v_base = v_ptr + b * stride_vb + h * stride_vh
    o_base = o_ptr + b * stride_ob + h * stride_oh

    q = tl.load(q_base + offs_m[:, None] * stride_qs + offs_d[None, :] * stride_qd,
                mask=offs_m[:, None] < S, other=0.0)

    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_D), dtype=tl.float32)

    for start_n in range(0, S, BLOCK_N):
        cols = start_n + offs_n
        # K^T tile: (HEAD_D, BLOCK_N)
        kt = tl.load(k_base + cols[None, :] * stride_ks + offs_d[:, None] * stride_kd,
                     mask=cols[None, :] < S, other=0.0)
        v = tl.load(v_base + cols[:, None] * stride_vs + offs_d[None, :] * stride_vd,
                    mask=cols[:, None] < S, other=0.0)

        qk = tl.dot(q, kt) * sm_scale
        qk = tl.where(cols[None, :] < S, qk, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    out = acc / l_i[:, None]
    tl.store(o_base + offs_m[:, None] * stride_os + offs_d[None, :] * stride_od,
             out.to(o_ptr.dtype.element_ty), mask=offs_m[:, None] < S)


def attention(q, k, v):
    B, H, S, D = q.shape
    assert k.shape == q.shape and v.shape == q.shape
    o = torch.empty_like(q)
    sm_scale = 1.0 / math.sqrt(D)
    BLOCK_M = 64
    BLOCK_N = 64
    grid = (triton.cdiv(S, BLOCK_M), B * H)
    attn_fwd_kernel[grid](
        q, k, v, o,
        q.stride(0), q.stride(1), q.stride(2), q.stride(3),
        k.stride(0), k.stride(1), k.stride(2), k.stride(3),
        v.stride(0), v.stride(1), v.stride(2), v.stride(3),
        o.stride(0), o.stride(1), o.stride(2), o.stride(3),
        H, S, sm_scale,
        HEAD_D=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
    )
    return o


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return attention(q, k, v)


def get_inputs():
    q = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM).to(torch.bfloat16)
    k = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM).to(torch.bfloat16)
    v = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM).to(torch.bfloat16)
    return [q, k, v]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BATCH": 2, "HEADS": 3, "SEQ": 37},
    {"BATCH": 1, "HEADS": 2, "SEQ": 129},
    {"BATCH": 2, "HEADS": 2, "SEQ": 71},
]
