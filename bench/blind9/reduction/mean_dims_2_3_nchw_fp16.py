"""x.mean(dim=(2, 3)) of an (N, C, H, W) fp16 tensor (global average pool), fp32 accumulation.

Known problems:
- One program per (n, c) plane with a fixed BLOCK; 784-element planes leave much of a 1024 block masked.
- No multi-plane tiling per program and no autotune; tiny per-program work for small H*W.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 64
C = 512
H = 28
W = 28


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.mean(dim=(2, 3))


@triton.jit
def _plane_mean_kernel(x_ptr, out_ptr, HW, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row.to(tl.int64) * HW
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, HW, BLOCK):
        idx = start + offs
        v = tl.load(base + idx, mask=idx < HW, other=0.0).to(tl.float32)
        acc += v
    s = tl.sum(acc, axis=0)
    tl.store(out_ptr + row, (s / HW).to(out_ptr.dtype.element_ty))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        n, c, h, w = x.shape
        out = torch.empty((n, c), dtype=x.dtype, device=x.device)
        _plane_mean_kernel[(n * c,)](x, out, h * w, BLOCK=1024)
        return out


def get_inputs():
    return [torch.randn(N, C, H, W, dtype=torch.float16)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N": 2, "C": 3, "H": 5, "W": 7},
    {"N": 3, "C": 4, "H": 37, "W": 41},
    {"N": 2, "C": 5, "H": 13, "W": 11},
]
