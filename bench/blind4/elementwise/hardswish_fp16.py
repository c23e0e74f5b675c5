"""Elementwise hardswish: torch.nn.functional.hardswish(x) = x * clamp(x + 3, 0, 6) / 6 on x fp16.

Known problems:
- Lines 38-40: small BLOCK=1024 with default num_warps gives 131072 tiny programs; a larger block (4096-8192 elements) per program would cut scheduling overhead (minor; kernel is memory-bound).
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
        return torch.nn.functional.hardswish(x)


@triton.jit
def hardswish_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    r = tl.minimum(tl.maximum(x + 3.0, 0.0), 6.0)
    y = x * r / 6.0
    tl.store(y_ptr + offs, y.to(tl.float16), mask=mask)


def hardswish(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    BLOCK = 1024
    grid = (triton.cdiv(n, BLOCK),)
    hardswish_kernel[grid](x, y, n, BLOCK=BLOCK)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return hardswish(x)


def get_inputs():
    return [torch.randn(N_ROWS, N_COLS).half() * 4.0]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N_ROWS": 64, "N_COLS": 256},
    {"N_ROWS": 37, "N_COLS": 129},
]
