"""cumulative minimum along dim 0 (values only): torch.cummin(x, dim=0).values for x (M, N) bf16.
Known problems:
- one program per column block walks all M rows serially (chunked): only N/BLOCK_N programs (64 at the benchmark shape), far too few to fill the GPU
- fixed block sizes (64 x 64), no autotune
- NaN propagation semantics of torch.cummin not handled (tl.minimum)
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cummin(x, dim=0).values


@triton.jit
def _min_combine(a, b):
    return tl.minimum(a, b)


@triton.jit
def _cummin_dim0_kernel(
    x_ptr, y_ptr,
    ML, NL, sxm, sym,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid_n = tl.program_id(0)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_n = offs_n < NL
    offs_m = tl.arange(0, BLOCK_M)
    carry = tl.full((BLOCK_N,), float("inf"), dtype=tl.float32)
    for m0 in range(0, ML, BLOCK_M):
        mm = m0 + offs_m
        mask = (mm < ML)[:, None] & mask_n[None, :]
        v = tl.load(x_ptr + mm[:, None] * sxm + offs_n[None, :], mask=mask, other=float("inf")).to(tl.float32)
        s = tl.associative_scan(v, 0, _min_combine)
        s = tl.minimum(s, carry[None, :])
        tl.store(y_ptr + mm[:, None] * sym + offs_n[None, :], s.to(y_ptr.dtype.element_ty), mask=mask)
        carry = tl.minimum(carry, tl.min(v, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        BLOCK_M, BLOCK_N = 64, 64
        grid = (triton.cdiv(n, BLOCK_N),)
        _cummin_dim0_kernel[grid](x, y, m, n, x.stride(0), y.stride(0),
                                  BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=4)
        return y


def get_inputs():
    return [torch.randn(M, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 100, "N": 64},
    {"M": 130, "N": 70},
    {"M": 77, "N": 5},
]
