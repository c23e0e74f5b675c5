"""out = x.index_add(1, idx, src) with x (M, N) fp16, idx (K,) int64 in [0, N) with repeats, src (M, K) fp16.

Known problems:
- Uses fp32 atomics into a zeroed scratch buffer, then a second kernel adds x and casts: extra passes and memory.
- Atomic adds scatter over columns within a row (poorly coalesced), and contend on repeated indices.
- Fixed block sizes, no autotune; summation order is nondeterministic.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
N = 1024
K = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx, src):
        return x.index_add(1, idx, src)


@triton.jit
def _scatter_cols_kernel(src_ptr, idx_ptr, acc_ptr, M, N, K,
                         BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_k = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    ks = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    rmask = rows < M
    kmask = ks < K
    cols = tl.load(idx_ptr + ks, mask=kmask, other=0)
    mask = rmask[:, None] & kmask[None, :]
    v = tl.load(src_ptr + rows[:, None].to(tl.int64) * K + ks[None, :], mask=mask, other=0.0).to(tl.float32)
    tl.atomic_add(acc_ptr + rows[:, None].to(tl.int64) * N + cols[None, :], v, mask=mask)


@triton.jit
def _add_cast_kernel(x_ptr, acc_ptr, out_ptr, numel, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    a = tl.load(acc_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, (x + a).to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx, src):
        x = x.contiguous()
        idx = idx.contiguous()
        src = src.contiguous()
        m, n = x.shape
        k = idx.shape[0]
        acc = torch.zeros((m, n), dtype=torch.float32, device=x.device)
        BLOCK_M, BLOCK_K = 32, 64
        grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(k, BLOCK_K))
        _scatter_cols_kernel[grid](src, idx, acc, m, n, k, BLOCK_M=BLOCK_M, BLOCK_K=BLOCK_K)
        out = torch.empty_like(x)
        numel = x.numel()
        BLOCK = 1024
        _add_cast_kernel[(triton.cdiv(numel, BLOCK),)](x, acc, out, numel, BLOCK=BLOCK)
        return out


def get_inputs():
    x = torch.randn(M, N, dtype=torch.float16)
    idx = torch.randint(0, N, (K,), dtype=torch.int64)
    src = torch.randn(M, K, dtype=torch.float16)
    return [x, idx, src]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 20, "N": 16, "K": 40},
    {"M": 45, "N": 50, "K": 130},
    {"M": 33, "N": 37, "K": 71},
]
