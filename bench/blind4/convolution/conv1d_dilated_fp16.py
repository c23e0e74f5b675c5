"""Dilated 1-D convolution, fp16: nn.Conv1d(C_IN, C_OUT, kernel_size=3, dilation=4, padding=4, bias=True).

x: (B, C_IN, L) fp16 -> y: (B, C_OUT, L_OUT) fp16 with
y[b, co, l] = bias[co] + sum_{ci, t} w[co, ci, t] * x[b, ci, l + t * DILATION - PADDING]
(zero padding), accumulated in fp32.

Known problems:
- line 65: weight tile gathered with stride KS=3 along C_in (w[co, ci, t] layout), uncoalesced, and re-read by every (L tile, batch) program; a pre-transposed (KS, C_out, C_in) weight would be contiguous
- line 69: the input window is loaded once per tap (3 overlapping, shifted, masked loads of nearly the same data) instead of once per block
- line 87: fixed 64x32x64 blocks (dot K of only 32), default num_warps/num_stages, no autotune
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 32
C_IN = 128
C_OUT = 128
LENGTH = 4096
KSIZE = 3
DILATION = 4
PADDING = 4

TEST_SHAPES = [
    {"BATCH": 2, "C_IN": 32, "C_OUT": 64, "LENGTH": 128},
    {"BATCH": 3, "C_IN": 37, "C_OUT": 45, "LENGTH": 129},
]


class Model(nn.Module):
    def __init__(self, c_in, c_out, ksize, dilation, padding):
        super().__init__()
        self.conv = nn.Conv1d(c_in, c_out, kernel_size=ksize, dilation=dilation,
                              padding=padding, bias=True).to(torch.float16)

    def forward(self, x):
        return self.conv(x)


@triton.jit
def conv1d_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    C_in, C_out, L, L_out,
    stride_xb, stride_xc, stride_xl,
    stride_wo, stride_wi, stride_wk,
    stride_yb, stride_yc, stride_yl,
    DIL: tl.constexpr, PAD: tl.constexpr, KS: tl.constexpr,
    BLOCK_CO: tl.constexpr, BLOCK_CI: tl.constexpr, BLOCK_L: tl.constexpr,
):
    pid_l = tl.program_id(0)
    pid_co = tl.program_id(1)
    b = tl.program_id(2)

    offs_co = pid_co * BLOCK_CO + tl.arange(0, BLOCK_CO)
    offs_l = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    offs_ci0 = tl.arange(0, BLOCK_CI)

    acc = tl.zeros((BLOCK_CO, BLOCK_L), dtype=tl.float32)
    x_base = x_ptr + b * stride_xb
    for ci0 in range(0, C_in, BLOCK_CI):
        offs_ci = ci0 + offs_ci0
        for t in range(KS):
            # weight tap t: (BLOCK_CO, BLOCK_CI)
            w = tl.load(w_ptr + offs_co[:, None] * stride_wo + offs_ci[None, :] * stride_wi + t * stride_wk,
                        mask=(offs_co[:, None] < C_out) & (offs_ci[None, :] < C_in), other=0.0)
            # shifted input window: (BLOCK_CI, BLOCK_L)
            pos = offs_l + t * DIL - PAD
            x = tl.load(x_base + offs_ci[:, None] * stride_xc + pos[None, :] * stride_xl,
                        mask=(offs_ci[:, None] < C_in) & (pos[None, :] >= 0) & (pos[None, :] < L),
                        other=0.0)
            acc += tl.dot(w, x)

    bias = tl.load(b_ptr + offs_co, mask=offs_co < C_out, other=0.0)
    acc += bias[:, None].to(tl.float32)

    y_ptrs = y_ptr + b * stride_yb + offs_co[:, None] * stride_yc + offs_l[None, :] * stride_yl
    tl.store(y_ptrs, acc.to(tl.float16), mask=(offs_co[:, None] < C_out) & (offs_l[None, :] < L_out))


def conv1d_dilated(x, weight, bias, dilation, padding):
    B, c_in, L = x.shape
    c_out, c_in2, ks = weight.shape
    assert c_in == c_in2
    L_out = L + 2 * padding - dilation * (ks - 1)
    y = torch.empty((B, c_out, L_out), device=x.device, dtype=torch.float16)
    BLOCK_CO, BLOCK_CI, BLOCK_L = 64, 32, 64
    grid = (triton.cdiv(L_out, BLOCK_L), triton.cdiv(c_out, BLOCK_CO), B)
    conv1d_kernel[grid](
        x, weight, bias, y,
        c_in, c_out, L, L_out,
        x.stride(0), x.stride(1), x.stride(2),
        weight.stride(0), weight.stride(1), weight.stride(2),
        y.stride(0), y.stride(1), y.stride(2),
        DIL=dilation, PAD=padding, KS=ks,
        BLOCK_CO=BLOCK_CO, BLOCK_CI=BLOCK_CI, BLOCK_L=BLOCK_L,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self, c_in, c_out, ksize, dilation, padding):
        super().__init__()
        self.conv = nn.Conv1d(c_in, c_out, kernel_size=ksize, dilation=dilation,
                              padding=padding, bias=True).to(torch.float16)

    def forward(self, x):
        return conv1d_dilated(x, self.conv.weight, self.conv.bias,
                              self.conv.dilation[0], self.conv.padding[0])


def get_inputs():
    return [torch.randn(BATCH, C_IN, LENGTH, dtype=torch.float16)]


def get_init_inputs():
    return [C_IN, C_OUT, KSIZE, DILATION, PADDING]
