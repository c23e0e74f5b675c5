"""LayerNorm over the last dim without affine params: y = (x - mean(x)) / sqrt(var(x) + 1e-5), x fp32 (M, N) -> y fp32 (M, N).

One Triton program normalizes one row. It walks the row in BLOCK_N-wide
chunks three times: the first loop accumulates the sum to get the mean, the
second accumulates the squared deviations from that mean (biased variance,
the numerically safe two-pass form), and the third loop re-reads the row,
normalizes it and stores it. All math is fp32.

Known problems:
- lines 39-53: the second and third loops re-read the row from global memory, so it is read three times in total (mean, variance, normalize); a 4096-float row (16 KB) fits in registers of one program, so a single-block load would do 1 read + 1 write instead of 3 reads + 1 write (the re-reads mostly hit L2, but still cost load bandwidth and latency).
- line 46: 1.0 / tl.sqrt(...) is a full-precision sqrt plus division; tl.rsqrt is cheaper (minor, once per row).
- line 60: BLOCK_N=1024 with the default num_warps=4 gives each loop iteration only 8 floats per thread in flight; a whole-row block with num_warps=8 would expose more memory-level parallelism.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 4096


@triton.jit
def layernorm_kernel(x_ptr, y_ptr, N, stride_x, stride_y, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y

    # pass 1: mean
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < N, other=0.0)
        acc += x
    mean = tl.sum(acc, axis=0) / N

    # pass 2: variance around the mean
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        d = tl.where(mask, x - mean, 0.0)
        acc += d * d
    var = tl.sum(acc, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)

    # pass 3: normalize and store
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        tl.store(y_row + cols, (x - mean) * rstd, mask=mask)


def layernorm(x, eps=1e-5):
    x = x.contiguous()
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    BLOCK_N = 1024
    grid = (n_rows,)
    layernorm_kernel[grid](x, y, n_cols, x.stride(0), y.stride(0), eps, BLOCK_N=BLOCK_N)
    return y


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.nn.functional.layer_norm(x, (x.shape[-1],), eps=1e-5)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return layernorm(x, 1e-5)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float32)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 37, "N": 1500},
    {"M": 71, "N": 129},
    {"M": 13, "N": 2077},
]
