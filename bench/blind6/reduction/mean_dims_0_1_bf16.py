"""Mean over the first two dims, bf16.

x: (D0, D1, D2) bf16 -> x.mean(dim=(0, 1)): (D2,) bf16 (fp32 accumulation).
Benchmark shape: D0=64, D1=512, D2=1024.

Known problems:
- lines 55-56: grid is cdiv(1024, 64) = 16 programs, each looping over all 32768 rows; most SMs sit idle and memory bandwidth is far from saturated (no split of the reduction dimension with a second pass or atomics)
- lines 40-41: each row slice is only 64 bf16 = 128 bytes wide, with masks on every iteration
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

D0 = 64
D1 = 512
D2 = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.mean(dim=(0, 1))


@triton.jit
def mean_rows_kernel(x_ptr, out_ptr, R, NCOL, inv_r,
                     BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr):
    # x viewed as (R, NCOL) row-major; each program owns BLOCK_N columns
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < NCOL
    offs_r = tl.arange(0, BLOCK_R)

    acc = tl.zeros((BLOCK_R, BLOCK_N), dtype=tl.float32)
    for r0 in range(0, R, BLOCK_R):
        rows = r0 + offs_r
        x = tl.load(x_ptr + rows[:, None] * NCOL + cols[None, :],
                    mask=(rows[:, None] < R) & col_mask[None, :], other=0.0)
        acc += x.to(tl.float32)

    total = tl.sum(acc, axis=0)
    tl.store(out_ptr + cols, (total * inv_r).to(out_ptr.dtype.element_ty), mask=col_mask)


def mean_dims_0_1(x):
    x = x.contiguous()
    d0, d1, d2 = x.shape
    r = d0 * d1
    out = torch.empty((d2,), device=x.device, dtype=x.dtype)
    BLOCK_R = 64
    BLOCK_N = 64
    grid = (triton.cdiv(d2, BLOCK_N),)
    mean_rows_kernel[grid](x, out, r, d2, 1.0 / r, BLOCK_R=BLOCK_R, BLOCK_N=BLOCK_N)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return mean_dims_0_1(x)


def get_inputs():
    return [torch.randn(D0, D1, D2, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"D0": 4, "D1": 32, "D2": 128},
    {"D0": 3, "D1": 37, "D2": 100},
    {"D0": 5, "D1": 129, "D2": 65},
]
