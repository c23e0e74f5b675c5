"""Max reduction over the leading dimension: out = x.amax(dim=0) for x (D0, D1, D2) bf16, out (D1, D2) bf16.

Known problems:
- lines 32-34: each program loops serially over the 32 leading rows loading only 1024 bf16 (4 per thread with 4 warps, 8-byte loads) per iteration; little memory-level parallelism per thread, likely short of HBM bandwidth.
- lines 44-46: BLOCK=1024 and default num_warps fixed, no tuning of elements per thread / vector width.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

D0 = 32
D1 = 2048
D2 = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.amax(dim=0)


@triton.jit
def amax_dim0_kernel(x_ptr, out_ptr, R, NCOLS, BLOCK: tl.constexpr):
    # x viewed as (R, NCOLS) contiguous; each program reduces BLOCK columns over all R rows.
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < NCOLS
    acc = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    for r in range(0, R):
        v = tl.load(x_ptr + r * NCOLS + offs, mask=mask, other=float("-inf")).to(tl.float32)
        acc = tl.maximum(acc, v)
    tl.store(out_ptr + offs, acc.to(tl.bfloat16), mask=mask)


def amax_dim0(x):
    x = x.contiguous()
    R = x.shape[0]
    out_shape = x.shape[1:]
    ncols = x[0].numel()
    out = torch.empty(out_shape, device=x.device, dtype=x.dtype)
    BLOCK = 1024
    grid = (triton.cdiv(ncols, BLOCK),)
    amax_dim0_kernel[grid](x, out, R, ncols, BLOCK=BLOCK)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return amax_dim0(x)


def get_inputs():
    x = torch.randn(D0, D1, D2).to(torch.bfloat16)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"D0": 4, "D1": 32, "D2": 64},
    {"D0": 7, "D1": 37, "D2": 129},
    {"D0": 1, "D1": 13, "D2": 300},
]
