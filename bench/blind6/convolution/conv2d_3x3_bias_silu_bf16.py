"""3x3 conv (stride 1, padding 1, bias) followed by SiLU, bf16.

x: (N, C_IN, H, W) bf16; weight (C_OUT, C_IN, 3, 3) bf16; bias (C_OUT,) bf16;
out = silu(conv2d(x, weight, bias, padding=1)): (N, C_OUT, H, W) bf16.
Benchmark shape: N=32, C_IN=C_OUT=128, H=W=32.

Known problems:
- lines 71-72: weights read straight from the (C_OUT, C_IN, 3, 3) layout with stride 9 along ci and CI*9 along co, an uncoalesced gather that every pixel tile repeats; no pre-packed (kh, kw, ci, co) weight
- lines 68-69: NCHW input means the A tile's channel axis has stride H*W; only the pixel axis is contiguous, and padding/boundary masks are evaluated on every load
- lines 59-76: the reduction is 9 taps x cdiv(C_IN, 32) small K=32 dots with no software pipelining hints; fixed 64x64x32 tiles and default num_warps/num_stages (lines 93, 97), no autotuning
"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

N = 32
C_IN = 128
C_OUT = 128
H = 32
W = 32


class Model(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=1, bias=True).to(torch.bfloat16)

    def forward(self, x):
        return F.silu(self.conv(x))


@triton.jit
def conv3x3_bias_silu_kernel(x_ptr, w_ptr, b_ptr, y_ptr,
                             BATCH, CI, CO, HH, WW,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                             UPCAST_DOT: tl.constexpr):
    # implicit GEMM: rows = output pixels (n, oh, ow), cols = output channels,
    # reduction = (kh, kw, ci)
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    total_m = BATCH * HH * WW
    m_mask = offs_m < total_m
    n_mask = offs_n < CO

    ow = offs_m % WW
    oh = (offs_m // WW) % HH
    nb = offs_m // (WW * HH)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kh in range(3):
        for kw in range(3):
            ih = oh + kh - 1
            iw = ow + kw - 1
            pix_ok = m_mask & (ih >= 0) & (ih < HH) & (iw >= 0) & (iw < WW)
            x_row = nb * (CI * HH * WW) + ih * WW + iw
            for c0 in range(0, CI, BLOCK_K):
                ci = c0 + offs_k
                ci_ok = ci < CI
                a = tl.load(x_ptr + x_row[:, None] + ci[None, :] * (HH * WW),
                            mask=pix_ok[:, None] & ci_ok[None, :], other=0.0)
                # weight[co, ci, kh, kw]
                w = tl.load(w_ptr + offs_n[None, :] * (CI * 9) + ci[:, None] * 9 + kh * 3 + kw,
                            mask=ci_ok[:, None] & n_mask[None, :], other=0.0)
                if UPCAST_DOT:
                    a = a.to(tl.float32)
                    w = w.to(tl.float32)
                acc = tl.dot(a, w, acc)

    bias = tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    acc = acc * tl.sigmoid(acc)

    # y[n, co, oh, ow]
    y_off = nb[:, None] * (CO * HH * WW) + offs_n[None, :] * (HH * WW) + (oh * WW + ow)[:, None]
    tl.store(y_ptr + y_off, acc.to(y_ptr.dtype.element_ty), mask=m_mask[:, None] & n_mask[None, :])


def conv3x3_bias_silu(x, weight, bias):
    x = x.contiguous()
    weight = weight.contiguous()
    nb, ci, hh, ww = x.shape
    co = weight.shape[0]
    y = torch.empty((nb, co, hh, ww), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
    # Triton's CPU interpreter mis-multiplies bf16 dot operands; upcast there only.
    upcast = os.environ.get("TRITON_INTERPRET", "0") == "1"
    grid = (triton.cdiv(nb * hh * ww, BLOCK_M), triton.cdiv(co, BLOCK_N))
    conv3x3_bias_silu_kernel[grid](
        x, weight, bias, y,
        nb, ci, co, hh, ww,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        UPCAST_DOT=upcast,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, padding=1, bias=True).to(torch.bfloat16)

    def forward(self, x):
        return conv3x3_bias_silu(x, self.conv.weight, self.conv.bias)


def get_inputs():
    return [torch.randn(N, C_IN, H, W, dtype=torch.bfloat16)]


def get_init_inputs():
    return [C_IN, C_OUT]


TEST_SHAPES = [
    {"N": 2, "C_IN": 32, "C_OUT": 64, "H": 8, "W": 8},
    {"N": 3, "C_IN": 37, "C_OUT": 20, "H": 7, "W": 9},
]
