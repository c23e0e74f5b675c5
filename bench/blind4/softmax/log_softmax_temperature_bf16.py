"""log_softmax(x / T, dim=-1) with temperature T = 0.7 on bf16 input.

x: (M, N) bf16; the math runs in fp32 and the result is stored as bf16.

Known problems:
- line 60: one row per program, whole row in registers, default num_warps=4; no tuning of warps or rows per program
- lines 48, 50: tl.exp/tl.log instead of exp2/log2 with 1/T*log2(e) folded into one scale (minor, the kernel is memory bound)
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384
N = 2048
TEMPERATURE = 0.7

TEST_SHAPES = [
    {"M": 64, "N": 256},
    {"M": 37, "N": 129},
    {"M": 3, "N": 2048},
]


class Model(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.temperature = temperature

    def forward(self, x):
        return torch.log_softmax(x.float() / self.temperature, dim=-1).to(torch.bfloat16)


@triton.jit
def log_softmax_temp_kernel(
    x_ptr, y_ptr,
    N, stride_x, stride_y, inv_t,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N

    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=float("-inf")).to(tl.float32)
    x = x * inv_t
    row_max = tl.max(x, axis=0)
    shifted = x - row_max
    e = tl.where(mask, tl.exp(shifted), 0.0)
    denom = tl.sum(e, axis=0)
    y = shifted - tl.log(denom)
    tl.store(y_ptr + row * stride_y + cols, y.to(tl.bfloat16), mask=mask)


def log_softmax_temperature(x, temperature):
    shape = x.shape
    x2 = x.reshape(-1, shape[-1]).contiguous()
    m, n = x2.shape
    y = torch.empty((m, n), device=x.device, dtype=torch.bfloat16)
    BLOCK_N = triton.next_power_of_2(n)
    log_softmax_temp_kernel[(m,)](
        x2, y,
        n, x2.stride(0), y.stride(0), 1.0 / temperature,
        BLOCK_N=BLOCK_N,
    )
    return y.reshape(shape)


class ModelNew(nn.Module):
    def __init__(self, temperature):
        super().__init__()
        self.temperature = temperature

    def forward(self, x):
        return log_softmax_temperature(x, self.temperature)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.bfloat16)]


def get_init_inputs():
    return [TEMPERATURE]
