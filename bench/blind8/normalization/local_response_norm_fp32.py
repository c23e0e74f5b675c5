"""Local response normalization across channels (torch.nn.LocalResponseNorm(size=5, alpha=1e-4, beta=0.75, k=2.0)).

x: (N, C, H, W) fp32, contiguous NCHW.
out[n, c, h, w] = x[n, c, h, w] / (k + alpha / size * sum_{c' = c - size//2}^{c + (size-1)//2} x[n, c', h, w]^2) ^ beta
where channels outside [0, C) contribute zero (PyTorch zero-pads and always divides by `size`).

Known problems:
_lrn_kernel: one program per (n, c, spatial block) re-loads the SIZE=5 neighbouring channel planes from global memory, so each input element is read ~5x (relies on L2 to absorb it) instead of sliding a running sum of squares along the channel axis.
_lrn_kernel: the power is computed as exp(beta * log(base)) per element (two transcendental ops + the division) instead of e.g. rsqrt-based forms for beta = 0.75.
ModelNew.forward: BLOCK_HW = 1024 and default num_warps picked by hand, no autotuning; the grid is only 3 spatial blocks per (n, c) plane with a masked tail block.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

BATCH = 16
CHANNELS = 96
HEIGHT = 55
WIDTH = 55
LRN_SIZE = 5
ALPHA = 1e-4
BETA = 0.75
K = 2.0


class Model(nn.Module):
    def __init__(self, size, alpha, beta, k):
        super().__init__()
        self.lrn = nn.LocalResponseNorm(size=size, alpha=alpha, beta=beta, k=k)

    def forward(self, x):
        return self.lrn(x)


@triton.jit
def _lrn_kernel(x_ptr, out_ptr, C, HW, alpha_over_size, beta, k,
                SIZE: tl.constexpr, BLOCK_HW: tl.constexpr):
    pid_nc = tl.program_id(0)
    pid_hw = tl.program_id(1)
    n = pid_nc // C
    c = pid_nc % C
    offs = pid_hw * BLOCK_HW + tl.arange(0, BLOCK_HW)
    mask = offs < HW
    plane = x_ptr + n * C * HW
    PAD_LO: tl.constexpr = SIZE // 2

    sq_sum = tl.zeros([BLOCK_HW], dtype=tl.float32)
    for i in tl.static_range(SIZE):
        cc = c - PAD_LO + i
        valid = (cc >= 0) & (cc < C)
        v = tl.load(plane + cc * HW + offs, mask=mask & valid, other=0.0)
        sq_sum += v * v

    x = tl.load(plane + c * HW + offs, mask=mask, other=0.0)
    base = k + alpha_over_size * sq_sum
    denom = tl.exp(beta * tl.log(base))
    y = x / denom
    tl.store(out_ptr + n * C * HW + c * HW + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, size, alpha, beta, k):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, x):
        x = x.contiguous()
        N, C, H, W = x.shape
        HW = H * W
        out = torch.empty_like(x)
        BLOCK_HW = 1024
        grid = (N * C, triton.cdiv(HW, BLOCK_HW))
        _lrn_kernel[grid](
            x, out, C, HW, self.alpha / self.size, self.beta, self.k,
            SIZE=self.size, BLOCK_HW=BLOCK_HW,
        )
        return out


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH, dtype=torch.float32)]


def get_init_inputs():
    return [LRN_SIZE, ALPHA, BETA, K]


TEST_SHAPES = [
    {"BATCH": 2, "CHANNELS": 8, "HEIGHT": 4, "WIDTH": 4},
    {"BATCH": 3, "CHANNELS": 7, "HEIGHT": 37, "WIDTH": 29},
    {"BATCH": 1, "CHANNELS": 3, "HEIGHT": 5, "WIDTH": 3},
]
