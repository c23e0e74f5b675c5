"""Sum over the middle dimension: y = x.sum(dim=1) of a (B, M, N) fp32 tensor; y is (B, N) fp32.

Known problems:
- L51-L52: the grid is B * cdiv(N, 128) = 256 programs (about 2 per SM), each summing all M=1024 rows serially, with no split over M; too few programs to saturate HBM.
- L29-L31: each iteration loads a single 128-float row segment (512 bytes, one float per thread with the default 4 warps) and adds it before the next; very little memory in flight per SM, so the loop is latency-bound.
- L51: BLOCK_N = 128 and the default num_warps are untuned; a 2-D tile (several rows per iteration) would be the natural fix.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 32
M = 1024
N = 1024


@triton.jit
def sum_dim1_kernel(x_ptr, y_ptr, M, N, stride_b, stride_m, stride_yb, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    num_col_blocks = tl.cdiv(N, BLOCK_N)
    b = pid // num_col_blocks
    cb = pid % num_col_blocks
    cols = cb * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    base = x_ptr + b * stride_b
    for m in range(0, M):
        x = tl.load(base + m * stride_m + cols, mask=mask, other=0.0)
        acc += x
    tl.store(y_ptr + b * stride_yb + cols, acc, mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.sum(dim=1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        b, m, n = x.shape
        y = torch.empty((b, n), dtype=x.dtype, device=x.device)
        BLOCK_N = 128
        grid = (b * triton.cdiv(n, BLOCK_N),)
        sum_dim1_kernel[grid](x, y, m, n, x.stride(0), x.stride(1), y.stride(0), BLOCK_N=BLOCK_N)
        return y


def get_inputs():
    return [torch.randn(B, M, N, dtype=torch.float32)]


def get_init_inputs():
    return []


TEST_SHAPES = [{"B": 2, "M": 16, "N": 256}, {"B": 3, "M": 13, "N": 203}]
