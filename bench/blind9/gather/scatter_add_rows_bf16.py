"""out = torch.zeros(R, D, dtype=bf16).scatter_add(0, idx[:, None].expand(-1, D), src), src (N, D) bf16, idx (N,) in [0, R).

Known problems:
- fp32 atomics into a zeroed scratch buffer followed by a separate cast kernel: extra passes and memory.
- Atomic contention on repeated rows (~N/R adds per output row); nondeterministic summation order.
- Fixed block sizes, no autotune; no sort/segment reduction to avoid atomics.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

R = 8192
D = 512
N = 131072


class Model(nn.Module):
    def __init__(self, num_rows):
        super().__init__()
        self.num_rows = num_rows

    def forward(self, src, idx):
        out = torch.zeros(self.num_rows, src.shape[1], dtype=src.dtype, device=src.device)
        return out.scatter_add(0, idx[:, None].expand(-1, src.shape[1]), src)


@triton.jit
def _scatter_rows_kernel(src_ptr, idx_ptr, acc_ptr, N, D,
                         BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    pid_n = tl.program_id(0)
    pid_d = tl.program_id(1)
    rows = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    cols = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    rmask = rows < N
    cmask = cols < D
    dst = tl.load(idx_ptr + rows, mask=rmask, other=0)
    mask = rmask[:, None] & cmask[None, :]
    v = tl.load(src_ptr + rows[:, None].to(tl.int64) * D + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    tl.atomic_add(acc_ptr + dst[:, None].to(tl.int64) * D + cols[None, :], v, mask=mask)


@triton.jit
def _cast_kernel(acc_ptr, out_ptr, numel, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    a = tl.load(acc_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, a.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_rows):
        super().__init__()
        self.num_rows = num_rows

    def forward(self, src, idx):
        src = src.contiguous()
        idx = idx.contiguous()
        n, d = src.shape
        acc = torch.zeros((self.num_rows, d), dtype=torch.float32, device=src.device)
        BLOCK_N, BLOCK_D = 16, 128
        grid = (triton.cdiv(n, BLOCK_N), triton.cdiv(d, BLOCK_D))
        _scatter_rows_kernel[grid](src, idx, acc, n, d, BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D)
        out = torch.empty((self.num_rows, d), dtype=src.dtype, device=src.device)
        numel = out.numel()
        BLOCK = 1024
        _cast_kernel[(triton.cdiv(numel, BLOCK),)](acc, out, numel, BLOCK=BLOCK)
        return out


def get_inputs():
    src = torch.randn(N, D, dtype=torch.bfloat16)
    idx = torch.randint(0, R, (N,), dtype=torch.int64)
    return [src, idx]


def get_init_inputs():
    return [R]


TEST_SHAPES = [
    {"R": 8, "D": 64, "N": 40},
    {"R": 30, "D": 200, "N": 150},
    {"R": 13, "D": 70, "N": 77},
]
