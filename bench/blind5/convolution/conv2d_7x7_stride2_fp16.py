"""Stem convolution: nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False) in fp16.

x is (N, C_IN, H, W) fp16 (NCHW), weight is (C_OUT, C_IN, 7, 7) fp16, out is (N, C_OUT, OH, OW) fp16
with OH = (H + 2*3 - 7) // 2 + 1, OW likewise. The Triton version is an implicit GEMM:
rows = output pixels (N*OH*OW), cols = output channels, reduction = C_IN*7*7 = 147, accumulated in fp32.
Benchmark shape: N = 32, C_IN = 3, C_OUT = 64, H = W = 224 (out 32 x 64 x 112 x 112).

Known problems:
- L72-L78: the input tile is gathered element by element (im2col on the fly) with stride-2 addresses from NCHW memory (C_IN = 3 planes), so the loads are poorly coalesced, and each input pixel is re-read by ~12 overlapping 7x7 windows, relying on the caches for reuse.
- L64-L70: the reduction K = 147 is padded to 160 (5 steps of BLOCK_K = 32), and every step recomputes c/kh/kw with integer div/mod plus a 2-D bounds mask for the zero padding.
- L57-L59: the output pixel index is split into (n, oh, ow) with integer div/mod; the NCHW output tile is then stored as 64 separate 128-byte runs, one per channel plane.
- L98-L99: fixed BLOCK_M = BLOCK_N = 64, BLOCK_K = 32, default num_warps/num_stages, no autotuning; with only 5 K steps there is little loop for pipelining to hide the gather latency, and the weight tile is reloaded by every program.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 32
C_IN = 3
C_OUT = 64
H = 224
W = 224
KSIZE = 7
STRIDE = 2
PAD = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride,
                              padding=padding, bias=False, dtype=torch.float16)

    def forward(self, x):
        return self.conv(x)


@triton.jit
def conv2d_implicit_gemm_kernel(x_ptr, w_ptr, o_ptr,
                                n_batch, c_in, h_in, w_in, c_out, h_out, w_out,
                                stride, pad,
                                stride_xn, stride_xc, stride_xh, stride_xw,
                                stride_on, stride_oc, stride_oh, stride_ow,
                                KH: tl.constexpr, KW: tl.constexpr,
                                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    total_m = n_batch * h_out * w_out
    k_total = c_in * KH * KW

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    m_valid = offs_m < total_m
    n_valid = offs_n < c_out

    ow = offs_m % w_out
    oh = (offs_m // w_out) % h_out
    nb = offs_m // (w_out * h_out)
    ih0 = oh * stride - pad
    iw0 = ow * stride - pad

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, k_total, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        k_valid = offs_k < k_total
        c = offs_k // (KH * KW)
        r = offs_k % (KH * KW)
        kh = r // KW
        kw = r % KW

        ih = ih0[:, None] + kh[None, :]
        iw = iw0[:, None] + kw[None, :]
        x_mask = (m_valid[:, None] & k_valid[None, :]
                  & (ih >= 0) & (ih < h_in) & (iw >= 0) & (iw < w_in))
        x_ptrs = (x_ptr + nb[:, None] * stride_xn + c[None, :] * stride_xc
                  + ih * stride_xh + iw * stride_xw)
        a = tl.load(x_ptrs, mask=x_mask, other=0.0)

        # weight is contiguous (C_OUT, C_IN*KH*KW): element (k, co) at co * k_total + k
        w_ptrs = w_ptr + offs_n[None, :] * k_total + offs_k[:, None]
        bmat = tl.load(w_ptrs, mask=k_valid[:, None] & n_valid[None, :], other=0.0)
        acc += tl.dot(a, bmat)

    o_ptrs = (o_ptr + nb[:, None] * stride_on + offs_n[None, :] * stride_oc
              + oh[:, None] * stride_oh + ow[:, None] * stride_ow)
    tl.store(o_ptrs, acc.to(o_ptr.dtype.element_ty), mask=m_valid[:, None] & n_valid[None, :])


def triton_conv2d(x, weight, stride, padding):
    n, c_in, h_in, w_in = x.shape
    c_out, c_in_w, kh, kw = weight.shape
    assert c_in == c_in_w
    h_out = (h_in + 2 * padding - kh) // stride + 1
    w_out = (w_in + 2 * padding - kw) // stride + 1
    weight = weight.contiguous()
    out = torch.empty((n, c_out, h_out, w_out), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
    grid = (triton.cdiv(n * h_out * w_out, BLOCK_M), triton.cdiv(c_out, BLOCK_N))
    conv2d_implicit_gemm_kernel[grid](x, weight, out,
                                      n, c_in, h_in, w_in, c_out, h_out, w_out,
                                      stride, padding,
                                      x.stride(0), x.stride(1), x.stride(2), x.stride(3),
                                      out.stride(0), out.stride(1), out.stride(2), out.stride(3),
                                      KH=kh, KW=kw,
                                      BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    return out


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride,
                              padding=padding, bias=False, dtype=torch.float16)

    def forward(self, x):
        return triton_conv2d(x, self.conv.weight, self.conv.stride[0], self.conv.padding[0])


def get_inputs():
    x = torch.randn(N, C_IN, H, W, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return [C_IN, C_OUT, KSIZE, STRIDE, PAD]


TEST_SHAPES = [
    {"N": 1, "H": 16, "W": 16},
    {"N": 2, "H": 37, "W": 29},
    {"N": 1, "C_OUT": 40, "H": 21, "W": 23},
]
