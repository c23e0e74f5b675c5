"""Column index_select: out[:, j] = x[:, idx[j]] (torch.index_select(x, 1, idx)), fp32.

x is (M, N), idx is (K,) int64 with values in [0, N); out is (M, K).

Known problems:
- lines 40-41: the x reads are per-element 4-byte gathers at random columns along the contiguous dimension, so a warp load touches up to 32 different 32-byte sectors and most of each fetched sector is wasted (idx is used as given: no sorting or reuse of neighbouring columns)
- lines 37, 52: the same idx block is reloaded by every one of the M/BLOCK_M row-block programs (128 times); it stays in L2, so this is minor
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
N = 8192
K = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx):
        return torch.index_select(x, 1, idx)


@triton.jit
def index_select_cols_kernel(x_ptr, idx_ptr, out_ptr, M, K,
                             stride_xm, stride_xn, stride_om, stride_ok,
                             BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_k = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    row_mask = rows < M
    col_mask = cols < K
    src_cols = tl.load(idx_ptr + cols, mask=col_mask, other=0)
    mask = row_mask[:, None] & col_mask[None, :]
    rows64 = rows.to(tl.int64)
    x_ptrs = x_ptr + rows64[:, None] * stride_xm + src_cols[None, :] * stride_xn
    vals = tl.load(x_ptrs, mask=mask)
    out_ptrs = out_ptr + rows64[:, None] * stride_om + cols[None, :] * stride_ok
    tl.store(out_ptrs, vals, mask=mask)


def index_select_cols(x, idx):
    m = x.shape[0]
    k = idx.numel()
    out = torch.empty((m, k), device=x.device, dtype=x.dtype)
    BLOCK_M = 32
    BLOCK_K = 128
    grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(k, BLOCK_K))
    index_select_cols_kernel[grid](x, idx, out, m, k,
                                   x.stride(0), x.stride(1), out.stride(0), out.stride(1),
                                   BLOCK_M=BLOCK_M, BLOCK_K=BLOCK_K)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx):
        return index_select_cols(x, idx)


def get_inputs():
    x = torch.randn(M, N)
    idx = torch.randint(0, N, (K,), dtype=torch.int64)
    return [x, idx]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 64, "N": 256, "K": 128},
    {"M": 37, "N": 129, "K": 61},
]
