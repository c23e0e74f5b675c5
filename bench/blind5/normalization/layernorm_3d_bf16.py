"""
LayerNorm over the last dimension of a 3D bf16 tensor.

Computes y = nn.LayerNorm(D)(x) (elementwise affine: weight and bias, eps 1e-5,
module in bfloat16) for x of shape (B, S, D) bfloat16; output (B, S, D)
bfloat16. Mean, variance and the affine step are computed in fp32, cast once.
Benchmark shape: B=32, S=1024, D=1024.

Known problems:
- L37-L40: one program per row (32768 programs of only 1024 bf16 = 2 KB each); per-program work is small, so scheduling and the reduction latency are not amortised over several rows.
- L45-L46: weight and bias are reloaded by every row's program instead of once per program over a block of rows.
- L56-L59: the whole row is held in registers with BLOCK_D = next_pow2(D); wide rows would spill and non-power-of-2 D wastes masked lanes; num_warps is left at the default.
- L53-L53: x.contiguous() / view copy a strided input instead of using its row stride.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

B = 32
S = 1024
D = 1024


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.ln = nn.LayerNorm(dim, dtype=torch.bfloat16)

    def forward(self, x):
        return self.ln(x)


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, D, stride_x, stride_y, eps,
                     BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_D)
    mask = offs < D
    x = tl.load(x_ptr + row * stride_x + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / D
    diff = tl.where(mask, x - mean, 0.0)
    var = tl.sum(diff * diff, axis=0) / D
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = diff * rstd * w + b
    tl.store(y_ptr + row * stride_y + offs, y.to(tl.bfloat16), mask=mask)


def layernorm(x, weight, bias, eps):
    shape = x.shape
    x2 = x.contiguous().view(-1, shape[-1])
    n_rows, dim = x2.shape
    y = torch.empty_like(x2)
    BLOCK_D = triton.next_power_of_2(dim)
    grid = (n_rows,)
    layernorm_kernel[grid](x2, weight, bias, y, dim, x2.stride(0), y.stride(0), eps,
                           BLOCK_D=BLOCK_D)
    return y.view(shape)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.ln = nn.LayerNorm(dim, dtype=torch.bfloat16)

    def forward(self, x):
        return layernorm(x, self.ln.weight, self.ln.bias, self.ln.eps)


def get_inputs():
    x = torch.randn(B, S, D, dtype=torch.bfloat16)
    return [x]


def get_init_inputs():
    return [D]


TEST_SHAPES = [
    {"B": 2, "S": 37, "D": 129},
    {"B": 1, "S": 16, "D": 256},
    {"B": 3, "S": 5, "D": 1000},
]
