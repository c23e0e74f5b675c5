"""Grouped 3x3 2D convolution, fp16.

Computes y = nn.Conv2d(C, C, kernel_size=3, padding=1, groups=GROUPS, bias=True)(x)
for x of shape (N, C, H, W) in fp16 (NCHW, contiguous), weight (C, C // GROUPS, 3, 3)
fp16 (module cast with .half()), bias (C,) fp16; output (N, C, H, W) fp16. Accumulation is done in fp32.
The Triton kernel is an implicit GEMM per group: M = N*H*W output pixels,
N = C // GROUPS output channels, K = (C // GROUPS) * 9, one tl.dot per tap and K block.

Benchmark shape: N=16, C=128, H=W=56, GROUPS=4.

Known problems:
- L63-L73: NCHW input: each A tile gathers BLOCK_K channel planes HW elements apart, so loads are only coalesced along the pixel axis and the 9 taps re-read the same input from L2 instead of reusing a staged halo tile in shared memory.
- L74-L76: the weight tile is re-loaded from global memory for every tap in every program with a stride of 9 elements (uncoalesced), instead of being pre-transposed to a (K, C_out) layout once.
- L69-L77: K per dot is only 32 (one group's channels per tap), so each program issues 9 short tl.dot calls with no software pipelining over a long K loop; tensor cores sit idle on load latency.
- L91-L95: fixed BLOCK_M/BLOCK_N/BLOCK_K = 64/32/32 and num_warps=4 with no autotuning; a 64x32 output tile is small for tensor cores (low arithmetic intensity per loaded byte).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 16
C = 128
H = 56
W = 56
GROUPS = 4


class Model(nn.Module):
    def __init__(self, channels, groups):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, groups=groups, bias=True).half()

    def forward(self, x):
        return self.conv(x)


@triton.jit
def conv2d_grouped_3x3_kernel(x_ptr, w_ptr, b_ptr, y_ptr,
                              N, C, H, W, CG,
                              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                              BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    n_blocks_per_group = tl.cdiv(CG, BLOCK_N)
    g = pid_n // n_blocks_per_group
    nb = pid_n % n_blocks_per_group

    HW = H * W
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    mask_m = offs_m < N * HW
    n_idx = offs_m // HW
    hw = offs_m % HW
    oh = hw // W
    ow = hw % W

    offs_oc = nb * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_oc = offs_oc < CG
    oc = g * CG + offs_oc
    offs_k = tl.arange(0, BLOCK_K)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kh in range(3):
        for kw in range(3):
            ih = oh + kh - 1
            iw = ow + kw - 1
            valid = mask_m & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            x_base = n_idx * C * HW + ih * W + iw
            for c0 in range(0, CG, BLOCK_K):
                ci = c0 + offs_k
                mask_k = ci < CG
                a_ptrs = x_ptr + x_base[:, None] + (g * CG + ci)[None, :] * HW
                a = tl.load(a_ptrs, mask=valid[:, None] & mask_k[None, :], other=0.0)
                # weight layout (C_out, CG, 3, 3)
                b_ptrs = w_ptr + oc[None, :] * (CG * 9) + ci[:, None] * 9 + kh * 3 + kw
                b = tl.load(b_ptrs, mask=mask_k[:, None] & mask_oc[None, :], other=0.0)
                acc += tl.dot(a, b)

    bias = tl.load(b_ptr + oc, mask=mask_oc, other=0.0).to(tl.float32)
    acc += bias[None, :]
    y_ptrs = y_ptr + (n_idx * C * HW + hw)[:, None] + oc[None, :] * HW
    tl.store(y_ptrs, acc.to(tl.float16), mask=mask_m[:, None] & mask_oc[None, :])


def conv2d_grouped_3x3(x, weight, bias, groups):
    x = x.contiguous()
    weight = weight.contiguous()
    n, c, h, w = x.shape
    cg = c // groups
    y = torch.empty((n, c, h, w), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 32, 32
    grid = (triton.cdiv(n * h * w, BLOCK_M), groups * triton.cdiv(cg, BLOCK_N))
    conv2d_grouped_3x3_kernel[grid](x, weight, bias, y, n, c, h, w, cg,
                                    BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                                    num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self, channels, groups):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, groups=groups, bias=True).half()
        self.groups = groups

    def forward(self, x):
        return conv2d_grouped_3x3(x, self.conv.weight, self.conv.bias, self.groups)


def get_inputs():
    return [torch.randn(N, C, H, W, dtype=torch.float16)]


def get_init_inputs():
    return [C, GROUPS]


TEST_SHAPES = [
    {"N": 2, "C": 128, "H": 9, "W": 11},
    {"N": 1, "C": 32, "H": 7, "W": 5},
    {"N": 3, "C": 64, "H": 13, "W": 6},
]
