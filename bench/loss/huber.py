"""Huber (smooth L1 with delta) loss, mean reduction, between two (M, N) fp32 matrices.

Known problems:
- line 45: row sums written to a buffer and summed by a second torch call: an extra launch and round trip
- line 22: one program per row: the whole reduction in two stages, the second outside Triton
- line 44: BLOCK_SIZE=256 for rows of 8192
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 8192
DELTA = 1.0
TEST_SHAPES = [{"M": 7, "N": 300}, {"M": 16, "N": 256}]


@triton.jit
def huber_rows_kernel(x_ptr, y_ptr, partial_ptr, n_cols, stride_row, delta, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK_SIZE,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_row + cols, mask=mask, other=0.0)
        y = tl.load(y_ptr + row * stride_row + cols, mask=mask, other=0.0)
        d = tl.abs(x - y)
        loss = tl.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
        acc += tl.where(mask, loss, 0.0)
    tl.store(partial_ptr + row, tl.sum(acc, axis=0))


class Model(nn.Module):
    def forward(self, x, y):
        return torch.nn.functional.huber_loss(x, y, delta=DELTA).reshape(1)


class ModelNew(nn.Module):
    def forward(self, x, y):
        m, n = x.shape
        partial = torch.empty(m, dtype=torch.float32, device=x.device)
        huber_rows_kernel[(m,)](x, y, partial, n, x.stride(0), DELTA, BLOCK_SIZE=256)
        return (partial.sum() / (m * n)).reshape(1)


def get_inputs():
    return [torch.randn(M, N), torch.randn(M, N)]


def get_init_inputs():
    return []
