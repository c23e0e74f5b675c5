"""out = gelu_tanh(x + b) = 0.5 * v * (1 + tanh(sqrt(2/pi) * (v + 0.044715 * v^3))), v = x + b; x (M, N) fp16, b (N,) fp16 broadcast over rows, out (M, N) fp16.

The tensor is treated as a flat vector; one program per BLOCK elements. Each program recovers the column of every
element with offs % N to load the bias, adds it in fp16 (as PyTorch does), upcasts to fp32, evaluates the tanh
approximation with tanh(z) = 1 - 2 / (exp(2z) + 1) and stores the result as fp16.

Known problems:
- line 26: a 32-bit integer modulo by a runtime N for every element (a multi-instruction sequence); a 2-D (row, column-block) grid would give the column directly.
- line 28: the bias is gathered per element instead of being loaded once per column tile and broadcast over rows.
- line 31: tanh built from exp plus an IEEE fp32 division (slow div.rn sequence) instead of the hardware tanh.approx.f32.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

ROWS = 8192
COLS = 8192


@triton.jit
def bias_gelu_tanh_kernel(x_ptr, b_ptr, out_ptr, numel, N, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    col = offs % N
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + col, mask=mask, other=0.0)
    v = (x + b).to(tl.float32)
    z = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    t = 1.0 - 2.0 / (tl.exp(2.0 * z) + 1.0)
    y = 0.5 * v * (1.0 + t)
    tl.store(out_ptr + offs, y.to(tl.float16), mask=mask)


def bias_gelu_tanh(x, b):
    M, N = x.shape
    numel = x.numel()
    out = torch.empty_like(x)
    BLOCK = 1024
    grid = (triton.cdiv(numel, BLOCK),)
    bias_gelu_tanh_kernel[grid](x, b, out, numel, N, BLOCK=BLOCK)
    return out


class Model(nn.Module):
    def __init__(self, cols):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(cols, dtype=torch.float16))

    def forward(self, x):
        return nn.functional.gelu(x + self.bias, approximate="tanh")


class ModelNew(nn.Module):
    def __init__(self, cols):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(cols, dtype=torch.float16))

    def forward(self, x):
        return bias_gelu_tanh(x, self.bias)


def get_inputs():
    x = torch.randn(ROWS, COLS, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return [COLS]


TEST_SHAPES = [
    {"ROWS": 37, "COLS": 71},
    {"ROWS": 129, "COLS": 53},
    {"ROWS": 71, "COLS": 257},
]
