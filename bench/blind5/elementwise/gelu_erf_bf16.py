"""Exact (erf) GELU, elementwise.

y = 0.5 * x * (1 + erf(x / sqrt(2))) for x (N_ROWS, N_COLS) bf16, computed in fp32 and
stored as bf16 (same shape and dtype as x).

Benchmark shape: N_ROWS=16384, N_COLS=8192 (bf16).

Known problems:
- L32, L43-L45: flat 1-D launch with a fixed BLOCK=1024 and default num_warps=4: each program moves only 2 KiB in / 2 KiB out, so there are ~131k tiny programs and per-program overhead is a noticeable part of a purely bandwidth-bound kernel; no larger blocks or persistent loop.
- L32: pid * BLOCK is computed in int32; fine for 134M elements but would overflow past 2^31 elements.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N_ROWS = 16384
N_COLS = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.nn.functional.gelu(x, approximate="none")


@triton.jit
def gelu_erf_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n_elements
    x = tl.load(x_ptr + offs, mask=m, other=0.0).to(tl.float32)
    y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=m)


def gelu_erf(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    BLOCK = 1024
    grid = (triton.cdiv(n, BLOCK),)
    gelu_erf_kernel[grid](x, y, n, BLOCK=BLOCK)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return gelu_erf(x)


def get_inputs():
    x = torch.randn(N_ROWS, N_COLS).to(torch.bfloat16)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N_ROWS": 37, "N_COLS": 129},
    {"N_ROWS": 64, "N_COLS": 1024},
    {"N_ROWS": 3, "N_COLS": 5000},
]
