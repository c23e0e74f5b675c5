"""nn.ConvTranspose1d(C_IN, C_OUT, kernel_size=4, stride=2, padding=1, bias=True) in Triton.

x: (N, C_IN, L) fp32 with N = 16, C_IN = 256, L = 2048; C_OUT = 128.
Output: (N, C_OUT, L_OUT) fp32, L_OUT = (L - 1) * 2 - 2 * 1 + 4 = 2 * L.
out[n, co, t] = bias[co] + sum_{ci, k : t = l * STRIDE - PADDING + k} x[n, ci, l] * w[ci, co, k]

Known problems:
- lines 61-76: all KS=4 taps are looped for every output, but with stride 2 only 2 taps reach a given output (parity of t+PAD-k); half of every x tile is masked to zero, so half the dot work and loads are wasted (no polyphase split by output parity)
- lines 63-66, 74-75: the x tile is a gather through l_idx = (t+PAD-k)//STRIDE, so each x element is addressed twice per tile row and the masked loads are non-contiguous and not vectorized
- line 76: fp32 tl.dot with input_precision="ieee" runs on CUDA-core FMAs, not tensor cores (TF32 / 3xTF32 would be far faster if the tolerance allows)
- lines 71-72: weight tiles w[ci, co, k] are read with stride KS between neighbouring co (uncoalesced) and reloaded for every (t-block, n) program; the weight is never pre-packed
- lines 89-90, 99: fixed 64x64x32 tiles, num_warps=4, no autotuning
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 16
C_IN = 256
C_OUT = 128
L = 2048

KERNEL_SIZE = 4
STRIDE = 2
PADDING = 1


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.ConvTranspose1d(in_channels, out_channels, kernel_size,
                                       stride=stride, padding=padding, bias=True)

    def forward(self, x):
        return self.conv(x)


@triton.jit
def conv_transpose1d_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    CI, CO, L_IN, L_OUT,
    stride_xn, stride_xc, stride_xl,
    stride_wi, stride_wo, stride_wk,
    stride_yn, stride_yc, stride_yl,
    KS: tl.constexpr, STRIDE: tl.constexpr, PAD: tl.constexpr,
    BLOCK_CO: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_CI: tl.constexpr,
):
    pid_t = tl.program_id(0)
    pid_co = tl.program_id(1)
    n = tl.program_id(2)

    offs_t = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_co = pid_co * BLOCK_CO + tl.arange(0, BLOCK_CO)
    offs_ci = tl.arange(0, BLOCK_CI)
    co_mask = offs_co < CO
    t_mask = offs_t < L_OUT

    acc = tl.zeros((BLOCK_CO, BLOCK_T), dtype=tl.float32)
    x_base = x_ptr + n * stride_xn
    for k in range(KS):
        # input position that feeds output t through tap k
        num = offs_t + PAD - k
        l_idx = num // STRIDE
        l_ok = (num >= 0) & (num % STRIDE == 0) & (l_idx < L_IN) & t_mask
        l_idx = tl.where(l_ok, l_idx, 0)
        for ci0 in range(0, CI, BLOCK_CI):
            ci = ci0 + offs_ci
            ci_mask = ci < CI
            # w tile as (BLOCK_CO, BLOCK_CI): w[ci, co, k]
            w = tl.load(w_ptr + ci[None, :] * stride_wi + offs_co[:, None] * stride_wo + k * stride_wk,
                        mask=co_mask[:, None] & ci_mask[None, :], other=0.0)
            # x tile as (BLOCK_CI, BLOCK_T): x[n, ci, l_idx(t)]
            xv = tl.load(x_base + ci[:, None] * stride_xc + l_idx[None, :] * stride_xl,
                         mask=ci_mask[:, None] & l_ok[None, :], other=0.0)
            acc = tl.dot(w, xv, acc, input_precision="ieee")

    bias = tl.load(b_ptr + offs_co, mask=co_mask, other=0.0)
    acc = acc + bias[:, None]
    tl.store(y_ptr + n * stride_yn + offs_co[:, None] * stride_yc + offs_t[None, :] * stride_yl,
             acc, mask=co_mask[:, None] & t_mask[None, :])


def conv_transpose1d(x, weight, bias, stride, padding):
    Nx, CI, L_IN = x.shape
    CO, KS = weight.shape[1], weight.shape[2]
    L_OUT = (L_IN - 1) * stride - 2 * padding + KS
    y = torch.empty((Nx, CO, L_OUT), device=x.device, dtype=x.dtype)
    BLOCK_CO, BLOCK_T, BLOCK_CI = 64, 64, 32
    grid = (triton.cdiv(L_OUT, BLOCK_T), triton.cdiv(CO, BLOCK_CO), Nx)
    conv_transpose1d_kernel[grid](
        x, weight, bias, y,
        CI, CO, L_IN, L_OUT,
        x.stride(0), x.stride(1), x.stride(2),
        weight.stride(0), weight.stride(1), weight.stride(2),
        y.stride(0), y.stride(1), y.stride(2),
        KS=KS, STRIDE=stride, PAD=padding,
        BLOCK_CO=BLOCK_CO, BLOCK_T=BLOCK_T, BLOCK_CI=BLOCK_CI,
        num_warps=4,
    )
    return y


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.ConvTranspose1d(in_channels, out_channels, kernel_size,
                                       stride=stride, padding=padding, bias=True)

    def forward(self, x):
        return conv_transpose1d(x, self.conv.weight, self.conv.bias,
                                self.conv.stride[0], self.conv.padding[0])


def get_inputs():
    return [torch.randn(N, C_IN, L, dtype=torch.float32)]


def get_init_inputs():
    return [C_IN, C_OUT, KERNEL_SIZE, STRIDE, PADDING]


TEST_SHAPES = [
    {"N": 2, "C_IN": 64, "C_OUT": 32, "L": 64},
    {"N": 3, "C_IN": 37, "C_OUT": 29, "L": 100},
    {"N": 1, "C_IN": 16, "C_OUT": 70, "L": 129},
]
