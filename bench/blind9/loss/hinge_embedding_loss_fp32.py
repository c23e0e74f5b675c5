"""Hinge embedding loss, mean reduction:
torch.nn.functional.hinge_embedding_loss(x, y, margin=1.0, reduction='mean'), y in {-1, +1}.
Known problems:
- Two-stage reduction: per-block partial sums to a global buffer, then a single-program kernel sums them (extra launch, serial tail).
- Fixed block size / num_warps, no autotune; each program handles only one block (many tiny programs, many partials).
- y is read as a full fp32 tensor although it only carries a sign.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
N = 8192
MARGIN = 1.0


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return torch.nn.functional.hinge_embedding_loss(x, y, margin=MARGIN, reduction="mean")


@triton.jit
def _hinge_partial_kernel(x_ptr, y_ptr, part_ptr, n, margin, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    marg = tl.where(y != 1.0, tl.maximum(margin - x, 0.0), 0.0)
    slf = tl.where(y != -1.0, x, 0.0)
    v = tl.where(mask, marg + slf, 0.0)
    tl.store(part_ptr + pid, tl.sum(v, axis=0))


@triton.jit
def _mean_kernel(buf_ptr, out_ptr, n_parts, n_total, BLOCK: tl.constexpr):
    offs0 = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_parts, BLOCK):
        offs = start + offs0
        acc += tl.load(buf_ptr + offs, mask=offs < n_parts, other=0.0)
    total = tl.sum(acc, axis=0)
    tl.store(out_ptr, total / n_total)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        x = x.contiguous()
        y = y.contiguous()
        n = x.numel()
        BLOCK = 4096
        n_parts = triton.cdiv(n, BLOCK)
        parts = torch.empty(n_parts, dtype=torch.float32, device=x.device)
        _hinge_partial_kernel[(n_parts,)](x, y, parts, n, MARGIN, BLOCK=BLOCK, num_warps=8)
        out = torch.empty((), dtype=torch.float32, device=x.device)
        _mean_kernel[(1,)](parts, out, n_parts, n, BLOCK=1024, num_warps=4)
        return out.to(x.dtype)


def get_inputs():
    x = torch.randn(M, N, dtype=torch.float32)
    y = torch.randint(0, 2, (M, N)).to(torch.float32) * 2.0 - 1.0
    return [x, y]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 3, "N": 50},
    {"M": 17, "N": 333},
    {"M": 9, "N": 1001},
]
