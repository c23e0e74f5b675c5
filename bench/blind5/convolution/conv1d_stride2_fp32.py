"""1D convolution, kernel 3, stride 2, padding 1, fp32.

Computes y = nn.Conv1d(C_IN, C_OUT, kernel_size=3, stride=2, padding=1, bias=True)(x)
for x of shape (N, C_IN, L) fp32, weight (C_OUT, C_IN, 3) fp32, bias (C_OUT,) fp32;
output (N, C_OUT, L_OUT) fp32 with L_OUT = (L + 2 - 3) // 2 + 1.
The Triton kernel is an implicit GEMM per batch item: for every tap k and block of input
channels, acc[co, l] += W[co, ci, k] @ X[ci, 2*l + k - 1], with an IEEE fp32 tl.dot.

Benchmark shape: N=32, C_IN=64, C_OUT=128, L=8192 (L_OUT=4096).

Known problems:
- L54-L64: the x tile is loaded with a stride of 2 along the length axis, so half of every fetched sector is wasted, and the 3 taps re-load almost the same input window instead of loading one contiguous window once and slicing it.
- L60-L62: the weight tile is re-loaded for every tap in every program with a stride of 3 elements (uncoalesced); it could be pre-packed once as (3, C_OUT, C_IN).
- L65-L65: input_precision="ieee" keeps fp32 exact but runs the dots on CUDA cores instead of tensor cores (no TF32 / 3xTF32), so the kernel is compute-bound far below what the H200 offers.
- L80-L84: fixed BLOCK_CO/BLOCK_L/BLOCK_CI and num_warps with no autotuning; short K loop (C_IN/BLOCK_CI = 2 iterations per tap) gives little room for load/compute pipelining.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 32
C_IN = 64
C_OUT = 128
L = 8192


class Model(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv1d(c_in, c_out, 3, stride=2, padding=1, bias=True)

    def forward(self, x):
        return self.conv(x)


@triton.jit
def conv1d_stride2_kernel(x_ptr, w_ptr, b_ptr, y_ptr,
                          C_in, C_out, L_in, L_out,
                          BLOCK_CO: tl.constexpr, BLOCK_L: tl.constexpr,
                          BLOCK_CI: tl.constexpr):
    pid_l = tl.program_id(0)
    pid_co = tl.program_id(1)
    n = tl.program_id(2)

    offs_l = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    offs_co = pid_co * BLOCK_CO + tl.arange(0, BLOCK_CO)
    mask_l = offs_l < L_out
    mask_co = offs_co < C_out
    offs_ci = tl.arange(0, BLOCK_CI)

    x_base = x_ptr + n * C_in * L_in
    acc = tl.zeros((BLOCK_CO, BLOCK_L), dtype=tl.float32)
    for k in range(3):
        pos = offs_l * 2 + k - 1
        mask_pos = mask_l & (pos >= 0) & (pos < L_in)
        for c0 in range(0, C_in, BLOCK_CI):
            ci = c0 + offs_ci
            mask_ci = ci < C_in
            # weight layout (C_out, C_in, 3)
            w_ptrs = w_ptr + offs_co[:, None] * (C_in * 3) + ci[None, :] * 3 + k
            w = tl.load(w_ptrs, mask=mask_co[:, None] & mask_ci[None, :], other=0.0)
            x_ptrs = x_base + ci[:, None] * L_in + pos[None, :]
            xv = tl.load(x_ptrs, mask=mask_ci[:, None] & mask_pos[None, :], other=0.0)
            acc += tl.dot(w, xv, input_precision="ieee")

    bias = tl.load(b_ptr + offs_co, mask=mask_co, other=0.0)
    acc += bias[:, None]
    y_ptrs = y_ptr + n * C_out * L_out + offs_co[:, None] * L_out + offs_l[None, :]
    tl.store(y_ptrs, acc, mask=mask_co[:, None] & mask_l[None, :])


def conv1d_stride2(x, weight, bias):
    x = x.contiguous()
    weight = weight.contiguous()
    n, c_in, l_in = x.shape
    c_out = weight.shape[0]
    l_out = (l_in + 2 - 3) // 2 + 1
    y = torch.empty((n, c_out, l_out), device=x.device, dtype=x.dtype)
    BLOCK_CO, BLOCK_L, BLOCK_CI = 64, 64, 32
    grid = (triton.cdiv(l_out, BLOCK_L), triton.cdiv(c_out, BLOCK_CO), n)
    conv1d_stride2_kernel[grid](x, weight, bias, y, c_in, c_out, l_in, l_out,
                                BLOCK_CO=BLOCK_CO, BLOCK_L=BLOCK_L, BLOCK_CI=BLOCK_CI,
                                num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv1d(c_in, c_out, 3, stride=2, padding=1, bias=True)

    def forward(self, x):
        return conv1d_stride2(x, self.conv.weight, self.conv.bias)


def get_inputs():
    return [torch.randn(N, C_IN, L, dtype=torch.float32)]


def get_init_inputs():
    return [C_IN, C_OUT]


TEST_SHAPES = [
    {"N": 2, "C_IN": 64, "C_OUT": 128, "L": 37},
    {"N": 1, "C_IN": 19, "C_OUT": 37, "L": 129},
    {"N": 3, "C_IN": 32, "C_OUT": 64, "L": 256},
]
