"""Causal attention: softmax(Q K^T / sqrt(HEAD_DIM) + causal mask) V with Q, K, V of shape
(BATCH, HEADS, SEQ_LEN, HEAD_DIM) bf16, HEAD_DIM = 128; output the same shape, bf16.

The Triton version is a flash-attention style forward: one program per (BLOCK_M query rows,
batch*head); it streams K/V blocks of BLOCK_N keys up to the causal limit, keeps an online
softmax (running max and sum in fp32) and an fp32 accumulator, and divides at the end.

Known problems:
- line 88: the causal and sequence-length mask is computed and applied on every K/V block, not only on the diagonal block; lines 79-82 likewise mask every K/V load.
- lines 86, 91-92: tl.exp with a separate sm_scale multiply on every score; folding scale*log2(e) and using exp2 is cheaper.
- line 109: BLOCK_M = BLOCK_N = 64 with the default num_warps=4/num_stages and no autotuning; for head dim 128 on H200 larger query tiles (128) with 8 warps and pipelined K/V loads are typical.
- line 111: query blocks are launched in index order, so the most expensive causal blocks (the last rows) start last, which leaves a load-imbalanced tail; no longest-first ordering.
"""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

BATCH = 2
HEADS = 16
SEQ_LEN = 4096
HEAD_DIM = 128

_INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


@triton.jit
def _causal_attn_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr,
    H, L, sm_scale,
    stride_qb, stride_qh, stride_ql, stride_qd,
    stride_kb, stride_kh, stride_kl, stride_kd,
    stride_vb, stride_vh, stride_vl, stride_vd,
    stride_ob, stride_oh, stride_ol, stride_od,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_D: tl.constexpr,
    UPCAST: tl.constexpr,
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

    q = tl.load(q_base + offs_m[:, None] * stride_ql + offs_d[None, :] * stride_qd,
                mask=offs_m[:, None] < L, other=0.0)
    if UPCAST:
        # CPU interpreter only: its tl.dot on bf16 operands is wrong, so upcast there.
        q = q.to(tl.float32)

    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_D), dtype=tl.float32)

    # causal: keys up to the last query row of this block
    hi = tl.minimum((pid_m + 1) * BLOCK_M, L)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        kv_mask = cols[:, None] < L
        k = tl.load(k_base + cols[:, None] * stride_kl + offs_d[None, :] * stride_kd,
                    mask=kv_mask, other=0.0)
        v = tl.load(v_base + cols[:, None] * stride_vl + offs_d[None, :] * stride_vd,
                    mask=kv_mask, other=0.0)
        if UPCAST:
            k = k.to(tl.float32)
            v = v.to(tl.float32)
        s = tl.dot(q, tl.trans(k)) * sm_scale
        valid = (cols[None, :] <= offs_m[:, None]) & (cols[None, :] < L)
        s = tl.where(valid, s, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        if UPCAST:
            acc += tl.dot(p, v)
        else:
            acc += tl.dot(p.to(tl.bfloat16), v)
        m_i = m_new

    out = acc / l_i[:, None]
    tl.store(o_base + offs_m[:, None] * stride_ol + offs_d[None, :] * stride_od,
             out.to(tl.bfloat16), mask=offs_m[:, None] < L)


def causal_attention(q, k, v):
    B, H, L, D = q.shape
    o = torch.empty_like(q)
    BLOCK_M, BLOCK_N = 64, 64
    sm_scale = 1.0 / math.sqrt(D)
    grid = (triton.cdiv(L, BLOCK_M), B * H)
    _causal_attn_kernel[grid](
        q, k, v, o,
        H, L, sm_scale,
        q.stride(0), q.stride(1), q.stride(2), q.stride(3),
        k.stride(0), k.stride(1), k.stride(2), k.stride(3),
        v.stride(0), v.stride(1), v.stride(2), v.stride(3),
        o.stride(0), o.stride(1), o.stride(2), o.stride(3),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, HEAD_D=D,
        UPCAST=_INTERPRET,
    )
    return o


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return causal_attention(q, k, v)


def get_inputs():
    shape = (BATCH, HEADS, SEQ_LEN, HEAD_DIM)
    q = torch.randn(shape, dtype=torch.bfloat16)
    k = torch.randn(shape, dtype=torch.bfloat16)
    v = torch.randn(shape, dtype=torch.bfloat16)
    return [q, k, v]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BATCH": 1, "HEADS": 2, "SEQ_LEN": 128},
    {"BATCH": 2, "HEADS": 3, "SEQ_LEN": 37},
    {"BATCH": 1, "HEADS": 2, "SEQ_LEN": 129},
]
