"""2D convolution, 5x5 kernel, stride 1, padding 2, with bias, fp16:
out = nn.Conv2d(C_IN, C_OUT, 5, padding=2, bias=True)(x) for x (BATCH, C_IN, H, W) fp16, out (BATCH, C_OUT, H, W) fp16.

Known problems:
- lines 71-72: weights gathered straight from the OIHW layout (stride 25 along ci, 1600 along oc): uncoalesced loads, redone by every M tile; not pre-packed to a (KH*KW*C_IN, C_OUT) matrix.
- lines 69-70: input is NCHW, so the reduction (channel) axis of the A tile is strided by H*W, and the shifted window is reloaded for each of the 25 taps with no reuse of the input tile in shared memory.
- lines 60-66: reduction split into three nested loops whose innermost trip count is only C_IN/BLOCK_K = 2, so software pipelining barely hides load latency; one flattened K loop would pipeline better.
- lines 61-65: per-tap index and boundary-mask math (from the div/mod at lines 53-56) recomputed inside the loop.
- lines 88-89: fixed 64x64x32 tiles, no autotuning; BLOCK_N=64 < C_OUT=128 means every input tile is loaded by two programs.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 16
C_IN = 64
C_OUT = 128
H = 64
W = 64

KSIZE = 5
PAD = 2


class Model(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, KSIZE, padding=PAD, bias=True).to(torch.float16)

    def forward(self, x):
        return self.conv(x)


@triton.jit
def conv2d_kernel(
    x_ptr, w_ptr, b_ptr, out_ptr,
    NB, C, Hh, Ww, OC,
    KS: tl.constexpr, P: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # Implicit GEMM: rows = output pixels (n, oh, ow) flattened, cols = output channels,
    # reduction over (kh, kw, input-channel block). x / w / out are contiguous NCHW / OIHW / NCHW.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    HW = Hh * Ww
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    m_mask = offs_m < NB * HW
    n_mask = offs_n < OC

    n_idx = offs_m // HW
    hw = offs_m % HW
    oh = hw // Ww
    ow = hw % Ww

    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kh in range(0, KS):
        ih = oh + kh - P
        for kw in range(0, KS):
            iw = ow + kw - P
            pix_ok = m_mask & (ih >= 0) & (ih < Hh) & (iw >= 0) & (iw < Ww)
            x_base = n_idx * (C * HW) + ih * Ww + iw
            for c0 in range(0, C, BLOCK_K):
                ci = c0 + offs_k
                ci_ok = ci < C
                x_ptrs = x_ptr + x_base[:, None] + ci[None, :] * HW
                a = tl.load(x_ptrs, mask=pix_ok[:, None] & ci_ok[None, :], other=0.0)
                w_ptrs = w_ptr + offs_n[None, :] * (C * KS * KS) + ci[:, None] * (KS * KS) + kh * KS + kw
                b = tl.load(w_ptrs, mask=ci_ok[:, None] & n_mask[None, :], other=0.0)
                acc += tl.dot(a, b)

    bias = tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
    acc += bias[None, :]

    out_ptrs = out_ptr + (n_idx * (OC * HW) + hw)[:, None] + offs_n[None, :] * HW
    tl.store(out_ptrs, acc.to(tl.float16), mask=m_mask[:, None] & n_mask[None, :])


def conv2d_5x5(x, weight, bias):
    x = x.contiguous()
    weight = weight.contiguous()
    NB, C, Hh, Ww = x.shape
    OC = weight.shape[0]
    out = torch.empty((NB, OC, Hh, Ww), device=x.device, dtype=torch.float16)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
    grid = (triton.cdiv(NB * Hh * Ww, BLOCK_M), triton.cdiv(OC, BLOCK_N))
    conv2d_kernel[grid](
        x, weight, bias, out,
        NB, C, Hh, Ww, OC,
        KS=KSIZE, P=PAD,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return out


class ModelNew(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, KSIZE, padding=PAD, bias=True).to(torch.float16)

    def forward(self, x):
        return conv2d_5x5(x, self.conv.weight, self.conv.bias)


def get_inputs():
    x = torch.randn(BATCH, C_IN, H, W).to(torch.float16)
    return [x]


def get_init_inputs():
    return [C_IN, C_OUT]


TEST_SHAPES = [
    {"BATCH": 2, "C_IN": 16, "C_OUT": 32, "H": 8, "W": 8},
    {"BATCH": 3, "C_IN": 37, "C_OUT": 45, "H": 9, "W": 13},
    {"BATCH": 1, "C_IN": 5, "C_OUT": 70, "H": 17, "W": 6},
]
