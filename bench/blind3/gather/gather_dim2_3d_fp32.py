"""torch.gather along the last dim of a 3-D tensor, fp32.

x: (B, M, N) fp32; idx: (B, M, K) int64 with values in [0, N).
out[b, m, k] = x[b, m, idx[b, m, k]], shape (B, M, K) fp32.

Known problems:
- line 26, 29: one program per (b, m) row with a serial loop over K in blocks of 256; each iteration's gather load depends on the idx load just before it, so every iteration pays two memory round trips back to back.
- line 30: the x loads are data-dependent scattered 4-byte accesses within the 4 KB row (uncoalesced; served from L1/L2 but with sector waste).
- line 52: BLOCK_K=256 and default num_warps=4 are untuned (2 elements per thread per iteration).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 16
M = 1024
N = 1024
K = 1024


@triton.jit
def gather_dim2_kernel(x_ptr, idx_ptr, out_ptr, N, K, BLOCK_K: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * N
    for start in range(0, K, BLOCK_K):
        offs = start + tl.arange(0, BLOCK_K)
        mask = offs < K
        j = tl.load(idx_ptr + row * K + offs, mask=mask, other=0)
        v = tl.load(x_row + j, mask=mask, other=0.0)
        tl.store(out_ptr + row * K + offs, v, mask=mask)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx):
        return torch.gather(x, 2, idx)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, idx):
        x = x.contiguous()
        idx = idx.contiguous()
        b, m, n = x.shape
        k = idx.shape[2]
        out = torch.empty((b, m, k), dtype=x.dtype, device=x.device)
        BLOCK_K = 256
        gather_dim2_kernel[(b * m,)](x, idx, out, n, k, BLOCK_K=BLOCK_K)
        return out


def get_inputs():
    x = torch.randn(B, M, N, dtype=torch.float32)
    idx = torch.randint(0, N, (B, M, K), dtype=torch.int64)
    return [x, idx]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"B": 2, "M": 16, "N": 64, "K": 512},
    {"B": 3, "M": 7, "N": 53, "K": 300},
]
