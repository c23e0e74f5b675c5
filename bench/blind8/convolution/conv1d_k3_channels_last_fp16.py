"""conv1d, kernel 3, stride 1, padding 1, no bias, on channels-last data, fp16.

x: (N, L, C_in) fp16, weight: nn.Conv1d parameter (C_out, C_in, 3) fp16, output (N, L, C_out) fp16:
y[n, l, co] = sum_{ci, k} x[n, l + k - 1, ci] * weight[co, ci, k]   (zero padding at both ends).
The reference permutes to (N, C, L) and calls F.conv1d; the Triton version reads x in its (N, L, C)
layout directly as an implicit GEMM (rows = positions l, columns = output channels, reduction
over 3 taps x C_in) with fp32 accumulation.

Known problems:
- L55-56 (`b = tl.load(...)`): the weight tile [BLOCK_CI, BLOCK_CO] is read from the (C_out, C_in, 3) layout with stride 3 along C_in and 3*C_in along C_out (uncoalesced), and re-read by every (l-block, n) program; it should be pre-transposed once to [3, C_in, C_out].
- L46-53: each of the 3 taps re-loads an almost identical shifted x tile (rows l-1, l, l+1) from global memory instead of loading a (BLOCK_L+2)-row tile once; x traffic is ~3x from L2.
- L46-57: 3 x cdiv(C_in, BLOCK_CI) = 24 small tl.dot steps with K=32; block sizes fixed at L69 (64/64/32) with default num_warps/num_stages, no autotune, so the tensor cores are underfed for a GEMM of M=N*L=131072, N=256, K=768.
- L69-70: BLOCK_CO=64 < C_out=256, so every x tile is re-read by 4 C_out-tile programs (64 program ids apart on the grid), relying on L2 for that reuse.

"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

N = 32
L = 4096
C_IN = 256
C_OUT = 256

TEST_SHAPES = [
    {"N": 2, "L": 37, "C_IN": 20, "C_OUT": 24},
    {"N": 1, "L": 64, "C_IN": 32, "C_OUT": 64},
]


@triton.jit
def conv1d_k3_nlc_kernel(x_ptr, w_ptr, y_ptr, L, C_in, C_out,
                         BLOCK_L: tl.constexpr, BLOCK_CO: tl.constexpr, BLOCK_CI: tl.constexpr):
    pid_l = tl.program_id(0)
    pid_co = tl.program_id(1)
    n = tl.program_id(2)
    offs_l = pid_l * BLOCK_L + tl.arange(0, BLOCK_L)
    offs_co = pid_co * BLOCK_CO + tl.arange(0, BLOCK_CO)
    l_mask = offs_l < L
    co_mask = offs_co < C_out
    x_base = x_ptr + n * L * C_in

    acc = tl.zeros((BLOCK_L, BLOCK_CO), dtype=tl.float32)
    for k in range(3):
        il = offs_l + k - 1
        il_ok = (il >= 0) & (il < L)
        for ci0 in range(0, C_in, BLOCK_CI):
            offs_ci = ci0 + tl.arange(0, BLOCK_CI)
            ci_mask = offs_ci < C_in
            a = tl.load(x_base + il[:, None] * C_in + offs_ci[None, :],
                        mask=il_ok[:, None] & ci_mask[None, :], other=0.0)
            # weight[co, ci, k] as a [BLOCK_CI, BLOCK_CO] tile
            b = tl.load(w_ptr + offs_co[None, :] * (C_in * 3) + offs_ci[:, None] * 3 + k,
                        mask=ci_mask[:, None] & co_mask[None, :], other=0.0)
            acc += tl.dot(a, b)

    y_off = n * L * C_out + offs_l[:, None] * C_out + offs_co[None, :]
    tl.store(y_ptr + y_off, acc.to(y_ptr.dtype.element_ty), mask=l_mask[:, None] & co_mask[None, :])


def conv1d_k3_nlc(x, weight):
    x = x.contiguous()
    weight = weight.contiguous()
    n, l, c_in = x.shape
    c_out = weight.shape[0]
    y = torch.empty((n, l, c_out), dtype=x.dtype, device=x.device)
    BLOCK_L, BLOCK_CO, BLOCK_CI = 64, 64, 32
    grid = (triton.cdiv(l, BLOCK_L), triton.cdiv(c_out, BLOCK_CO), n)
    conv1d_k3_nlc_kernel[grid](x, weight, y, l, c_in, c_out,
                               BLOCK_L=BLOCK_L, BLOCK_CO=BLOCK_CO, BLOCK_CI=BLOCK_CI)
    return y


class Model(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv1d(c_in, c_out, 3, stride=1, padding=1, bias=False).to(torch.float16)

    def forward(self, x):
        # x: (N, L, C_in) -> (N, C_in, L) -> conv -> (N, C_out, L) -> (N, L, C_out)
        return F.conv1d(x.permute(0, 2, 1), self.conv.weight, padding=1).permute(0, 2, 1)


class ModelNew(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv1d(c_in, c_out, 3, stride=1, padding=1, bias=False).to(torch.float16)

    def forward(self, x):
        return conv1d_k3_nlc(x, self.conv.weight)


def get_inputs():
    return [torch.randn(N, L, C_IN, dtype=torch.float16)]


def get_init_inputs():
    return [C_IN, C_OUT]
