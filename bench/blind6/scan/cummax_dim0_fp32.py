"""Cumulative maximum down the first dimension.

torch.cummax(x, dim=0).values for x (M=4096, N=4096) fp32. Output (4096, 4096)
fp32: out[i, j] = max(x[0..i, j]).

Known problems:
- lines 41-42: one program per 128 columns gives only 4096/128 = 32 programs for the whole 4096x4096 array, far fewer than the SMs of the GPU.
- lines 32-35: each program walks all 4096 rows serially, one dependent 512-byte load -> max -> store per step; no parallelism along dim 0 (no blocked scan over row chunks with a carry), so the kernel is latency bound with little memory-level parallelism.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
N = 4096


@triton.jit
def cummax_dim0_kernel(
    x_ptr, y_ptr,
    M, N,
    stride_xm, stride_xn,
    stride_ym, stride_yn,
    BLOCK_N: tl.constexpr,
):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N

    running = tl.full((BLOCK_N,), float("-inf"), dtype=tl.float32)
    for i in range(0, M):
        x = tl.load(x_ptr + i * stride_xm + cols * stride_xn, mask=mask, other=float("-inf"))
        running = tl.maximum(running, x)
        tl.store(y_ptr + i * stride_ym + cols * stride_yn, running, mask=mask)


def cummax_dim0(x):
    Mv, Nv = x.shape
    y = torch.empty_like(x)
    BLOCK_N = 128
    grid = (triton.cdiv(Nv, BLOCK_N),)
    cummax_dim0_kernel[grid](
        x, y,
        Mv, Nv,
        x.stride(0), x.stride(1),
        y.stride(0), y.stride(1),
        BLOCK_N=BLOCK_N,
    )
    return y


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cummax(x, dim=0).values


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return cummax_dim0(x)


def get_inputs():
    x = torch.randn(M, N, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 64, "N": 256},
    {"M": 37, "N": 129},
    {"M": 100, "N": 7},
]
