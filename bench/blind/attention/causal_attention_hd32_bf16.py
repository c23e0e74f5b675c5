"""out = softmax(Q K^T * scale + causal mask) V for Q, K, V of shape (BATCH, HEADS, SEQ, HEAD_DIM), bf16, scale = 1/sqrt(HEAD_DIM).

Flash-attention style forward: one program per (block of BLOCK_M query rows, batch * head). It walks the key/value
blocks up to the diagonal, keeps a running row max and row sum (online softmax) in fp32 and accumulates P @ V in
fp32; the output is normalised once at the end and rounded to bf16.

Known problems:
- lines 63-64, 70-71, 79-80: the causal and sequence-bound masks (the masked K/V loads and the tl.where over the whole score tile) are applied on every key block, though only the block on the diagonal and the last partial block need them
- lines 67-69, 74-75: the softmax scale is multiplied into every BLOCK_M x BLOCK_N score tile instead of into Q once, and tl.exp is used instead of tl.exp2 with log2(e) folded into that scale
- lines 39, 59-61, 98: query blocks are launched in ascending order, so the programs with the most key blocks (the last rows under the causal mask) start last and leave a tail
- lines 97, 109: fixed 64x64 tiles with 4 warps and the default num_stages, chosen without tuning for the H200; with head_dim 32 each tile does little tensor-core work per load and per softmax step
"""

import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 8
HEADS = 16
SEQ = 512
HEAD_DIM = 32


@triton.jit
def causal_attention_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr,
    stride_qb, stride_qh, stride_qs, stride_qd,
    stride_kb, stride_kh, stride_ks, stride_kd,
    stride_vb, stride_vh, stride_vs, stride_vd,
    stride_ob, stride_oh, stride_os, stride_od,
    H, SEQ_LEN,
    scale,
    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
    DOT_IN_FP32: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)

    q_base = q_ptr + b * stride_qb + h * stride_qh
    k_base = k_ptr + b * stride_kb + h * stride_kh
    v_base = v_ptr + b * stride_vb + h * stride_vh

    q = tl.load(q_base + offs_m[:, None] * stride_qs + offs_d[None, :] * stride_qd,
                mask=offs_m[:, None] < SEQ_LEN, other=0.0)

    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)

    # keys past the last query row of this block are all masked out, so stop at the diagonal
    hi = tl.minimum((pid_m + 1) * BLOCK_M, SEQ_LEN)
    for start_n in range(0, hi, BLOCK_N):
        cols = start_n + offs_n
        kt = tl.load(k_base + cols[None, :] * stride_ks + offs_d[:, None] * stride_kd,
                     mask=cols[None, :] < SEQ_LEN, other=0.0)
        if DOT_IN_FP32:
            # Triton's CPU interpreter mis-handles bf16 tl.dot operands; bf16 products are exact in fp32
            s = tl.dot(q.to(tl.float32), kt.to(tl.float32), input_precision="ieee") * scale
        else:
            s = tl.dot(q, kt) * scale
        keep = (cols[None, :] < SEQ_LEN) & (offs_m[:, None] >= cols[None, :])
        s = tl.where(keep, s, float("-inf"))

        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]

        v = tl.load(v_base + cols[:, None] * stride_vs + offs_d[None, :] * stride_vd,
                    mask=cols[:, None] < SEQ_LEN, other=0.0)
        if DOT_IN_FP32:
            acc += tl.dot(p.to(v.dtype).to(tl.float32), v.to(tl.float32), input_precision="ieee")
        else:
            acc += tl.dot(p.to(v.dtype), v)
        m_i = m_new

    out = acc / l_i[:, None]
    o_ptrs = o_ptr + b * stride_ob + h * stride_oh + offs_m[:, None] * stride_os + offs_d[None, :] * stride_od
    tl.store(o_ptrs, out.to(o_ptr.dtype.element_ty), mask=offs_m[:, None] < SEQ_LEN)


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    batch, heads, seq, head_dim = q.shape
    assert k.shape == q.shape and v.shape == q.shape
    assert head_dim >= 16 and head_dim & (head_dim - 1) == 0, "head_dim must be a power of two >= 16"
    o = torch.empty_like(q)
    block_m, block_n = 64, 64
    grid = (triton.cdiv(seq, block_m), batch * heads)
    causal_attention_kernel[grid](
        q, k, v, o,
        q.stride(0), q.stride(1), q.stride(2), q.stride(3),
        k.stride(0), k.stride(1), k.stride(2), k.stride(3),
        v.stride(0), v.stride(1), v.stride(2), v.stride(3),
        o.stride(0), o.stride(1), o.stride(2), o.stride(3),
        heads, seq,
        1.0 / math.sqrt(head_dim),
        HEAD_DIM=head_dim, BLOCK_M=block_m, BLOCK_N=block_n,
        DOT_IN_FP32=q.device.type == "cpu",
        num_warps=4,
    )
    return o


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return causal_attention(q, k, v)


def get_inputs():
    shape = (BATCH, HEADS, SEQ, HEAD_DIM)
    return [torch.randn(shape, dtype=torch.bfloat16) for _ in range(3)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"BATCH": 1, "HEADS": 2, "SEQ": 37, "HEAD_DIM": 32},
    {"BATCH": 2, "HEADS": 1, "SEQ": 129, "HEAD_DIM": 32},
]
