"""Poisson negative log-likelihood loss (log input), fp32.

log_rate (SIZE,) fp32 ~ randn, target = torch.poisson(torch.rand(SIZE) * 5) fp32;
F.poisson_nll_loss(log_rate, target, log_input=True, full=False) with mean
reduction = mean(exp(log_rate) - target * log_rate), a 0-dim fp32 tensor.
Benchmark shape: SIZE=16777216.

Known problems:
- line 40: every one of the 16384 programs does a fp32 tl.atomic_add to the same scalar, so the final accumulation is serialized on one address (and non-deterministic in summation order); a two-stage reduction or a persistent grid with one atomic per program would avoid it.
- lines 32-39, 48-49: one 1024-element block per program (no grid-stride loop / multiple elements per thread), default num_warps, no autotuning.
- line 47: torch.zeros launches a separate memset kernel before the Triton kernel.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

SIZE = 16777216


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, log_rate, target):
        return F.poisson_nll_loss(log_rate, target, log_input=True, full=False)


@triton.jit
def poisson_nll_kernel(inp_ptr, tgt_ptr, out_ptr, n, inv_n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(inp_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    t = tl.load(tgt_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    loss = tl.exp(x) - t * x
    loss = tl.where(mask, loss, 0.0)
    partial = tl.sum(loss, axis=0) * inv_n
    tl.atomic_add(out_ptr, partial)


def poisson_nll_loss(log_rate, target):
    log_rate = log_rate.contiguous()
    target = target.contiguous()
    n = log_rate.numel()
    out = torch.zeros((), device=log_rate.device, dtype=torch.float32)
    BLOCK = 1024
    grid = (triton.cdiv(n, BLOCK),)
    poisson_nll_kernel[grid](log_rate, target, out, n, 1.0 / n, BLOCK=BLOCK)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, log_rate, target):
        return poisson_nll_loss(log_rate, target)


def get_inputs():
    log_rate = torch.randn(SIZE, dtype=torch.float32)
    target = torch.poisson(torch.rand(SIZE, dtype=torch.float32) * 5)
    return [log_rate, target]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"SIZE": 65536},
    {"SIZE": 100003},
    {"SIZE": 37},
]
