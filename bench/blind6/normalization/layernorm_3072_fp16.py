"""LayerNorm over the last dimension with affine weight and bias.

nn.LayerNorm(3072).half() (eps=1e-5) applied to x (M=8192, N=3072) fp16.
Output (8192, 3072) fp16.

Known problems:
- lines 28-29, 49: BLOCK_N = next_power_of_2(3072) = 4096, so a quarter of every lane's work and registers is masked-off padding.
- line 50: launched with the default num_warps=4 for a 3072-wide row (24-32 fp32 values per thread for x alone, plus w, b and diff); no tuning of num_warps.
- lines 37-38: weight and bias are reloaded by each of the 8192 row programs (L2 hits, but extra load traffic); one program handles one row only.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 8192
N = 3072


@triton.jit
def layernorm_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    stride_xm, stride_ym,
    N, eps,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N

    x = tl.load(x_ptr + row * stride_xm + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    diff = tl.where(mask, x - mean, 0.0)
    var = tl.sum(diff * diff, axis=0) / N
    rstd = 1.0 / tl.sqrt(var + eps)

    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = diff * rstd * w + b
    tl.store(y_ptr + row * stride_ym + cols, y.to(tl.float16), mask=mask)


def layernorm(x, weight, bias, eps):
    x2 = x.reshape(-1, x.shape[-1])
    if x2.stride(-1) != 1:
        x2 = x2.contiguous()
    Mv, Nv = x2.shape
    y = torch.empty((Mv, Nv), device=x.device, dtype=x.dtype)
    BLOCK_N = triton.next_power_of_2(Nv)
    layernorm_kernel[(Mv,)](
        x2, weight, bias, y,
        x2.stride(0), y.stride(0),
        Nv, eps,
        BLOCK_N=BLOCK_N,
    )
    return y.reshape(x.shape)


class Model(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape).half()

    def forward(self, x):
        return self.ln(x)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape).half()

    def forward(self, x):
        return layernorm(x, self.ln.weight, self.ln.bias, self.ln.eps)


def get_inputs():
    x = torch.randn(M, N, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return [N]


TEST_SHAPES = [
    {"M": 64, "N": 3072},
    {"M": 37, "N": 100},
    {"M": 129, "N": 1000},
]
