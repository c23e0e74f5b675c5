"""Chunked local (block-diagonal) attention, fp16.

q, k, v: (B, H, S, D) fp16. The sequence is cut into chunks of CHUNK_SIZE (=256) positions; query i attends
(non-causally) only to keys j with i // CHUNK_SIZE == j // CHUNK_SIZE. The last chunk may be short when S is
no multiple of CHUNK_SIZE. out = softmax(masked(q @ k^T * scale)) @ v, scale = 1/sqrt(D), output fp16.

Triton version: one program per (BLOCK_M query rows, batch*head); it visits only the key blocks that
overlap the chunk(s) its query rows belong to, with an online softmax and fp32 accumulation.

Known problems:
- _chunked_attn_fwd_kernel (lines 79, 90-91): the chunk mask (offs_m // CHUNK == cur_n // CHUNK, plus cur_n < hi) is computed with integer divisions on every key block, although for CHUNK=256 and BLOCK 64 only the tail of the sequence needs any mask.
- _chunked_attn_fwd_kernel (line 95): the fully-masked-row guard (m_safe / tl.where on m_new == -inf) adds work on every key block; it is only needed when a query block spans two chunks.
- ModelNew.forward (lines 119-120, 131): BLOCK_M=64 / BLOCK_N=64 / num_warps=4 are fixed guesses; no autotuning, no num_stages choice (only 4 key blocks per program, so the per-program prologue/epilogue weighs a lot).
- _chunked_attn_fwd_kernel (lines 87-88): K is loaded transposed through strided pointers instead of block pointers / TMA descriptors.
- ModelNew.forward (line 122): the 4 query blocks of one chunk are separate programs that each reload the same 256 keys/values of that chunk.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

BATCH = 4
HEADS = 16
SEQ = 4096
HEAD_DIM = 64
CHUNK_SIZE = 256


class Model(nn.Module):
    def __init__(self, chunk_size):
        super().__init__()
        self.chunk_size = chunk_size

    def forward(self, q, k, v):
        B, H, S, D = q.shape
        scale = 1.0 / math.sqrt(D)
        scores = torch.matmul(q.float(), k.float().transpose(-2, -1)) * scale
        chunk_id = torch.arange(S, device=q.device) // self.chunk_size
        same_chunk = chunk_id[:, None] == chunk_id[None, :]
        scores = scores.masked_fill(~same_chunk, float("-inf"))
        p = torch.softmax(scores, dim=-1)
        return torch.matmul(p, v.float()).to(q.dtype)


@triton.jit
def _chunked_attn_fwd_kernel(
    Q, K, V, O,
    stride_qb, stride_qh, stride_qs, stride_qd,
    stride_kb, stride_kh, stride_ks, stride_kd,
    stride_vb, stride_vh, stride_vs, stride_vd,
    stride_ob, stride_oh, stride_os, stride_od,
    H, S, CHUNK, qk_scale,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)

    # key range covering the chunks of the first and last (valid) query row of this block
    first_row = pid_m * BLOCK_M
    last_row = tl.minimum(first_row + BLOCK_M, S) - 1
    lo = (first_row // CHUNK) * CHUNK
    hi = tl.minimum((last_row // CHUNK + 1) * CHUNK, S)

    q_ptrs = Q + b * stride_qb + h * stride_qh + offs_m[:, None] * stride_qs + offs_d[None, :] * stride_qd
    q = tl.load(q_ptrs, mask=offs_m[:, None] < S, other=0.0)

    k_base = K + b * stride_kb + h * stride_kh
    v_base = V + b * stride_vb + h * stride_vh

    q_chunk = offs_m // CHUNK

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)

    for start_n in range(lo, hi, BLOCK_N):
        cur_n = start_n + offs_n
        k = tl.load(k_base + cur_n[None, :] * stride_ks + offs_d[:, None] * stride_kd,
                    mask=cur_n[None, :] < hi, other=0.0)
        qk = tl.dot(q, k) * qk_scale
        valid = (q_chunk[:, None] == (cur_n // CHUNK)[None, :]) & (cur_n[None, :] < hi)
        qk = tl.where(valid, qk, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(qk, 1))
        # a row may have seen no valid key yet (query block spanning two chunks): avoid -inf - -inf
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp2(m_i - m_safe)
        p = tl.exp2(qk - m_safe[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]

        v = tl.load(v_base + cur_n[:, None] * stride_vs + offs_d[None, :] * stride_vd,
                    mask=cur_n[:, None] < hi, other=0.0)
        acc += tl.dot(p.to(v.dtype), v)
        m_i = m_new

    acc = acc / l_i[:, None]
    o_ptrs = O + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_os + offs_d[None, :] * stride_od
    tl.store(o_ptrs, acc.to(O.dtype.element_ty), mask=offs_m[:, None] < S)


class ModelNew(nn.Module):
    def __init__(self, chunk_size):
        super().__init__()
        self.chunk_size = chunk_size

    def forward(self, q, k, v):
        B, H, S, D = q.shape
        o = torch.empty_like(q)
        BLOCK_M = 64
        BLOCK_N = 64
        qk_scale = (1.0 / math.sqrt(D)) * 1.4426950408889634  # log2(e) folded in, kernel uses exp2
        grid = (triton.cdiv(S, BLOCK_M), B * H)
        _chunked_attn_fwd_kernel[grid](
            q, k, v, o,
            q.stride(0), q.stride(1), q.stride(2), q.stride(3),
            k.stride(0), k.stride(1), k.stride(2), k.stride(3),
            v.stride(0), v.stride(1), v.stride(2), v.stride(3),
            o.stride(0), o.stride(1), o.stride(2), o.stride(3),
            H, S, self.chunk_size, qk_scale,
            HEAD_DIM=D, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
            num_warps=4,
        )
        return o


def get_inputs():
    q = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM, dtype=torch.float16)
    k = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM, dtype=torch.float16)
    v = torch.randn(BATCH, HEADS, SEQ, HEAD_DIM, dtype=torch.float16)
    return [q, k, v]


def get_init_inputs():
    return [CHUNK_SIZE]


TEST_SHAPES = [
    {"BATCH": 1, "HEADS": 2, "SEQ": 600, "HEAD_DIM": 64},
    {"BATCH": 2, "HEADS": 2, "SEQ": 200, "HEAD_DIM": 64, "CHUNK_SIZE": 48},
    {"BATCH": 1, "HEADS": 3, "SEQ": 77, "HEAD_DIM": 32, "CHUNK_SIZE": 100},
    {"BATCH": 1, "HEADS": 1, "SEQ": 130, "HEAD_DIM": 16, "CHUNK_SIZE": 7},
]
