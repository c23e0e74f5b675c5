"""Gaussian negative log likelihood, mean reduction:
torch.nn.functional.gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction='mean')
  = mean(0.5 * (log(clamp(var, min=eps)) + (input - target)**2 / clamp(var, min=eps)))
Known problems:
- Two-stage reduction: per-block partial sums to a global buffer, then a single-program kernel sums them (extra launch, serial tail).
- Fixed block size / num_warps, no autotune; one block per program (many partials).
- Uses a true division and log per element (no fast-math approximations).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 4096
EPS = 1e-6


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, input, target, var):
        return torch.nn.functional.gaussian_nll_loss(input, target, var, full=False, eps=EPS, reduction="mean")


@triton.jit
def _gnll_partial_kernel(in_ptr, tg_ptr, var_ptr, part_ptr, n, eps, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(in_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(tg_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    v = tl.load(var_ptr + offs, mask=mask, other=1.0).to(tl.float32)
    v = tl.maximum(v, eps)
    d = a - b
    l = 0.5 * (tl.log(v) + d * d / v)
    l = tl.where(mask, l, 0.0)
    tl.store(part_ptr + pid, tl.sum(l, axis=0))


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

    def forward(self, input, target, var):
        input = input.contiguous()
        target = target.contiguous()
        var = var.contiguous()
        n = input.numel()
        BLOCK = 4096
        n_parts = triton.cdiv(n, BLOCK)
        parts = torch.empty(n_parts, dtype=torch.float32, device=input.device)
        _gnll_partial_kernel[(n_parts,)](input, target, var, parts, n, EPS, BLOCK=BLOCK, num_warps=8)
        out = torch.empty((), dtype=torch.float32, device=input.device)
        _mean_kernel[(1,)](parts, out, n_parts, n, BLOCK=1024, num_warps=4)
        return out.to(input.dtype)


def get_inputs():
    inp = torch.randn(M, N, dtype=torch.float32)
    target = torch.randn(M, N, dtype=torch.float32)
    var = torch.rand(M, N, dtype=torch.float32) * 2.0 + 0.05
    return [inp, target, var]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 3, "N": 50},
    {"M": 17, "N": 333},
    {"M": 9, "N": 1001},
]
