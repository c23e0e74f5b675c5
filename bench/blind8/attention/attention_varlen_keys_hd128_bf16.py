"""Non-causal attention with a per-batch valid key length, bf16.

q, k, v: (B, H, S, D) bf16, lens: (B,) int64 with values in [1, S]. For batch element b, keys/values at
positions >= lens[b] are masked out:
out[b, h] = softmax(q[b, h] @ k[b, h, :lens[b]]^T * scale) @ v[b, h, :lens[b]], scale = 1/sqrt(D).
Output (B, H, S, D) bf16 (all S query rows are computed).

Triton version: one program per (BLOCK_M query rows, batch*head); it reads lens[b] and streams only the
key/value blocks below it with an online softmax, fp32 accumulation.

Known problems:
- _varlen_attn_fwd_kernel (line 94): the key-length mask (tl.where on cur_n < kv_len) is applied on every key block, not only on the last partial one.
- ModelNew.forward (line 122): the grid is sized for all S query rows of every batch element and ordered by query block; batches with short lens finish early while long ones run last, no scheduling by work.
- ModelNew.forward (lines 119-120, 132): BLOCK_M=64 / BLOCK_N=64 / num_warps=4 are fixed guesses for D=128; no autotuning, no num_stages choice.
- _varlen_attn_fwd_kernel (lines 91-92): K is loaded transposed through strided pointers instead of block pointers / TMA descriptors.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

BATCH = 8
HEADS = 16
SEQ = 1024
HEAD_DIM = 128


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v, lens):
        B, H, S, D = q.shape
        scale = 1.0 / math.sqrt(D)
        scores = torch.matmul(q.float(), k.float().transpose(-2, -1)) * scale
        key_pos = torch.arange(S, device=q.device)
        valid = key_pos[None, :] < lens[:, None]  # (B, S)
        scores = scores.masked_fill(~valid[:, None, None, :], float("-inf"))
        p = torch.softmax(scores, dim=-1)
        return torch.matmul(p, v.float()).to(q.dtype)


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
def _varlen_attn_fwd_kernel(
    Q, K, V, O, LENS,
    stride_qb, stride_qh, stride_qs, stride_qd,
    stride_kb, stride_kh, stride_ks, stride_kd,
    stride_vb, stride_vh, stride_vs, stride_vd,
    stride_ob, stride_oh, stride_os, stride_od,
    H, S, qk_scale,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, DOT_FP32: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H

    kv_len = tl.load(LENS + b).to(tl.int32)
    kv_len = tl.minimum(kv_len, S)

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

    for start_n in range(0, kv_len, BLOCK_N):
        cur_n = start_n + offs_n
        k = tl.load(k_base + cur_n[None, :] * stride_ks + offs_d[:, None] * stride_kd,
                    mask=cur_n[None, :] < kv_len, other=0.0)
        qk = _mma(q, k, DOT_FP32) * qk_scale
        qk = tl.where(cur_n[None, :] < kv_len, qk, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(qk, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(qk - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]

        v = tl.load(v_base + cur_n[:, None] * stride_vs + offs_d[None, :] * stride_vd,
                    mask=cur_n[:, None] < kv_len, other=0.0)
        acc += _mma(p.to(v.dtype), v, DOT_FP32)
        m_i = m_new

    acc = acc / l_i[:, None]
    o_ptrs = O + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_os + offs_d[None, :] * stride_od
    tl.store(o_ptrs, acc.to(O.dtype.element_ty), mask=offs_m[:, None] < S)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v, lens):
        B, H, S, D = q.shape
        o = torch.empty_like(q)
        BLOCK_M = 64
        BLOCK_N = 64
        qk_scale = (1.0 / math.sqrt(D)) * 1.4426950408889634  # log2(e) folded in, kernel uses exp2
        grid = (triton.cdiv(S, BLOCK_M), B * H)
        _varlen_attn_fwd_kernel[grid](
            q, k, v, o, lens,
            q.stride(0), q.stride(1), q.stride(2), q.stride(3),
            k.stride(0), k.stride(1), k.stride(2), k.stride(3),
            v.stride(0), v.stride(1), v.stride(2), v.stride(3),
            o.stride(0), o.stride(1), o.stride(2), o.stride(3),
            H, S, qk_scale,
            HEAD_DIM=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
            DOT_FP32=(q.device.type == "cpu"),
            num_warps=4,
        )
        return o


def get_inputs():
    q = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM, dtype=torch.bfloat16)
    k = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM, dtype=torch.bfloat16)
    v = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM, dtype=torch.bfloat16)
    lens = torch.randint(1, SEQ + 1, (BATCH,), dtype=torch.int64)
    return [q, k, v, lens]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BATCH": 3, "HEADS": 2, "SEQ": 128, "HEAD_DIM": 128},
    {"BATCH": 4, "HEADS": 2, "SEQ": 100, "HEAD_DIM": 128},
    {"BATCH": 5, "HEADS": 1, "SEQ": 29, "HEAD_DIM": 32},
]
