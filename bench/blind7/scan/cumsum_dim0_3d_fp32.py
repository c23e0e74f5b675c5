"""Cumulative sum over the leading axis of a 3D fp32 tensor.

Computes torch.cumsum(x, dim=0).
  x:   (A, B, C) float32, contiguous
  out: (A, B, C) float32

Known problems:
- Parallelism is only over the B*C columns (cdiv(B*C, 256) = 64 programs for the benchmark
  shape), each scanning all A steps serially, so the GPU is badly under-occupied.
- Each step is a dependent load-add-store with no prefetching of later rows, so per-program
  latency is dominated by memory round trips.
- BLOCK=256 is a fixed guess; no chunked/decoupled-lookback scan along A.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

A = 1024
B = 64
C = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumsum(x, dim=0)


@triton.jit
def cumsum_dim0_kernel(x_ptr, out_ptr, A, COLS, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < COLS
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    x_ptrs = x_ptr + offs
    out_ptrs = out_ptr + offs
    for a in range(0, A):
        v = tl.load(x_ptrs, mask=mask, other=0.0)
        acc += v
        tl.store(out_ptrs, acc, mask=mask)
        x_ptrs += COLS
        out_ptrs += COLS


def cumsum_dim0(x):
    x = x.contiguous()
    a = x.shape[0]
    cols = x.numel() // a if a > 0 else 0
    out = torch.empty_like(x)
    if x.numel() == 0:
        return out
    BLOCK = 256
    grid = (triton.cdiv(cols, BLOCK),)
    cumsum_dim0_kernel[grid](x, out, a, cols, BLOCK=BLOCK)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return cumsum_dim0(x)


def get_inputs():
    x = torch.randn(A, B, C, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"A": 37, "B": 3, "C": 100},
    {"A": 129, "B": 5, "C": 7},
    {"A": 4, "B": 20, "C": 50},
]
