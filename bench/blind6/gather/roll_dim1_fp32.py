"""Roll along dim 1.

torch.roll(x, shifts=SHIFT, dims=1) for x (M=8192, N=8192) fp32, SHIFT=123:
out[i, j] = x[i, (j - SHIFT) mod N]. Output (8192, 8192) fp32.

Known problems:
- lines 35-36: the source column is computed with an integer modulo per element, and the shifted source addresses (offset 123 floats) are not 16-byte aligned, so the loads cannot be vectorized; the wrap-around is not split into two contiguous copies.
- lines 44-45: a fixed 32x128 tile with the default num_warps; no tuning of the copy size per program.
- line 33: bounds masks are applied on every tile, though only edge tiles need them (none at 8192x8192).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 8192
SHIFT = 123


@triton.jit
def roll_dim1_kernel(
    x_ptr, y_ptr,
    M, N, shift,
    stride_xm, stride_xn,
    stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)

    src_cols = (cols - shift + N) % N
    x = tl.load(x_ptr + rows[:, None] * stride_xm + src_cols[None, :] * stride_xn, mask=mask)
    tl.store(y_ptr + rows[:, None] * stride_ym + cols[None, :] * stride_yn, x, mask=mask)


def roll_dim1(x, shift):
    Mv, Nv = x.shape
    y = torch.empty_like(x)
    s = shift % Nv
    BLOCK_M, BLOCK_N = 32, 128
    grid = (triton.cdiv(Mv, BLOCK_M), triton.cdiv(Nv, BLOCK_N))
    roll_dim1_kernel[grid](
        x, y,
        Mv, Nv, s,
        x.stride(0), x.stride(1),
        y.stride(0), y.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
    )
    return y


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.roll(x, shifts=SHIFT, dims=1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return roll_dim1(x, SHIFT)


def get_inputs():
    x = torch.randn(M, N, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 64, "N": 256},
    {"M": 37, "N": 129},
    {"M": 100, "N": 100, "SHIFT": 7},
]
