"""Causal self-attention with logit soft-capping (Gemma-2 style), forward only.

s = CAP * tanh((q @ k^T) * scale / CAP), CAP = 30.0, scale = 1/sqrt(D);
causal mask (key j > query i is excluded); p = softmax(s, dim=-1); out = p @ v.
q, k, v: (B, H, S, D) fp16 with B = 4, H = 16, S = 2048, D = 64. Output (B, H, S, D) fp16.

Known problems:
- lines 88-89: the causal mask (plus the cols < SEQ bound) is built and applied with tl.where on every KV block, although only the diagonal block needs it; the loop is not split into unmasked off-diagonal and masked diagonal stages
- lines 84-87: soft-capping costs a scale multiply, a divide by cap, an exp and a full-precision division per score; scale/CAP (and log2 e) could be folded into one multiplier and tanh done with a hardware tanh
- lines 92-93: softmax uses tl.exp instead of exp2 with log2(e) folded into the scale
- lines 55, 78, 112: q-blocks run in ascending order on grid axis 0, so the cheap early causal blocks go first and the longest ones form a tail; no heaviest-first ordering
- lines 110, 122: fixed BLOCK_M=64, BLOCK_N=64, num_warps=4, num_stages=2 with no autotuning (BLOCK_M=128, 8 warps, 3 stages is usual for D=64 on H100)
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

SOFTCAP = 30.0


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        scale = 1.0 / math.sqrt(q.shape[-1])
        s = torch.matmul(q, k.transpose(-2, -1)) * scale
        s = SOFTCAP * torch.tanh(s / SOFTCAP)
        seq = q.shape[-2]
        causal = torch.ones(seq, seq, dtype=torch.bool, device=q.device).tril()
        s = s.masked_fill(~causal, float("-inf"))
        p = torch.softmax(s, dim=-1)
        return torch.matmul(p, v)


@triton.jit
def softcap_attn_fwd_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr,
    stride_qb, stride_qh, stride_qs, stride_qd,
    stride_kb, stride_kh, stride_ks, stride_kd,
    stride_vb, stride_vh, stride_vs, stride_vd,
    stride_ob, stride_oh, stride_os, stride_od,
    NH, SEQ, HEAD_D,
    scale, cap,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // NH
    h = pid_bh % NH

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    d_mask = offs_d < HEAD_D

    q_base = q_ptr + b * stride_qb + h * stride_qh
    k_base = k_ptr + b * stride_kb + h * stride_kh
    v_base = v_ptr + b * stride_vb + h * stride_vh
    o_base = o_ptr + b * stride_ob + h * stride_oh

    q = tl.load(q_base + offs_m[:, None] * stride_qs + offs_d[None, :] * stride_qd,
                mask=(offs_m[:, None] < SEQ) & d_mask[None, :], other=0.0)

    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)

    # causal: keys up to the last query row of this block
    hi = tl.minimum((pid_m + 1) * BLOCK_M, SEQ)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        kv_mask = (cols[:, None] < SEQ) & d_mask[None, :]
        k = tl.load(k_base + cols[:, None] * stride_ks + offs_d[None, :] * stride_kd,
                    mask=kv_mask, other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale
        # soft-cap: cap * tanh(s / cap), tanh(x) = 1 - 2 / (exp(2x) + 1)
        t = s / cap
        s = cap * (1.0 - 2.0 / (tl.exp(2.0 * t) + 1.0))
        valid = (cols[None, :] <= offs_m[:, None]) & (cols[None, :] < SEQ)
        s = tl.where(valid, s, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)

        v = tl.load(v_base + cols[:, None] * stride_vs + offs_d[None, :] * stride_vd,
                    mask=kv_mask, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    out = acc / l_i[:, None]
    tl.store(o_base + offs_m[:, None] * stride_os + offs_d[None, :] * stride_od,
             out.to(o_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < SEQ) & d_mask[None, :])


def softcap_causal_attention(q, k, v, cap):
    Bq, Hq, Sq, Dq = q.shape
    o = torch.empty_like(q)
    BLOCK_M, BLOCK_N = 64, 64
    BLOCK_D = triton.next_power_of_2(Dq)
    grid = (triton.cdiv(Sq, BLOCK_M), Bq * Hq)
    softcap_attn_fwd_kernel[grid](
        q, k, v, o,
        q.stride(0), q.stride(1), q.stride(2), q.stride(3),
        k.stride(0), k.stride(1), k.stride(2), k.stride(3),
        v.stride(0), v.stride(1), v.stride(2), v.stride(3),
        o.stride(0), o.stride(1), o.stride(2), o.stride(3),
        Hq, Sq, Dq,
        1.0 / math.sqrt(Dq), cap,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D,
        num_warps=4, num_stages=2,
    )
    return o


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return softcap_causal_attention(q, k, v, SOFTCAP)


def get_inputs():
    q = torch.randn(B, H, S, D, dtype=torch.float16)
    k = torch.randn(B, H, S, D, dtype=torch.float16)
    v = torch.randn(B, H, S, D, dtype=torch.float16)
    return [q, k, v]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 1, "H": 2, "S": 128, "D": 64},
    {"B": 2, "H": 1, "S": 100, "D": 32},
    {"B": 1, "H": 3, "S": 37, "D": 48},
]
