"""LayerNorm over the last dim with a weight and no bias (nn.LayerNorm(N, bias=False)), fp32.

x: (M, N) fp32, y = (x - mean) / sqrt(var + eps) * weight, biased variance, eps = 1e-5.

Known problems:
- line 62: one row per program with the whole 2048-wide row in registers and the default num_warps=4; no num_warps tuning
- line 51: the weight row is re-loaded by every one of the 16384 row programs (L2 hits, minor)
- line 49: 1/sqrt instead of tl.rsqrt (minor)
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384
N = 2048
EPS = 1e-5

TEST_SHAPES = [
    {"M": 64, "N": 256},
    {"M": 37, "N": 129},
    {"M": 5, "N": 2048},
]


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.ln = nn.LayerNorm(n, eps=EPS, bias=False)

    def forward(self, x):
        return self.ln(x)


@triton.jit
def layernorm_kernel(
    x_ptr, w_ptr, y_ptr,
    N, stride_x, stride_y, eps,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N

    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    diff = tl.where(mask, x - mean, 0.0)
    var = tl.sum(diff * diff, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)

    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    y = diff * rstd * w
    tl.store(y_ptr + row * stride_y + cols, y, mask=mask)


def layernorm(x, weight, eps):
    shape = x.shape
    x2 = x.reshape(-1, shape[-1]).contiguous()
    m, n = x2.shape
    y = torch.empty_like(x2, device=x.device)
    BLOCK_N = triton.next_power_of_2(n)
    layernorm_kernel[(m,)](
        x2, weight, y,
        n, x2.stride(0), y.stride(0), eps,
        BLOCK_N=BLOCK_N,
    )
    return y.reshape(shape)


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.ln = nn.LayerNorm(n, eps=EPS, bias=False)

    def forward(self, x):
        return layernorm(x, self.ln.weight, self.ln.eps)


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return [N]
