"""Grouped-query causal attention, bf16.

q: (B, Hq, S, D), k and v: (B, Hkv, S, D); query head h uses KV head h // (Hq // Hkv).
out[b, h] = softmax(mask_causal(q[b, h] @ k[b, h // G]^T * scale)) @ v[b, h // G], scale = 1/sqrt(D),
query i sees keys j <= i. Output (B, Hq, S, D) bf16.

Triton version: one program per (BLOCK_M query rows, batch*query-head); it maps its query head to the
shared KV head and streams keys/values up to the diagonal with an online softmax, fp32 accumulation.

Known problems:
- _gqa_causal_fwd_kernel (lines 98-99): the causal mask (tl.where with offs_m >= cur_n) is computed on every key block, although only the blocks crossing the diagonal need it.
- _gqa_causal_fwd_kernel (line 75) / ModelNew.forward (line 129): each of the G query heads of a group is its own program and re-reads the same K/V blocks; the group's heads are not processed together in one program to share K/V loads.
- ModelNew.forward (line 129): grid runs query blocks in index order, so causal programs have very different amounts of work (block 0 does 1 key block, the last does S/BLOCK_N) and the long ones are scheduled last (tail imbalance).
- ModelNew.forward (lines 126-127, 139): BLOCK_M=64 / BLOCK_N=64 / num_warps=4 are fixed guesses for D=128; no autotuning, no num_stages choice.
- _gqa_causal_fwd_kernel (lines 95-96): K is loaded transposed through strided pointers instead of block pointers / TMA descriptors.
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
HEAD_DIM = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        B, Hq, S, D = q.shape
        Hkv = k.shape[1]
        group = Hq // Hkv
        scale = 1.0 / math.sqrt(D)
        kf = k.float().repeat_interleave(group, dim=1)
        vf = v.float().repeat_interleave(group, dim=1)
        scores = torch.matmul(q.float(), kf.transpose(-2, -1)) * scale
        causal = torch.ones(S, S, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        p = torch.softmax(scores, dim=-1)
        return torch.matmul(p, vf).to(q.dtype)


@triton.jit
def _mma(a, b, DOT_FP32: tl.constexpr):
    # The CPU interpreter (TRITON_INTERPRET=1) cannot do tl.dot on bf16 operands (it multiplies the raw
    # uint16 bit patterns), so on CPU tensors the wrapper asks for an fp32 dot of the same bf16 values.
    # On the GPU DOT_FP32 is False and this is a plain bf16 tensor-core dot with fp32 accumulation.
    if DOT_FP32:
        return tl.dot(a.to(tl.float32), b.to(tl.float32))
    else:
        return tl.dot(a, b)


@triton.jit
def _gqa_causal_fwd_kernel(
    Q, K, V, O,
    stride_qb, stride_qh, stride_qs, stride_qd,
    stride_kb, stride_kh, stride_ks, stride_kd,
    stride_vb, stride_vh, stride_vs, stride_vd,
    stride_ob, stride_oh, stride_os, stride_od,
    HQ, GROUP, S, qk_scale,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, DOT_FP32: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // HQ
    h = pid_bh % HQ
    hk = h // GROUP

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)

    q_ptrs = Q + b * stride_qb + h * stride_qh + offs_m[:, None] * stride_qs + offs_d[None, :] * stride_qd
    q = tl.load(q_ptrs, mask=offs_m[:, None] < S, other=0.0)

    k_base = K + b * stride_kb + hk * stride_kh
    v_base = V + b * stride_vb + hk * stride_vh

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)

    # keys beyond the last query row of this block are never visible
    end_n = tl.minimum((pid_m + 1) * BLOCK_M, S)
    for start_n in range(0, end_n, BLOCK_N):
        cur_n = start_n + offs_n
        k = tl.load(k_base + cur_n[None, :] * stride_ks + offs_d[:, None] * stride_kd,
                    mask=cur_n[None, :] < S, other=0.0)
        qk = _mma(q, k, DOT_FP32) * qk_scale
        valid = (offs_m[:, None] >= cur_n[None, :]) & (cur_n[None, :] < S)
        qk = tl.where(valid, qk, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(qk, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]

        v = tl.load(v_base + cur_n[:, None] * stride_vs + offs_d[None, :] * stride_vd,
                    mask=cur_n[:, None] < S, other=0.0)
        acc += _mma(p.to(v.dtype), v, DOT_FP32)
        m_i = m_new

    acc = acc / l_i[:, None]
    o_ptrs = O + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_os + offs_d[None, :] * stride_od
    tl.store(o_ptrs, acc.to(O.dtype.element_ty), mask=offs_m[:, None] < S)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        B, Hq, S, D = q.shape
        Hkv = k.shape[1]
        group = Hq // Hkv
        o = torch.empty_like(q)
        BLOCK_M = 64
        BLOCK_N = 64
        qk_scale = (1.0 / math.sqrt(D)) * 1.4426950408889634  # log2(e) folded in, kernel uses exp2
        grid = (triton.cdiv(S, BLOCK_M), B * Hq)
        _gqa_causal_fwd_kernel[grid](
            q, k, v, o,
            q.stride(0), q.stride(1), q.stride(2), q.stride(3),
            k.stride(0), k.stride(1), k.stride(2), k.stride(3),
            v.stride(0), v.stride(1), v.stride(2), v.stride(3),
            o.stride(0), o.stride(1), o.stride(2), o.stride(3),
            Hq, group, S, qk_scale,
            HEAD_DIM=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
            DOT_FP32=(q.device.type == "cpu"),
            num_warps=4,
        )
        return o


def get_inputs():
    q = torch.randn(BATCH, Q_HEADS, SEQ, HEAD_DIM, dtype=torch.bfloat16)
    k = torch.randn(BATCH, KV_HEADS, SEQ, HEAD_DIM, dtype=torch.bfloat16)
    v = torch.randn(BATCH, KV_HEADS, SEQ, HEAD_DIM, dtype=torch.bfloat16)
    return [q, k, v]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BATCH": 1, "Q_HEADS": 4, "KV_HEADS": 2, "SEQ": 128, "HEAD_DIM": 128},
    {"BATCH": 2, "Q_HEADS": 4, "KV_HEADS": 1, "SEQ": 100, "HEAD_DIM": 128},
    {"BATCH": 1, "Q_HEADS": 3, "KV_HEADS": 3, "SEQ": 77, "HEAD_DIM": 32},
]
