"""Mean over the rows of a tall (M, N) fp32 matrix, one program per block of columns: out[j] = mean_i x[i, j].

Known problems:
- line 40: cdiv(N, 64) = 64 programs for a 132-SM GPU: most SMs stay idle while each program walks all M rows
- lines 23-27: every program reduces the whole row range serially; nothing splits the long axis across programs
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384
N = 4096
TEST_SHAPES = [{"M": 64, "N": 128}, {"M": 37, "N": 19}]


@triton.jit
def column_mean_kernel(x_ptr, out_ptr, n_rows, n_cols, stride_row, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    col_ok = cols < n_cols
    acc = tl.zeros([BLOCK_C], dtype=tl.float32)
    for start in range(0, n_rows, BLOCK_R):
        rows = start + tl.arange(0, BLOCK_R)
        mask = (rows[:, None] < n_rows) & col_ok[None, :]
        tile = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :], mask=mask, other=0.0)
        acc += tl.sum(tile, axis=0)
    tl.store(out_ptr + cols, acc / n_rows, mask=col_ok)


class Model(nn.Module):
    def forward(self, x):
        return x.mean(dim=0)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty(x.shape[1], dtype=x.dtype, device=x.device)
        grid = (triton.cdiv(x.shape[1], 64),)
        column_mean_kernel[grid](x, out, x.shape[0], x.shape[1], x.stride(0), BLOCK_R=32, BLOCK_C=64)
        return out


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return []
