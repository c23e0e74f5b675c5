"""torch.linalg.vector_norm(x, dim=0) of an (M, N) bf16 tensor (bf16 output, fp32 accumulation).

Known problems:
- Grid only spans column blocks (N / BLOCK_N programs), so the GPU is badly under-filled for N=2048.
- Fixed BLOCK_M/BLOCK_N, no autotune, no split-M reduction.
- Each row segment read is only BLOCK_N * 2 bytes wide, giving short memory transactions.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 32768
N = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.linalg.vector_norm(x, dim=0)


@triton.jit
def _l2_col_kernel(x_ptr, out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = pid * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < N
    rows0 = tl.arange(0, BLOCK_M)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, M, BLOCK_M):
        rows = start + rows0
        mask = (rows[:, None] < M) & cmask[None, :]
        ptrs = x_ptr + rows[:, None].to(tl.int64) * N + cols[None, :]
        v = tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)
        acc += v * v
    s = tl.sum(acc, axis=0)
    tl.store(out_ptr + cols, tl.sqrt(s).to(out_ptr.dtype.element_ty), mask=cmask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        out = torch.empty((n,), dtype=x.dtype, device=x.device)
        BLOCK_N = 64
        grid = (triton.cdiv(n, BLOCK_N),)
        _l2_col_kernel[grid](x, out, m, n, BLOCK_M=32, BLOCK_N=BLOCK_N)
        return out


def get_inputs():
    return [torch.randn(M, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 50, "N": 70},
    {"M": 257, "N": 130},
    {"M": 111, "N": 65},
]
