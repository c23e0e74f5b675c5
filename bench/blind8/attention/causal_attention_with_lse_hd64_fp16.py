"""Causal attention that also returns the per-query logsumexp, fp16.

q, k, v: (B, H, S, D) fp16, scale = 1/sqrt(D), query i sees keys j <= i.
scores = mask_causal(q @ k^T * scale)
out = softmax(scores) @ v              -> (B, H, S, D) fp16
lse = logsumexp(scores, dim=-1)        -> (B, H, S) fp32 (natural log)
forward returns (out, lse).

Triton version: one program per (BLOCK_M query rows, batch*head); it streams keys/values up to the
diagonal with an online softmax in base 2 (fp32 running max / sum / accumulator) and writes
lse = (m + log2(l)) * ln(2) at the end.

Known problems:
- _causal_lse_fwd_kernel (lines 86-87): the causal mask (tl.where with offs_m >= cur_n) is computed on every key block, although only the blocks crossing the diagonal need it.
- ModelNew.forward (line 120): grid runs query blocks in index order, so causal programs have very different amounts of work (block 0 does 1 key block, the last does S/BLOCK_N) and the long ones are scheduled last (tail imbalance).
- ModelNew.forward (lines 117-118, 130): BLOCK_M=64 / BLOCK_N=64 / num_warps=4 are fixed guesses; no autotuning, no num_stages choice.
- _causal_lse_fwd_kernel (lines 83-84): K is loaded transposed through strided pointers instead of block pointers / TMA descriptors.
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


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        B, H, S, D = q.shape
        scale = 1.0 / math.sqrt(D)
        scores = torch.matmul(q.float(), k.float().transpose(-2, -1)) * scale
        causal = torch.ones(S, S, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        lse = torch.logsumexp(scores, dim=-1)
        p = torch.softmax(scores, dim=-1)
        out = torch.matmul(p, v.float()).to(q.dtype)
        return out, lse


@triton.jit
def _causal_lse_fwd_kernel(
    Q, K, V, O, LSE,
    stride_qb, stride_qh, stride_qs, stride_qd,
    stride_kb, stride_kh, stride_ks, stride_kd,
    stride_vb, stride_vh, stride_vs, stride_vd,
    stride_ob, stride_oh, stride_os, stride_od,
    stride_lb, stride_lh, stride_ls,
    H, S, qk_scale,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)

    q_ptrs = Q + b * stride_qb + h * stride_qh + offs_m[:, None] * stride_qs + offs_d[None, :] * stride_qd
    q = tl.load(q_ptrs, mask=offs_m[:, None] < S, other=0.0)

    k_base = K + b * stride_kb + h * stride_kh
    v_base = V + b * stride_vb + h * stride_vh

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)

    # keys beyond the last query row of this block are never visible
    end_n = tl.minimum((pid_m + 1) * BLOCK_M, S)
    for start_n in range(0, end_n, BLOCK_N):
        cur_n = start_n + offs_n
        k = tl.load(k_base + cur_n[None, :] * stride_ks + offs_d[:, None] * stride_kd,
                    mask=cur_n[None, :] < S, other=0.0)
        qk = tl.dot(q, k) * qk_scale
        valid = (offs_m[:, None] >= cur_n[None, :]) & (cur_n[None, :] < S)
        qk = tl.where(valid, qk, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(qk, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]

        v = tl.load(v_base + cur_n[:, None] * stride_vs + offs_d[None, :] * stride_vd,
                    mask=cur_n[:, None] < S, other=0.0)
        acc += tl.dot(p.to(v.dtype), v)
        m_i = m_new

    acc = acc / l_i[:, None]
    o_ptrs = O + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_os + offs_d[None, :] * stride_od
    tl.store(o_ptrs, acc.to(O.dtype.element_ty), mask=offs_m[:, None] < S)

    # m_i and log2(l_i) are in base-2 units of the scaled scores; convert to natural log
    lse = (m_i + tl.log2(l_i)) * 0.6931471805599453
    tl.store(LSE + b * stride_lb + h * stride_lh + offs_m * stride_ls, lse, mask=offs_m < S)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        B, H, S, D = q.shape
        o = torch.empty_like(q)
        lse = torch.empty((B, H, S), dtype=torch.float32, device=q.device)
        BLOCK_M = 64
        BLOCK_N = 64
        qk_scale = (1.0 / math.sqrt(D)) * 1.4426950408889634  # log2(e) folded in, kernel uses exp2
        grid = (triton.cdiv(S, BLOCK_M), B * H)
        _causal_lse_fwd_kernel[grid](
            q, k, v, o, lse,
            q.stride(0), q.stride(1), q.stride(2), q.stride(3),
            k.stride(0), k.stride(1), k.stride(2), k.stride(3),
            v.stride(0), v.stride(1), v.stride(2), v.stride(3),
            o.stride(0), o.stride(1), o.stride(2), o.stride(3),
            lse.stride(0), lse.stride(1), lse.stride(2),
            H, S, qk_scale,
            HEAD_DIM=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
            num_warps=4,
        )
        return o, lse


def get_inputs():
    q = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM, dtype=torch.float16)
    k = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM, dtype=torch.float16)
    v = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM, dtype=torch.float16)
    return [q, k, v]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BATCH": 1, "HEADS": 2, "SEQ": 128, "HEAD_DIM": 64},
    {"BATCH": 2, "HEADS": 3, "SEQ": 100, "HEAD_DIM": 64},
    {"BATCH": 1, "HEADS": 1, "SEQ": 37, "HEAD_DIM": 32},
]
