"""O = softmax(Q K^T * scale + causal_mask) V: Q, K, V (BATCH, HEADS, SEQ, 128) fp16, scale = 1/sqrt(128) -> O fp16.

Flash-attention style causal forward pass. The grid is (query blocks, BATCH * HEADS); each program keeps one
BLOCK_M x 128 tile of Q resident and streams K/V blocks from key 0 up to the end of its own query block (blocks
entirely above the diagonal are skipped). Each step computes S = Q K^T in fp32 with tl.dot, scales it, applies the
causal and sequence-length mask with tl.where, and does the online-softmax update of the row max, the denominator
and the fp32 accumulator; P is cast to fp16 for the P @ V dot. The result is normalized and stored as fp16.

Known problems:
- lines 77-78: the causal mask is built and applied on every key block, although only the block(s) on the diagonal
  need it; splitting the loop into an unmasked off-diagonal part and a masked diagonal part removes this work.
- line 99: query blocks are launched in ascending order on grid axis 0, so the cheapest (early) blocks run
  first and the most expensive (late, near-full-row) blocks form a long tail; launching heavy blocks first or a
  persistent schedule balances causal work better.
- lines 76-82: tl.exp plus a full-tile multiply by sm_scale every iteration instead of pre-scaling Q by
  scale * log2(e) once and using tl.exp2.
- lines 97-98: BLOCK_M = BLOCK_N = 64 with default num_warps=4 / num_stages; for head_dim 128 on H200 a
  128 x 64 tile with 8 warps and pipelined K/V loads is typical, and nothing is autotuned.
- lines 71-74: K and V loads are bounds-masked on every iteration although only the last block can
  run past SEQ.
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
HEAD_DIM = 128


@triton.jit
def causal_attn_fwd_kernel(
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

    # keys beyond the last query row of this block are never attended
    end_n = tl.minimum((pid_m + 1) * BLOCK_M, S)
    for start_n in range(0, end_n, BLOCK_N):
        cols = start_n + offs_n
        kt = tl.load(k_base + cols[None, :] * stride_ks + offs_d[:, None] * stride_kd,
                     mask=cols[None, :] < S, other=0.0)
        v = tl.load(v_base + cols[:, None] * stride_vs + offs_d[None, :] * stride_vd,
                    mask=cols[:, None] < S, other=0.0)

        qk = tl.dot(q, kt) * sm_scale
        causal = (offs_m[:, None] >= cols[None, :]) & (cols[None, :] < S)
        qk = tl.where(causal, qk, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    out = acc / l_i[:, None]
    tl.store(o_base + offs_m[:, None] * stride_os + offs_d[None, :] * stride_od,
             out.to(o_ptr.dtype.element_ty), mask=offs_m[:, None] < S)


def causal_attention(q, k, v):
    B, H, S, D = q.shape
    assert k.shape == q.shape and v.shape == q.shape
    o = torch.empty_like(q)
    sm_scale = 1.0 / math.sqrt(D)
    BLOCK_M = 64
    BLOCK_N = 64
    grid = (triton.cdiv(S, BLOCK_M), B * H)
    causal_attn_fwd_kernel[grid](
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
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return causal_attention(q, k, v)


def get_inputs():
    q = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM).to(torch.float16)
    k = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM).to(torch.float16)
    v = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM).to(torch.float16)
    return [q, k, v]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BATCH": 2, "HEADS": 3, "SEQ": 37},
    {"BATCH": 1, "HEADS": 2, "SEQ": 129},
    {"BATCH": 2, "HEADS": 2, "SEQ": 71},
]
