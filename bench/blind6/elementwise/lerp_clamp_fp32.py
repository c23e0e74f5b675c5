"""Lerp followed by clamp, fp32.

out = torch.lerp(a, b, w).clamp(-1, 1), i.e. a + w * (b - a) clamped to [-1, 1].
a, b, w: (R, C) fp32, w uniform in [0, 1) -> out: (R, C) fp32.
Benchmark shape: R = 8192, C = 8192.

Known problems:
- none substantial: a purely memory-bound streaming kernel (three reads, one write per element, contiguous and coalesced) that should run near HBM bandwidth. Minor: lines 48-50 fix BLOCK=1024 / num_warps=4 with no autotuning (65536 small programs), and lines 43-45 call .contiguous() on inputs that are already contiguous (no-ops here, but copies if they were not).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

R = 8192
C = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, w):
        return torch.lerp(a, b, w).clamp(-1, 1)


@triton.jit
def _lerp_clamp_kernel(a_ptr, b_ptr, w_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    w = tl.load(w_ptr + offs, mask=mask)
    diff = b - a
    # same two-sided formula as torch.lerp for accuracy near w = 1
    r = tl.where(w < 0.5, a + w * diff, b - diff * (1.0 - w))
    r = tl.minimum(tl.maximum(r, -1.0), 1.0)
    tl.store(out_ptr + offs, r, mask=mask)


def lerp_clamp(a, b, w):
    a = a.contiguous()
    b = b.contiguous()
    w = w.contiguous()
    out = torch.empty_like(a)
    n = a.numel()
    BLOCK = 1024
    grid = (triton.cdiv(n, BLOCK),)
    _lerp_clamp_kernel[grid](a, b, w, out, n, BLOCK=BLOCK, num_warps=4)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, w):
        return lerp_clamp(a, b, w)


def get_inputs():
    a = torch.randn(R, C, dtype=torch.float32)
    b = torch.randn(R, C, dtype=torch.float32)
    w = torch.rand(R, C, dtype=torch.float32)
    return [a, b, w]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"R": 64, "C": 64},
    {"R": 37, "C": 129},
    {"R": 100, "C": 1000},
]
