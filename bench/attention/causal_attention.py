"""Causal scaled dot-product attention for fp16 q, k, v (B, H, S, D): softmax(q k^T / sqrt(D) + causal mask) v.

Known problems:
- line 35: every key block visited for every query block, the causal part only masked: half the work wasted
- line 40: the 1/sqrt(D) scale applied to the score tile per block instead of to q once
- line 45: tl.exp instead of exp2 with a log2(e)-folded scale
- line 65: BLOCK_M=BLOCK_N=32 with the default num_warps and num_stages
"""

import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 4
H = 16
S = 2048
D = 64
TEST_SHAPES = [{"B": 1, "H": 2, "S": 45, "D": 16}, {"B": 1, "H": 1, "S": 64, "D": 16}]


@triton.jit
def causal_attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq, scale, stride_bh, stride_s,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    bh = tl.program_id(0)
    offs_m = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    base = bh * stride_bh
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :], mask=offs_m[:, None] < seq, other=0.0)
    m_i = tl.full((BLOCK_M,), -float("inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    for start in range(0, seq, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        kv_mask = offs_n[:, None] < seq
        k = tl.load(k_ptr + base + offs_n[:, None] * stride_s + offs_d[None, :], mask=kv_mask, other=0.0)
        v = tl.load(v_ptr + base + offs_n[:, None] * stride_s + offs_d[None, :], mask=kv_mask, other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale
        allowed = (offs_n[None, :] <= offs_m[:, None]) & (offs_n[None, :] < seq)
        s = tl.where(allowed, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :], out.to(tl.float16), mask=offs_m[:, None] < seq)


class Model(nn.Module):
    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=True).half()


class ModelNew(nn.Module):
    def forward(self, q, k, v):
        bsz, heads, seq, dim = q.shape
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        o = torch.empty_like(q)
        grid = (bsz * heads, triton.cdiv(seq, 32))
        causal_attention_kernel[grid](q, k, v, o, seq, 1.0 / math.sqrt(dim), seq * dim, dim,
                                      BLOCK_M=32, BLOCK_N=32, HEAD_DIM=dim)
        return o


def get_inputs():
    return [torch.randn(B, H, S, D, dtype=torch.float16) for _ in range(3)]


def get_init_inputs():
    return []
