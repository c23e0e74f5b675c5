"""O = softmax(Q K^T * scale + keypad_mask) V: Q, K, V (BATCH, HEADS, SEQ, 32) fp16, lens (BATCH,) int32 -> O fp16;
for batch b, keys with index >= lens[b] are masked out (every query row is kept), scale = 1/sqrt(32).

Flash-attention style non-causal forward pass. The grid is (query blocks, BATCH * HEADS); each program reads the key
length of its batch entry from lens, keeps one BLOCK_M x 32 Q tile resident and streams K/V in BLOCK_N blocks over
the whole sequence. Scores are computed with tl.dot in fp32, scaled, and keys at or beyond the key length are set
to -inf before the online-softmax update (running max, denominator, fp32 accumulator). P is cast to fp16 for the
P @ V dot; the normalized result is stored as fp16. lens[b] is assumed to be >= 1.

Known problems:
- line 69: the key loop always runs over the full SEQ, so key blocks that lie entirely past lens[b] are still
  loaded and multiplied just to be masked away; looping to lens[b] (rounded up to BLOCK_N) skips them, which with
  random lengths saves about half the work.
- line 78: the key-length mask is applied to every key block, although only the block containing lens[b] is
  partial.
- lines 77-82: tl.exp plus a full-tile multiply by sm_scale each iteration, instead of pre-scaling Q by
  scale * log2(e) and using tl.exp2.
- lines 98-99: BLOCK_M = BLOCK_N = 64 with default num_warps / num_stages: with head_dim 32 each K/V
  block carries little work, so larger BLOCK_N / BLOCK_M (e.g. 128) and tuned warps/stages are needed to amortize
  the softmax bookkeeping; nothing is autotuned.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

BATCH = 8
HEADS = 16
SEQ = 2048
HEAD_DIM = 32


@triton.jit
def keypad_attn_fwd_kernel(
    q_ptr, k_ptr, v_ptr, lens_ptr, o_ptr,
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

    kv_len = tl.load(lens_ptr + b)

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
        key_ok = cols < kv_len
        kt = tl.load(k_base + cols[None, :] * stride_ks + offs_d[:, None] * stride_kd,
                     mask=key_ok[None, :], other=0.0)
        v = tl.load(v_base + cols[:, None] * stride_vs + offs_d[None, :] * stride_vd,
                    mask=key_ok[:, None], other=0.0)

        qk = tl.dot(q, kt) * sm_scale
        qk = tl.where(key_ok[None, :], qk, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    out = acc / l_i[:, None]
    tl.store(o_base + offs_m[:, None] * stride_os + offs_d[None, :] * stride_od,
             out.to(o_ptr.dtype.element_ty), mask=offs_m[:, None] < S)


def keypad_attention(q, k, v, lens):
    B, H, S, D = q.shape
    assert k.shape == q.shape and v.shape == q.shape and lens.shape == (B,)
    lens = lens.to(torch.int32).contiguous()
    o = torch.empty_like(q)
    sm_scale = 1.0 / math.sqrt(D)
    BLOCK_M = 64
    BLOCK_N = 64
    grid = (triton.cdiv(S, BLOCK_M), B * H)
    keypad_attn_fwd_kernel[grid](
        q, k, v, lens, o,
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

    def forward(self, q, k, v, lens):
        S = q.shape[2]
        key_mask = torch.arange(S, device=q.device)[None, :] < lens[:, None].to(torch.int64)  # (B, S), True = keep
        return F.scaled_dot_product_attention(q, k, v, attn_mask=key_mask[:, None, None, :])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v, lens):
        return keypad_attention(q, k, v, lens)


def get_inputs():
    q = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM).to(torch.float16)
    k = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM).to(torch.float16)
    v = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM).to(torch.float16)
    lens = torch.randint(1, SEQ + 1, (BATCH,), dtype=torch.int32)
    return [q, k, v, lens]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BATCH": 3, "HEADS": 2, "SEQ": 37},
    {"BATCH": 2, "HEADS": 2, "SEQ": 129},
    {"BATCH": 4, "HEADS": 3, "SEQ": 71},
]
