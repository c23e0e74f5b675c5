"""Normalize every column of a 2D tensor over dim 0 (no affine).

x: (R, C) fp32 with R = 4096 rows, C = 8192 columns.
For each column c: mean = x[:, c].mean(), var = biased variance over the R rows,
y[:, c] = (x[:, c] - mean) / sqrt(var + 1e-5). Output (R, C) fp32.

Known problems:
- lines 50-56, 63-70: x is read twice (stats pass, then normalize pass); the 128 MiB input far exceeds L2, so the second read goes to HBM: 3 passes over memory instead of the minimum 2
- lines 76-77: grid is cdiv(8192, 64) = 128 programs, under one per SM on a 132-SM H100, each walking all 4096 rows serially; the row dimension is not split, so occupancy and memory-level parallelism are low
- lines 53-54, 76, 84: each tile row is only 64 fp32 (256 B) contiguous and the 32x64 tile on 4 warps is small per iteration; fixed config, no autotuning
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

R = 4096
C = 8192

EPS = 1e-5


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        mean = x.mean(dim=0, keepdim=True)
        var = x.var(dim=0, unbiased=False, keepdim=True)
        return (x - mean) / torch.sqrt(var + EPS)


@triton.jit
def col_norm_kernel(
    x_ptr, y_ptr,
    n_rows, n_cols,
    stride_xr, stride_xc,
    stride_yr, stride_yc,
    eps,
    BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr,
):
    pid = tl.program_id(0)
    offs_c = pid * BLOCK_C + tl.arange(0, BLOCK_C)
    offs_r = tl.arange(0, BLOCK_R)
    c_mask = offs_c < n_cols

    # pass 1: per-column sum and sum of squares
    acc_sum = tl.zeros((BLOCK_R, BLOCK_C), dtype=tl.float32)
    acc_sq = tl.zeros((BLOCK_R, BLOCK_C), dtype=tl.float32)
    for r0 in range(0, n_rows, BLOCK_R):
        rows = r0 + offs_r
        mask = (rows[:, None] < n_rows) & c_mask[None, :]
        x = tl.load(x_ptr + rows[:, None] * stride_xr + offs_c[None, :] * stride_xc,
                    mask=mask, other=0.0).to(tl.float32)
        acc_sum += x
        acc_sq += x * x
    mean = tl.sum(acc_sum, axis=0) / n_rows
    var = tl.sum(acc_sq, axis=0) / n_rows - mean * mean
    var = tl.maximum(var, 0.0)
    rstd = 1.0 / tl.sqrt(var + eps)

    # pass 2: normalize and write
    for r0 in range(0, n_rows, BLOCK_R):
        rows = r0 + offs_r
        mask = (rows[:, None] < n_rows) & c_mask[None, :]
        x = tl.load(x_ptr + rows[:, None] * stride_xr + offs_c[None, :] * stride_xc,
                    mask=mask, other=0.0).to(tl.float32)
        y = (x - mean[None, :]) * rstd[None, :]
        tl.store(y_ptr + rows[:, None] * stride_yr + offs_c[None, :] * stride_yc,
                 y.to(y_ptr.dtype.element_ty), mask=mask)


def layernorm_dim0(x, eps):
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    BLOCK_R, BLOCK_C = 32, 64
    grid = (triton.cdiv(n_cols, BLOCK_C),)
    col_norm_kernel[grid](
        x, y, n_rows, n_cols,
        x.stride(0), x.stride(1),
        y.stride(0), y.stride(1),
        eps,
        BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C,
        num_warps=4,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return layernorm_dim0(x, EPS)


def get_inputs():
    return [torch.randn(R, C, dtype=torch.float32)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"R": 256, "C": 128},
    {"R": 100, "C": 129},
    {"R": 37, "C": 300},
]
