"""Global absolute maximum, bf16.

Computes x.abs().amax() over the whole tensor x of shape (N_ROWS, N_COLS) bf16
(contiguous); output is a 0-d bf16 tensor. The max is exact, so it is taken in fp32 and
cast back to bf16 without rounding error.
Two launches: stage 1 reduces BLOCK-sized chunks to one fp32 partial max per program,
stage 2 is a single program that reduces all partials and writes the 0-d result.

Benchmark shape: N_ROWS=8192, N_COLS=8192 (64M elements, 128 MB).

Known problems:
- L58-L62: stage 1 launches numel / 4096 = 16384 tiny programs, each loading only 8 KB once and exiting; a persistent grid (about the SM count times a few) with a grid-stride loop would keep loads in flight and cut the partial count.
- L43-L63: stage 2 is a single program walking all 16384 partials serially, plus a second kernel launch and a fresh torch.empty for the partials buffer every call.
- L38-L39: the abs/max is done after upcasting every element to fp32; max on bf16 directly (or on the bit pattern with the sign cleared) would halve register traffic, though the kernel is memory-bound anyway.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N_ROWS = 8192
N_COLS = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.abs().amax()


@triton.jit
def absmax_partial_kernel(x_ptr, partial_ptr, numel, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    m = tl.max(tl.abs(x), axis=0)
    tl.store(partial_ptr + pid, m)


@triton.jit
def absmax_final_kernel(partial_ptr, out_ptr, n_partials, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for p0 in range(0, n_partials, BLOCK):
        offs = p0 + tl.arange(0, BLOCK)
        mask = offs < n_partials
        v = tl.load(partial_ptr + offs, mask=mask, other=0.0)
        acc = tl.maximum(acc, v)
    m = tl.max(acc, axis=0)
    tl.store(out_ptr, m.to(tl.bfloat16))


def global_absmax(x):
    x = x.contiguous()
    numel = x.numel()
    BLOCK = 4096
    n_partials = triton.cdiv(numel, BLOCK)
    partials = torch.empty((n_partials,), device=x.device, dtype=torch.float32)
    out = torch.empty((), device=x.device, dtype=x.dtype)
    absmax_partial_kernel[(n_partials,)](x, partials, numel, BLOCK=BLOCK, num_warps=4)
    absmax_final_kernel[(1,)](partials, out, n_partials, BLOCK=1024, num_warps=4)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return global_absmax(x)


def get_inputs():
    return [torch.randn(N_ROWS, N_COLS, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N_ROWS": 37, "N_COLS": 129},
    {"N_ROWS": 256, "N_COLS": 256},
    {"N_ROWS": 1000, "N_COLS": 300},
]
