"""Non-causal cross attention: out = softmax(Q K^T / sqrt(64)) V, Q (B, H, Lq, 64), K/V (B, H, Lk, 64), fp16.

Known problems:
- Lines 59, 62-63: softmax uses tl.exp with the 1/sqrt(d) scale multiplied into every S tile, instead of folding scale*log2(e) into q once and using exp2.
- Lines 57, 60: KV-boundary mask and tl.where applied on every KV tile although Lk is a multiple of BLOCK_N for the benchmark shape.
- Line 78: fixed 64x64 blocks, no autotuning, default num_warps/num_stages (no software pipelining of K/V loads tuned); BLOCK_M=128 with 8 warps is typical for d=64.
"""
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 4
H = 16
LQ = 512
LK = 4096
HEAD_DIM = 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        scale = 1.0 / math.sqrt(q.shape[-1])
        scores = torch.matmul(q.float(), k.float().transpose(-2, -1)) * scale
        p = torch.softmax(scores, dim=-1)
        return torch.matmul(p, v.float()).to(q.dtype)


@triton.jit
def cross_attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, Lq, Lk, scale,
                          stride_qb, stride_qh, stride_qm, stride_qd,
                          stride_kb, stride_kh, stride_kn, stride_kd,
                          stride_vb, stride_vh, stride_vn, stride_vd,
                          stride_ob, stride_oh, stride_om, stride_od,
                          NUM_HEADS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                          HEAD_D: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // NUM_HEADS
    h = pid_bh % NUM_HEADS
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_D)
    q_base = q_ptr + b * stride_qb + h * stride_qh
    k_base = k_ptr + b * stride_kb + h * stride_kh
    v_base = v_ptr + b * stride_vb + h * stride_vh
    q = tl.load(q_base + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qd,
                mask=offs_m[:, None] < Lq, other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_D), dtype=tl.float32)
    for n0 in range(0, Lk, BLOCK_N):
        offs_n = n0 + tl.arange(0, BLOCK_N)
        kv_mask = offs_n[:, None] < Lk
        k = tl.load(k_base + offs_n[:, None] * stride_kn + offs_d[None, :] * stride_kd, mask=kv_mask, other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale
        s = tl.where(offs_n[None, :] < Lk, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        v = tl.load(v_base + offs_n[:, None] * stride_vn + offs_d[None, :] * stride_vd, mask=kv_mask, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    out = acc / l_i[:, None]
    o_base = o_ptr + b * stride_ob + h * stride_oh
    tl.store(o_base + offs_m[:, None] * stride_om + offs_d[None, :] * stride_od, out.to(tl.float16),
             mask=offs_m[:, None] < Lq)


def cross_attention(q, k, v):
    Bq, Hq, Lq, D = q.shape
    Lk = k.shape[2]
    o = torch.empty_like(q)
    BLOCK_M, BLOCK_N = 64, 64
    grid = (triton.cdiv(Lq, BLOCK_M), Bq * Hq)
    cross_attn_fwd_kernel[grid](q, k, v, o, Lq, Lk, 1.0 / math.sqrt(D),
                                q.stride(0), q.stride(1), q.stride(2), q.stride(3),
                                k.stride(0), k.stride(1), k.stride(2), k.stride(3),
                                v.stride(0), v.stride(1), v.stride(2), v.stride(3),
                                o.stride(0), o.stride(1), o.stride(2), o.stride(3),
                                NUM_HEADS=Hq, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, HEAD_D=D)
    return o


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return cross_attention(q, k, v)


def get_inputs():
    q = torch.randn(B, H, LQ, HEAD_DIM).half()
    k = torch.randn(B, H, LK, HEAD_DIM).half()
    v = torch.randn(B, H, LK, HEAD_DIM).half()
    return [q, k, v]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 1, "H": 2, "LQ": 64, "LK": 128},
    {"B": 2, "H": 3, "LQ": 37, "LK": 129},
]
