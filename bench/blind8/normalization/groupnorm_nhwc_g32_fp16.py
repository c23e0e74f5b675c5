"""GroupNorm (32 groups) on channels-last fp16 data.

x has shape (N, H, W, C) and is contiguous (channel is the fastest-varying dim). Channels are split into
NUM_GROUPS contiguous groups of C // NUM_GROUPS channels; for each (n, group) the mean and variance are taken
over all H*W positions and the group's channels, then
out = (x - mean) / sqrt(var + eps) * weight[c] + bias[c], eps = 1e-5, weight/bias of shape (C,) (fp16).
The output has the same (N, H, W, C) layout. Statistics are accumulated in fp32.

Known problems:
_groupnorm_nhwc_kernel: one program per (n, group) = only 16*32 = 512 programs, each looping over 16384 elements serially; the whole reduction for a group sits on one SM (no split of H*W across programs).
_groupnorm_nhwc_kernel: two passes over x (stats loop, then normalize loop), so x is read twice from global memory (plus one write), no caching of the group tile.
_groupnorm_nhwc_kernel: each tile row is only C//G = 16 fp16 channels (32 bytes) at a stride of C*2 bytes, so loads/stores are poorly coalesced (a group's data is strided in channels-last layout).
_groupnorm_nhwc_kernel: variance as E[x^2] - mean^2 in fp32 (single-pass sums), fine here but less robust than Welford.
ModelNew.forward: BLOCK_HW = 128 and num_warps fixed by hand, no autotuning.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

BATCH = 16
HEIGHT = 32
WIDTH = 32
CHANNELS = 512
NUM_GROUPS = 32
EPS = 1e-5


def _init_affine(gn):
    c = gn.weight.shape[0]
    idx = torch.arange(c, dtype=torch.float32)
    with torch.no_grad():
        gn.weight.copy_((1.0 + 0.5 * torch.sin(idx * 0.37)).to(gn.weight.dtype))
        gn.bias.copy_((0.1 * torch.cos(idx * 0.11)).to(gn.bias.dtype))


class Model(nn.Module):
    def __init__(self, num_groups, num_channels):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, num_channels, eps=EPS, dtype=torch.float16)
        _init_affine(self.gn)

    def forward(self, x):
        # x: (N, H, W, C)
        y = F.group_norm(x.permute(0, 3, 1, 2), self.gn.num_groups, self.gn.weight, self.gn.bias, self.gn.eps)
        return y.permute(0, 2, 3, 1).contiguous()


@triton.jit
def _groupnorm_nhwc_kernel(x_ptr, w_ptr, b_ptr, out_ptr, HW, C, CPG, G, eps,
                           BLOCK_HW: tl.constexpr, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    n = pid // G
    g = pid % G
    base = n * HW * C + g * CPG
    offs_hw = tl.arange(0, BLOCK_HW)
    offs_c = tl.arange(0, BLOCK_C)
    c_mask = offs_c < CPG

    # pass 1: sums
    acc_sum = tl.zeros([BLOCK_HW, BLOCK_C], dtype=tl.float32)
    acc_sq = tl.zeros([BLOCK_HW, BLOCK_C], dtype=tl.float32)
    for start in range(0, HW, BLOCK_HW):
        hw = start + offs_hw
        mask = (hw[:, None] < HW) & c_mask[None, :]
        ptrs = x_ptr + base + hw[:, None] * C + offs_c[None, :]
        x = tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)
        acc_sum += x
        acc_sq += x * x
    count = HW * CPG
    mean = tl.sum(tl.sum(acc_sum, axis=1), axis=0) / count
    var = tl.sum(tl.sum(acc_sq, axis=1), axis=0) / count - mean * mean
    var = tl.maximum(var, 0.0)
    rstd = 1.0 / tl.sqrt(var + eps)

    w = tl.load(w_ptr + g * CPG + offs_c, mask=c_mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + g * CPG + offs_c, mask=c_mask, other=0.0).to(tl.float32)
    scale = w * rstd
    shift = b - mean * scale

    # pass 2: normalize
    for start in range(0, HW, BLOCK_HW):
        hw = start + offs_hw
        mask = (hw[:, None] < HW) & c_mask[None, :]
        offs = base + hw[:, None] * C + offs_c[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        y = x * scale[None, :] + shift[None, :]
        tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_groups, num_channels):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups, num_channels, eps=EPS, dtype=torch.float16)
        _init_affine(self.gn)

    def forward(self, x):
        x = x.contiguous()
        N, H, W, C = x.shape
        G = self.gn.num_groups
        CPG = C // G
        out = torch.empty_like(x)
        BLOCK_C = triton.next_power_of_2(CPG)
        BLOCK_HW = 128
        _groupnorm_nhwc_kernel[(N * G,)](
            x, self.gn.weight, self.gn.bias, out, H * W, C, CPG, G, self.gn.eps,
            BLOCK_HW=BLOCK_HW, BLOCK_C=BLOCK_C, num_warps=4,
        )
        return out


def get_inputs():
    return [torch.randn(BATCH, HEIGHT, WIDTH, CHANNELS, dtype=torch.float16)]


def get_init_inputs():
    return [NUM_GROUPS, CHANNELS]


TEST_SHAPES = [
    {"BATCH": 2, "HEIGHT": 4, "WIDTH": 4, "CHANNELS": 64, "NUM_GROUPS": 8},
    {"BATCH": 3, "HEIGHT": 13, "WIDTH": 11, "CHANNELS": 96, "NUM_GROUPS": 32},
    {"BATCH": 2, "HEIGHT": 5, "WIDTH": 7, "CHANNELS": 60, "NUM_GROUPS": 4},
]
