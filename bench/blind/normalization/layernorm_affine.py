"""LayerNorm with affine weight and bias over the last dim of an (M, N) fp32 matrix (nn.LayerNorm(N)).

Known problems:
- lines 46-48, 52-57, 61-67: three passes (mean, variance, normalize) load each row of x three times; an 8 KB row (N=2048) fits in registers with BLOCK = next_power_of_2(N), which would read x once
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 2048

TEST_SHAPES = [
    {"M": 37, "N": 129},
    {"M": 4, "N": 1500},
]


def _make_layernorm(hidden):
    ln = nn.LayerNorm(hidden)
    # random affine parameters so that weight and bias are really exercised
    with torch.no_grad():
        ln.weight.normal_()
        ln.bias.normal_()
    return ln


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.ln = _make_layernorm(hidden)

    def forward(self, x):
        return self.ln(x)


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, stride_x, stride_y, eps,
                     BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    # mean pass
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_row + offs, mask=offs < n_cols, other=0.0)
    mean = tl.sum(acc, axis=0) / n_cols
    # variance pass
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_cols
        v = tl.load(x_row + offs, mask=mask, other=0.0)
        d = tl.where(mask, v - mean, 0.0)
        acc += d * d
    var = tl.sum(acc, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    # normalize pass
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_cols
        v = tl.load(x_row + offs, mask=mask, other=0.0)
        w = tl.load(w_ptr + offs, mask=mask, other=0.0)
        b = tl.load(b_ptr + offs, mask=mask, other=0.0)
        tl.store(y_row + offs, (v - mean) * rstd * w + b, mask=mask)


def layernorm(x, weight, bias, eps):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols).contiguous()
    y = torch.empty_like(x2)
    BLOCK = 1024
    layernorm_kernel[(x2.shape[0],)](x2, weight, bias, y, n_cols, x2.stride(0), y.stride(0), eps,
                                     BLOCK=BLOCK)
    return y.reshape(x.shape)


class ModelNew(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.ln = _make_layernorm(hidden)

    def forward(self, x):
        return layernorm(x, self.ln.weight, self.ln.bias, self.ln.eps)


def get_inputs():
    return [torch.randn(M, N)]


def get_init_inputs():
    return [N]
