"""Row L2 normalization: y[i, :] = x[i, :] / max(||x[i, :]||_2, 1e-12) (torch.nn.functional.normalize(x, dim=1)), x fp32 (M, N) -> y fp32 (M, N).

One Triton program handles one row. The whole row is loaded into a single
power-of-two block (BLOCK_N = next_power_of_2(N)), the sum of squares is
reduced in registers, the norm is clamped from below at 1e-12 exactly as
torch does, and the row is divided by it and stored.

Known problems:
- line 30: every element is divided by the norm; computing 1 / norm once per row and multiplying would replace N divisions (fp32 division is several instructions) with multiplies.
- line 38: BLOCK_N = next_power_of_2(N) keeps the whole row in registers with no chunked fallback; fine for N=2048, but very long rows would spill or fail to compile.
- line 40: the default num_warps=4 is used regardless of BLOCK_N; for 2048 floats it is 16 values per thread, acceptable, but the launch is not adapted to the row length.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 16384
N = 2048


@triton.jit
def l2_normalize_kernel(x_ptr, y_ptr, N, stride_x, stride_y, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    sq = tl.sum(x * x, axis=0)
    norm = tl.maximum(tl.sqrt(sq), eps)
    y = x / norm
    tl.store(y_ptr + row * stride_y + cols, y, mask=mask)


def l2_normalize(x, eps=1e-12):
    x = x.contiguous()
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    BLOCK_N = triton.next_power_of_2(n_cols)
    grid = (n_rows,)
    l2_normalize_kernel[grid](x, y, n_cols, x.stride(0), y.stride(0), eps, BLOCK_N=BLOCK_N)
    return y


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.nn.functional.normalize(x, p=2.0, dim=1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return l2_normalize(x)


def get_inputs():
    return [torch.randn(M, N, dtype=torch.float32)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"M": 37, "N": 1000},
    {"M": 71, "N": 129},
    {"M": 19, "N": 2053},
]
