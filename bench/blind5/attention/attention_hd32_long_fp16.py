"""Non-causal scaled-dot-product attention with a small head dim and long sequence.

q, k, v are (B, H, S, D) fp16; out = softmax(q k^T * (1/sqrt(D))) v, (B, H, S, D) fp16.
Softmax and dot accumulation in fp32 (online softmax, flash-attention style).
Benchmark shape: B = 2, H = 16, S = 4096, D = 32.

Known problems:
- L66-L83: with D = 32 each (64 x 64) key block carries very little dot work (K-dim 32), so the loop is dominated by the softmax bookkeeping (max, exp, rescale of acc) rather than tensor-core work; BLOCK_N = 64 is small for that.
- L68-L72: the key tail mask (compare + where) is applied in every iteration of the key loop, though only the last block can be partial.
- L71-L76: softmax uses tl.exp with the scale multiplied into every qk tile, instead of folding scale*log2(e) into q once and using exp2.
- L93-L96: fixed BLOCK_M = BLOCK_N = 64 with default num_warps/num_stages and no autotuning; for D = 32 a larger BLOCK_M (more query rows per loaded K/V tile) would cut K/V re-reads across the 64 query blocks per head.
"""
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 2
H = 16
S = 4096
D = 32


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        scale = 1.0 / math.sqrt(q.shape[-1])
        s = torch.matmul(q.float(), k.float().transpose(-1, -2)) * scale
        p = torch.softmax(s, dim=-1)
        return torch.matmul(p, v.float()).to(q.dtype)


@triton.jit
def attn_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, head_dim, scale,
                stride_qb, stride_qh, stride_qs, stride_qd,
                stride_kb, stride_kh, stride_ks, stride_kd,
                stride_vb, stride_vh, stride_vs, stride_vd,
                stride_ob, stride_oh, stride_os, stride_od,
                n_heads,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // n_heads
    h = pid_bh % n_heads
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    m_valid = offs_m < seq_len
    d_valid = offs_d < head_dim

    q_base = q_ptr + b * stride_qb + h * stride_qh
    k_base = k_ptr + b * stride_kb + h * stride_kh
    v_base = v_ptr + b * stride_vb + h * stride_vh
    o_base = o_ptr + b * stride_ob + h * stride_oh

    q = tl.load(q_base + offs_m[:, None] * stride_qs + offs_d[None, :] * stride_qd,
                mask=m_valid[:, None] & d_valid[None, :], other=0.0)

    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)

    for start_n in range(0, seq_len, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        n_valid = offs_n < seq_len
        kt = tl.load(k_base + offs_n[None, :] * stride_ks + offs_d[:, None] * stride_kd,
                     mask=n_valid[None, :] & d_valid[:, None], other=0.0)
        qk = tl.dot(q, kt) * scale
        qk = tl.where(n_valid[None, :], qk, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]

        v = tl.load(v_base + offs_n[:, None] * stride_vs + offs_d[None, :] * stride_vd,
                    mask=n_valid[:, None] & d_valid[None, :], other=0.0)
        acc += tl.dot(p.to(v.dtype), v)
        m_i = m_new

    acc = acc / l_i[:, None]
    tl.store(o_base + offs_m[:, None] * stride_os + offs_d[None, :] * stride_od,
             acc.to(o_ptr.dtype.element_ty), mask=m_valid[:, None] & d_valid[None, :])


def triton_attention(q, k, v):
    b, h, s, d = q.shape
    o = torch.empty_like(q)
    BLOCK_M, BLOCK_N = 64, 64
    BLOCK_D = max(16, triton.next_power_of_2(d))
    scale = 1.0 / math.sqrt(d)
    grid = (triton.cdiv(s, BLOCK_M), b * h)
    attn_kernel[grid](q, k, v, o, s, d, scale,
                      q.stride(0), q.stride(1), q.stride(2), q.stride(3),
                      k.stride(0), k.stride(1), k.stride(2), k.stride(3),
                      v.stride(0), v.stride(1), v.stride(2), v.stride(3),
                      o.stride(0), o.stride(1), o.stride(2), o.stride(3),
                      h,
                      BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D)
    return o


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return triton_attention(q, k, v)


def get_inputs():
    q = torch.randn(B, H, S, D, dtype=torch.float16)
    k = torch.randn(B, H, S, D, dtype=torch.float16)
    v = torch.randn(B, H, S, D, dtype=torch.float16)
    return [q, k, v]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 1, "H": 2, "S": 128, "D": 32},
    {"B": 2, "H": 3, "S": 37, "D": 32},
    {"B": 1, "H": 2, "S": 129, "D": 32},
]
