"""Scaled dot-product attention (no mask) for fp16 q, k, v of shape (B, H, S, D); fp32 softmax.

Known problems:
- line 26: one program per query row: every program re-reads all of K and V; scores by tl.sum, not tl.dot (35, 44, 47)
- lines 32-47: two passes over the keys (row maximum, then exponentials and output): K is read twice
- lines 37, 46: tl.max / tl.sum inside the key loops; BLOCK_N=32 with the default num_warps (63)
- line 48: per-element division of the output by the normalizer
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
TEST_SHAPES = [{"B": 1, "H": 2, "S": 64, "D": 32}, {"B": 1, "H": 1, "S": 45, "D": 16}]


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, scale, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr):
    query = tl.program_id(0)
    bh = tl.program_id(1)
    base = bh * seq_len * HEAD_DIM
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + query * HEAD_DIM + dims).to(tl.float32)
    m = -float("inf")
    for start in range(0, seq_len, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + base + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < seq_len, other=0.0)
        s = tl.sum(q[None, :] * k.to(tl.float32), axis=1) * scale
        s = tl.where(keys < seq_len, s, -float("inf"))
        m = tl.maximum(m, tl.max(s, axis=0))
    l_sum = 0.0
    acc = tl.zeros((HEAD_DIM,), dtype=tl.float32)
    for start in range(0, seq_len, BLOCK_N):
        keys = start + tl.arange(0, BLOCK_N)
        k = tl.load(k_ptr + base + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < seq_len, other=0.0)
        v = tl.load(v_ptr + base + keys[:, None] * HEAD_DIM + dims[None, :], mask=keys[:, None] < seq_len, other=0.0)
        s = tl.sum(q[None, :] * k.to(tl.float32), axis=1) * scale
        p = tl.where(keys < seq_len, tl.exp(s - m), 0.0)
        l_sum += tl.sum(p, axis=0)
        acc += tl.sum(p[:, None] * v.to(tl.float32), axis=0)
    tl.store(o_ptr + base + query * HEAD_DIM + dims, (acc / l_sum).to(tl.float16))


class Model(nn.Module):
    def forward(self, q, k, v):
        scale = 1.0 / math.sqrt(q.shape[-1])
        p = torch.softmax((q.float() @ k.float().transpose(-1, -2)) * scale, dim=-1)
        return (p @ v.float()).to(q.dtype)


class ModelNew(nn.Module):
    def forward(self, q, k, v):
        b, h, s, d = q.shape
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        o = torch.empty_like(q)
        attention_kernel[(s, b * h)](q, k, v, o, s, 1.0 / math.sqrt(d), HEAD_DIM=d, BLOCK_N=32)
        return o


def get_inputs():
    shape = (B, H, S, D)
    return [torch.randn(shape, dtype=torch.float16) for _ in range(3)]


def get_init_inputs():
    return []
