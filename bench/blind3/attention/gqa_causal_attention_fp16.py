"""Grouped-query causal scaled-dot-product attention, fp16.

q: (BATCH, Q_HEADS, SEQ, HEAD_DIM) = (2, 32, 2048, 64) fp16
k, v: (BATCH, KV_HEADS, SEQ, HEAD_DIM) = (2, 8, 2048, 64) fp16
Query head h uses kv head h // (Q_HEADS // KV_HEADS) (each kv head serves 4 query heads).
out: (2, 32, 2048, 64) fp16, causal softmax(q k^T / sqrt(64)) v.
Reference: k, v repeat_interleave'd to Q_HEADS, then
torch.nn.functional.scaled_dot_product_attention(is_causal=True).
The Triton port is a single-pass online-softmax (flash-attention style) forward kernel; one program per
(query block, query head), reading K/V of its kv head directly (no materialized repeat).

Known problems:
- line 96: each query head is its own program, so the 4 query heads of a group each re-read the same K/V tiles (relying on L2 for reuse) instead of one program handling the whole group
- line 72: causal mask (compare + where) is evaluated on every K block, although only blocks on the diagonal need it
- lines 70, 75-76: tl.exp with a separate scale multiply on S instead of exp2 with log2(e) folded into the scale
- lines 95, 105: BLOCK_M/BLOCK_N/num_warps/num_stages fixed by hand, no autotuning
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

BATCH = 2
Q_HEADS = 32
KV_HEADS = 8
SEQ = 2048
HEAD_DIM = 64


@triton.jit
def _gqa_causal_attn_fwd(
    Q, K, V, O, sm_scale,
    stride_qz, stride_qh, stride_qm, stride_qd,
    stride_kz, stride_kh, stride_kn, stride_kd,
    stride_vz, stride_vh, stride_vn, stride_vd,
    stride_oz, stride_oh, stride_om, stride_od,
    H, GROUP, N_CTX,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H
    h_kv = h // GROUP

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)

    q_base = Q + b * stride_qz + h * stride_qh
    k_base = K + b * stride_kz + h_kv * stride_kh
    v_base = V + b * stride_vz + h_kv * stride_vh

    q_ptrs = q_base + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qd
    q = tl.load(q_ptrs, mask=offs_m[:, None] < N_CTX, other=0.0)

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)

    # causal: keys beyond the last query row of this block are never visible
    hi = tl.minimum((pid_m + 1) * BLOCK_M, N_CTX)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        k_ptrs = k_base + cols[None, :] * stride_kn + offs_d[:, None] * stride_kd
        k = tl.load(k_ptrs, mask=cols[None, :] < N_CTX, other=0.0)
        s = tl.dot(q, k) * sm_scale
        valid = (cols[None, :] < N_CTX) & (cols[None, :] <= offs_m[:, None])
        s = tl.where(valid, s, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]

        v_ptrs = v_base + cols[:, None] * stride_vn + offs_d[None, :] * stride_vd
        v = tl.load(v_ptrs, mask=cols[:, None] < N_CTX, other=0.0)
        acc += tl.dot(p.to(v.dtype), v)
        m_i = m_new

    acc = acc / l_i[:, None]
    o_ptrs = O + b * stride_oz + h * stride_oh + offs_m[:, None] * stride_om + offs_d[None, :] * stride_od
    tl.store(o_ptrs, acc.to(O.dtype.element_ty), mask=offs_m[:, None] < N_CTX)


def gqa_causal_attention(q, k, v, sm_scale):
    B, H, N, D = q.shape
    H_KV = k.shape[1]
    assert H % H_KV == 0
    o = torch.empty_like(q)
    BLOCK_M, BLOCK_N = 128, 64
    grid = (triton.cdiv(N, BLOCK_M), B * H)
    _gqa_causal_attn_fwd[grid](
        q, k, v, o, sm_scale,
        q.stride(0), q.stride(1), q.stride(2), q.stride(3),
        k.stride(0), k.stride(1), k.stride(2), k.stride(3),
        v.stride(0), v.stride(1), v.stride(2), v.stride(3),
        o.stride(0), o.stride(1), o.stride(2), o.stride(3),
        H, H // H_KV, N,
        HEAD_DIM=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
        num_warps=4, num_stages=3,
    )
    return o


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        group = q.shape[1] // k.shape[1]
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=1.0 / math.sqrt(q.shape[-1]))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return gqa_causal_attention(q, k, v, 1.0 / math.sqrt(q.shape[-1]))


def get_inputs():
    q = torch.randn(BATCH, Q_HEADS, SEQ, HEAD_DIM, dtype=torch.float16)
    k = torch.randn(BATCH, KV_HEADS, SEQ, HEAD_DIM, dtype=torch.float16)
    v = torch.randn(BATCH, KV_HEADS, SEQ, HEAD_DIM, dtype=torch.float16)
    return [q, k, v]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BATCH": 1, "Q_HEADS": 4, "KV_HEADS": 1, "SEQ": 128, "HEAD_DIM": 64},
    {"BATCH": 2, "Q_HEADS": 8, "KV_HEADS": 2, "SEQ": 37, "HEAD_DIM": 64},
    {"BATCH": 1, "Q_HEADS": 4, "KV_HEADS": 2, "SEQ": 201, "HEAD_DIM": 64},
]
