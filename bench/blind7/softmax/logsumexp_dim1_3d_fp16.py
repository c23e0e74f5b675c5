"""Log-sum-exp over the middle axis of a 3-D tensor.

Computes torch.logsumexp(x.float(), dim=1).half() for x of shape (A, B, C) float16:
fp32 math, float16 result of shape (A, C).
Benchmark shape: A=32, B=1024, C=256 (~16.8 MB in, 16 KB out).

Known problems:
- Grid is A * cdiv(C, BLOCK_C) = 32 * 2 = 64 programs for the benchmark shape, far
  fewer than the SMs of a large GPU; the reduction axis (B=1024) is walked serially
  inside each program rather than split across programs.
- Online max/sum does one exp plus a rescale exp per element, i.e. two
  transcendental ops per element instead of one.
- BLOCK_C=128 / num_warps=4 are fixed guesses, not tuned.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

A = 32
B = 1024
C = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.logsumexp(x.float(), dim=1).to(torch.float16)


@triton.jit
def _lse_dim1_kernel(x_ptr, y_ptr, n_b, n_c, BLOCK_C: tl.constexpr):
    pid_a = tl.program_id(0)
    pid_c = tl.program_id(1)
    cols = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    cmask = cols < n_c
    base = pid_a.to(tl.int64) * n_b * n_c
    m = tl.full([BLOCK_C], float("-inf"), dtype=tl.float32)
    s = tl.zeros([BLOCK_C], dtype=tl.float32)
    for j in range(0, n_b):
        x = tl.load(x_ptr + base + j * n_c + cols, mask=cmask, other=0.0).to(tl.float32)
        m_new = tl.maximum(m, x)
        s = s * tl.exp(m - m_new) + tl.exp(x - m_new)
        m = m_new
    out = m + tl.log(s)
    tl.store(y_ptr + pid_a.to(tl.int64) * n_c + cols, out.to(y_ptr.dtype.element_ty), mask=cmask)


def logsumexp_dim1(x):
    x = x.contiguous()
    a, b, c = x.shape
    y = torch.empty((a, c), dtype=x.dtype, device=x.device)
    BLOCK_C = 128
    grid = (a, triton.cdiv(c, BLOCK_C))
    _lse_dim1_kernel[grid](x, y, b, c, BLOCK_C=BLOCK_C, num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return logsumexp_dim1(x)


def get_inputs():
    x = torch.randn(A, B, C, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"A": 3, "B": 37, "C": 100},
    {"A": 5, "B": 129, "C": 129},
    {"A": 2, "B": 1, "C": 256},
]
