"""Weight standardisation of a conv weight, per output channel.

Computes, for w of shape (O, I, kh, kw) fp32:
    mean = w.mean(dim=(1, 2, 3), keepdim=True)
    var  = w.var(dim=(1, 2, 3), unbiased=False, keepdim=True)
    out  = (w - mean) / sqrt(var + 1e-5)
Output (O, I, kh, kw) fp32.
Benchmark shape: O=1024, I=512, kh=kw=3 (4608 elements per channel, ~19 MB in, ~19 MB out).

Known problems:
- One program per output channel with three passes over the row (mean, variance,
  normalise): the row is read from global memory three times instead of once
  (it would fit in registers/shared memory for K=4608).
- Only O=1024 programs; on a large GPU that is a few waves of small work items with
  a serial inner loop, so latency rather than bandwidth tends to dominate.
- BLOCK=1024 is a fixed guess, not tuned.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

O = 1024
I = 512
KH = 3
KW = 3


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, w):
        mean = w.mean(dim=(1, 2, 3), keepdim=True)
        var = w.var(dim=(1, 2, 3), unbiased=False, keepdim=True)
        return (w - mean) / torch.sqrt(var + 1e-5)


@triton.jit
def _wstd_kernel(w_ptr, y_ptr, K, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * K
    offs0 = tl.arange(0, BLOCK)
    # pass 1: mean
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, K, BLOCK):
        offs = start + offs0
        m = offs < K
        acc += tl.load(w_ptr + base + offs, mask=m, other=0.0)
    mean = tl.sum(acc, axis=0) / K
    # pass 2: biased variance around the mean
    acc2 = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, K, BLOCK):
        offs = start + offs0
        m = offs < K
        x = tl.load(w_ptr + base + offs, mask=m, other=0.0)
        dx = tl.where(m, x - mean, 0.0)
        acc2 += dx * dx
    var = tl.sum(acc2, axis=0) / K
    rstd = 1.0 / tl.sqrt(var + eps)
    # pass 3: normalise
    for start in range(0, K, BLOCK):
        offs = start + offs0
        m = offs < K
        x = tl.load(w_ptr + base + offs, mask=m, other=0.0)
        tl.store(y_ptr + base + offs, (x - mean) * rstd, mask=m)


def weight_standardize(w, eps=1e-5):
    w = w.contiguous()
    o = w.shape[0]
    K = w.numel() // o
    y = torch.empty_like(w)
    BLOCK = 1024
    _wstd_kernel[(o,)](w, y, K, eps, BLOCK=BLOCK, num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, w):
        return weight_standardize(w, 1e-5)


def get_inputs():
    w = torch.randn(O, I, KH, KW, dtype=torch.float32)
    return [w]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"O": 37, "I": 129, "KH": 3, "KW": 3},
    {"O": 16, "I": 100, "KH": 5, "KW": 5},
    {"O": 64, "I": 3, "KH": 1, "KW": 1},
]
