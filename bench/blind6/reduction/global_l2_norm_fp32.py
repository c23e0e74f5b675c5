"""Global L2 norm: out = torch.linalg.vector_norm(x) for x (ROWS=8192, COLS=8192) fp32 -> 0-dim fp32 scalar.

Known problems:
- lines 48-51: one program per 4096 elements gives 16384 short-lived programs each writing one partial; a persistent grid-stride loop with ~#SMs x few programs accumulating in registers would cut launch/tail overhead.
- lines 50-53: two kernel launches plus a partials buffer; the second kernel is a single program serially reading 16384 partials (a latency-bound tail) instead of finishing with one atomic add or a last-block reduction.
- line 46: x.contiguous().view(-1) is free only for contiguous input; a strided input would pay a full copy (not hit at the benchmark shape).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

ROWS = 8192
COLS = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.linalg.vector_norm(x)


@triton.jit
def sumsq_partial_kernel(x_ptr, partial_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(partial_ptr + pid, tl.sum(x * x, axis=0))


@triton.jit
def sqrt_of_sum_kernel(partial_ptr, out_ptr, n_partials, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_partials, BLOCK):
        idx = start + offs
        acc += tl.load(partial_ptr + idx, mask=idx < n_partials, other=0.0)
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr, tl.sqrt(total))


def triton_l2_norm(x):
    x_flat = x.contiguous().view(-1)
    n = x_flat.numel()
    BLOCK = 4096
    n_partials = triton.cdiv(n, BLOCK)
    partials = torch.empty((n_partials,), device=x.device, dtype=torch.float32)
    sumsq_partial_kernel[(n_partials,)](x_flat, partials, n, BLOCK=BLOCK)
    out = torch.empty((), device=x.device, dtype=torch.float32)
    sqrt_of_sum_kernel[(1,)](partials, out, n_partials, BLOCK=1024)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return triton_l2_norm(x)


def get_inputs():
    return [torch.randn(ROWS, COLS, dtype=torch.float32)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"ROWS": 256, "COLS": 256},
    {"ROWS": 37, "COLS": 129},
    {"ROWS": 1000, "COLS": 1100},
]
