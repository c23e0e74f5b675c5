"""Per-row absolute maximum: y = x.abs().amax(dim=1) of a (M, N) fp16 tensor; y is (M,) fp16.

Known problems:
- L45-L46: BLOCK_N = next_power_of_2(N) with the default num_warps=4: untuned for a 4096-wide fp16 row (8 KB per program); one row per program is otherwise a reasonable layout.
- L26: one scalar fp16 store per program is uncoalesced (2 bytes per row); negligible in total.
- L23: the row is upcast to fp32 before abs/max although max is exact in fp16; extra conversion instructions, minor for a memory-bound op.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384
N = 4096


@triton.jit
def row_absmax_kernel(x_ptr, y_ptr, N, stride_m, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_m + cols, mask=mask, other=0.0).to(tl.float32)
    absx = tl.abs(x)
    result = tl.max(absx, axis=0)
    tl.store(y_ptr + row, result.to(tl.float16))


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.abs().amax(dim=1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty((m,), dtype=x.dtype, device=x.device)
        BLOCK_N = triton.next_power_of_2(n)
        row_absmax_kernel[(m,)](x, y, n, x.stride(0), BLOCK_N=BLOCK_N)
        return y


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float16)]


def get_init_inputs():
    return []


TEST_SHAPES = [{"M": 64, "N": 256}, {"M": 37, "N": 203}]
