"""LayerNorm over the last dim of a residual sum:
h = x + residual; return torch.nn.functional.layer_norm(h, (N,), weight, bias, eps=1e-5)
Known problems:
- One program per row with a fixed power-of-two block (2048 for N=1536): 25% of lanes masked off.
- Fixed num_warps, no autotune over warps/stages.
- Mean and variance done as two separate reductions over the row held in registers (extra reduction pass).
- The summed residual h is not written back, so a caller that needs it would have to recompute it.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 32768
N = 1536
EPS = 1e-5


class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, n, dtype=torch.float32))
        self.bias = nn.Parameter(torch.linspace(-0.2, 0.2, n, dtype=torch.float32))

    def forward(self, x, residual):
        h = x + residual
        return torch.nn.functional.layer_norm(h, (self.n,), self.weight.to(h.dtype), self.bias.to(h.dtype), EPS)


@triton.jit
def _add_layernorm_kernel(x_ptr, r_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps,
                          BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_N)
    mask = offs < n_cols
    base = row * n_cols
    x = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(r_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
    h = x + r
    mean = tl.sum(h, axis=0) / n_cols
    d = tl.where(mask, h - mean, 0.0)
    var = tl.sum(d * d, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = d * rstd * w + b
    tl.store(y_ptr + base + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, n, dtype=torch.float32))
        self.bias = nn.Parameter(torch.linspace(-0.2, 0.2, n, dtype=torch.float32))

    def forward(self, x, residual):
        x = x.contiguous()
        residual = residual.contiguous()
        n = x.shape[-1]
        rows = x.numel() // n
        y = torch.empty_like(x)
        BLOCK_N = triton.next_power_of_2(n)
        _add_layernorm_kernel[(rows,)](x, residual, self.weight, self.bias, y, n, EPS,
                                       BLOCK_N=BLOCK_N, num_warps=8)
        return y


def get_inputs():
    x = torch.randn(M, N, dtype=torch.float16)
    residual = torch.randn(M, N, dtype=torch.float16)
    return [x, residual]


def get_init_inputs():
    return [N]


TEST_SHAPES = [
    {"M": 5, "N": 100},
    {"M": 7, "N": 333},
    {"M": 3, "N": 1000},
]
