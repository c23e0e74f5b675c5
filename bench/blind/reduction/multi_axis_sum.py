"""Multi-axis sum: y[b] = sum over (h, w) of x[b, h, w] for a (B, H, W) fp32 tensor (x.sum(dim=(1, 2))).

Known problems:
- lines 31, 46: one program per batch entry, so only B = 64 programs (fewer than the 132 SMs) each reduce 1 MB serially in the loop of lines 34-36; the reduced axis is not split across programs (no two-stage or atomic partial sums)
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 64
H = 512
W = 512

TEST_SHAPES = [
    {"B": 3, "H": 37, "W": 129},
    {"B": 5, "H": 16, "W": 64},
]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.sum(dim=(1, 2))


@triton.jit
def batch_sum_kernel(x_ptr, y_ptr, n_per_batch, BLOCK: tl.constexpr):
    b = tl.program_id(0)
    base = x_ptr + b * n_per_batch
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_per_batch, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(base + offs, mask=offs < n_per_batch, other=0.0)
    tl.store(y_ptr + b, tl.sum(acc, axis=0))


def multi_axis_sum(x):
    x = x.contiguous()
    n_batch = x.shape[0]
    n_per_batch = x.shape[1] * x.shape[2]
    y = torch.empty(n_batch, device=x.device, dtype=x.dtype)
    BLOCK = 1024
    batch_sum_kernel[(n_batch,)](x, y, n_per_batch, BLOCK=BLOCK)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return multi_axis_sum(x)


def get_inputs():
    return [torch.randn(B, H, W)]


def get_init_inputs():
    return []
