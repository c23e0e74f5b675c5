"""Scatter-add along columns into a zero matrix (fp32).

Computes out = torch.zeros(M, N).scatter_add_(1, index, src), i.e.
out[m, index[m, k]] += src[m, k].
  index: (M, K) int64, random in [0, N) (with repeats)
  src:   (M, K) float32
  out:   (M, N) float32   (N is the __init__ argument n_cols)

Known problems:
- Every element is a global fp32 atomic add; with K=2048 updates into N=1024 columns per
  row there are many collisions on the same addresses, serialising the atomics.
- The output is zero-filled by a separate torch.zeros pass before the scatter kernel
  (an extra full write of the output).
- Atomic accumulation order is nondeterministic, so results vary run to run by rounding.
- BLOCK_K=1024 is a fixed guess; no attempt to accumulate a row in shared memory first.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
N = 1024
K = 2048


class Model(nn.Module):
    def __init__(self, n_cols):
        super().__init__()
        self.n_cols = n_cols

    def forward(self, index, src):
        out = torch.zeros(src.shape[0], self.n_cols, device=src.device, dtype=src.dtype)
        return out.scatter_add_(1, index, src)


@triton.jit
def scatter_add_cols_kernel(index_ptr, src_ptr, out_ptr, K, N_COLS,
                            BLOCK_K: tl.constexpr):
    row = tl.program_id(0)
    pid_k = tl.program_id(1)
    offs_k = pid_k * BLOCK_K + tl.arange(0, BLOCK_K)
    mask = offs_k < K
    in_off = row.to(tl.int64) * K + offs_k
    col = tl.load(index_ptr + in_off, mask=mask, other=0)
    val = tl.load(src_ptr + in_off, mask=mask, other=0.0)
    tl.atomic_add(out_ptr + row.to(tl.int64) * N_COLS + col, val, mask=mask)


def scatter_add_cols(index, src, n_cols):
    index = index.contiguous()
    src = src.contiguous()
    m, k = src.shape
    out = torch.zeros((m, n_cols), device=src.device, dtype=src.dtype)
    BLOCK_K = 1024
    grid = (m, triton.cdiv(k, BLOCK_K))
    scatter_add_cols_kernel[grid](index, src, out, k, n_cols, BLOCK_K=BLOCK_K)
    return out


class ModelNew(nn.Module):
    def __init__(self, n_cols):
        super().__init__()
        self.n_cols = n_cols

    def forward(self, index, src):
        return scatter_add_cols(index, src, self.n_cols)


def get_inputs():
    index = torch.randint(0, N, (M, K), dtype=torch.int64)
    src = torch.randn(M, K, dtype=torch.float32)
    return [index, src]


def get_init_inputs():
    return [N]


TEST_SHAPES = [
    {"M": 37, "N": 100, "K": 129},
    {"M": 64, "N": 7, "K": 1500},
    {"M": 5, "N": 300, "K": 37},
]
