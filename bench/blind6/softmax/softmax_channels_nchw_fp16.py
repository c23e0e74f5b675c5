"""Softmax over the channel dim (dim=1) of an NCHW tensor.

x: (N, C, H, W) fp16 with N = 32, C = 128, H = 32, W = 32. Output same shape, fp16.
For every (n, h, w): y[n, :, h, w] = softmax(x[n, :, h, w]) (channel stride is H*W).

Known problems:
- lines 45-46, 62: BLOCK_HW=32 fp16 means each channel row of the tile is only 64 contiguous bytes (half a 128 B line); loads/stores are poorly vectorized and coalesced
- line 51: per-element division by the row sum instead of one reciprocal and a multiply
- lines 61-69: fixed BLOCK_HW/num_warps, no autotuning; the whole channel dim is held in registers (no loop over C), fine at C=128 but would spill for large C
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 32
C = 128
H = 32
W = 32


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)


@triton.jit
def softmax_channels_kernel(
    x_ptr, y_ptr,
    n_ch, hw,
    stride_xn, stride_xc,
    stride_yn, stride_yc,
    BLOCK_C: tl.constexpr, BLOCK_HW: tl.constexpr,
):
    pid_hw = tl.program_id(0)
    n = tl.program_id(1)
    offs_c = tl.arange(0, BLOCK_C)
    offs_hw = pid_hw * BLOCK_HW + tl.arange(0, BLOCK_HW)
    mask = (offs_c[:, None] < n_ch) & (offs_hw[None, :] < hw)

    # whole channel column is held in registers: tile (BLOCK_C, BLOCK_HW)
    x = tl.load(x_ptr + n * stride_xn + offs_c[:, None] * stride_xc + offs_hw[None, :],
                mask=mask, other=float("-inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    e = tl.exp(x - m[None, :])
    e = tl.where(mask, e, 0.0)
    s = tl.sum(e, axis=0)
    y = e / s[None, :]
    tl.store(y_ptr + n * stride_yn + offs_c[:, None] * stride_yc + offs_hw[None, :],
             y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax_channels(x):
    x = x.contiguous()
    Nx, Cx, Hx, Wx = x.shape
    hw = Hx * Wx
    y = torch.empty_like(x)
    BLOCK_C = triton.next_power_of_2(Cx)
    BLOCK_HW = 32
    grid = (triton.cdiv(hw, BLOCK_HW), Nx)
    softmax_channels_kernel[grid](
        x, y, Cx, hw,
        x.stride(0), x.stride(1),
        y.stride(0), y.stride(1),
        BLOCK_C=BLOCK_C, BLOCK_HW=BLOCK_HW,
        num_warps=4,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return softmax_channels(x)


def get_inputs():
    return [torch.randn(N, C, H, W, dtype=torch.float16)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N": 2, "C": 64, "H": 8, "W": 8},
    {"N": 3, "C": 37, "H": 10, "W": 10},
    {"N": 1, "C": 129, "H": 5, "W": 7},
]
