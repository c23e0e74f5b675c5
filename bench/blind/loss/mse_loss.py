"""Mean squared error: F.mse_loss(a, b) with reduction='mean' (a 0-d tensor), fp32, a and b of shape (M, N).

Known problems:
- lines 48-52: one 1024-element block per program gives 65536 short CTAs (8 elements per thread per input), each paying a block reduction and a store; a grid-stride loop over fewer, longer-lived programs would cut that per-CTA overhead
- line 53: a second launch with a single CTA serially sums the 65536 partials (about 64 dependent iterations on one SM)
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384
N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return nn.functional.mse_loss(a, b)


@triton.jit
def sq_diff_partial_kernel(a_ptr, b_ptr, partial_ptr, numel, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    d = a - b
    tl.store(partial_ptr + pid, tl.sum(d * d, axis=0))


@triton.jit
def sum_scale_kernel(partial_ptr, out_ptr, num_partials, scale, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, num_partials, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(partial_ptr + offs, mask=offs < num_partials, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) * scale)


def mse_loss(a, b):
    a = a.contiguous()
    b = b.contiguous()
    numel = a.numel()
    BLOCK = 1024
    num_partials = triton.cdiv(numel, BLOCK)
    partials = torch.empty((num_partials,), device=a.device, dtype=torch.float32)
    out = torch.empty((), device=a.device, dtype=torch.float32)
    sq_diff_partial_kernel[(num_partials,)](a, b, partials, numel, BLOCK=BLOCK)
    sum_scale_kernel[(1,)](partials, out, num_partials, 1.0 / numel, BLOCK=1024)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return mse_loss(a, b)


def get_inputs():
    return [torch.randn(M, N), torch.randn(M, N)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 64, "N": 512},
    {"M": 37, "N": 129},
]
