"""Huber loss: F.huber_loss(a, b, delta=1.0) with reduction='mean' (a 0-d tensor), fp32, a and b of shape (M, N).

Per element, with d = a - b: 0.5 * d^2 if |d| < delta, else delta * (|d| - 0.5 * delta).

Known problems:
- lines 55-59: one 1024-element block per program gives 32768 short CTAs (8 elements per thread per input), each paying a block reduction and a store; a grid-stride loop over fewer, longer-lived programs would cut that per-CTA overhead
- line 60: a second launch with a single CTA serially sums the 32768 partials (about 32 dependent iterations on one SM)
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384
N = 2048
DELTA = 1.0


class Model(nn.Module):
    def __init__(self, delta=DELTA):
        super().__init__()
        self.delta = delta

    def forward(self, a, b):
        return nn.functional.huber_loss(a, b, delta=self.delta)


@triton.jit
def huber_partial_kernel(a_ptr, b_ptr, partial_ptr, numel, delta, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    d = a - b
    ad = tl.abs(d)
    loss = tl.where(ad < delta, 0.5 * d * d, delta * (ad - 0.5 * delta))
    loss = tl.where(mask, loss, 0.0)
    tl.store(partial_ptr + pid, tl.sum(loss, axis=0))


@triton.jit
def sum_scale_kernel(partial_ptr, out_ptr, num_partials, scale, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, num_partials, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(partial_ptr + offs, mask=offs < num_partials, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) * scale)


def huber_loss(a, b, delta):
    a = a.contiguous()
    b = b.contiguous()
    numel = a.numel()
    BLOCK = 1024
    num_partials = triton.cdiv(numel, BLOCK)
    partials = torch.empty((num_partials,), device=a.device, dtype=torch.float32)
    out = torch.empty((), device=a.device, dtype=torch.float32)
    huber_partial_kernel[(num_partials,)](a, b, partials, numel, delta, BLOCK=BLOCK)
    sum_scale_kernel[(1,)](partials, out, num_partials, 1.0 / numel, BLOCK=1024)
    return out


class ModelNew(nn.Module):
    def __init__(self, delta=DELTA):
        super().__init__()
        self.delta = delta

    def forward(self, a, b):
        return huber_loss(a, b, self.delta)


def get_inputs():
    # d = a - b has std sqrt(2), so both branches (|d| < delta and |d| >= delta) are hit often
    return [torch.randn(M, N), torch.randn(M, N)]


def get_init_inputs():
    return [DELTA]


TEST_SHAPES = [
    {"M": 64, "N": 512},
    {"M": 37, "N": 129},
]
