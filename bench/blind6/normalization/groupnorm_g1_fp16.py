"""GroupNorm with a single group, fp16.

nn.GroupNorm(1, C).half() applied to x (N, C, H, W) fp16: mean and variance
over (C, H, W) per sample (eps=1e-5), then per-channel affine weight/bias.
Output (N, C, H, W) fp16.
Benchmark shape: N=32, C=64, H=64, W=64.

Known problems:
- lines 35-45, 79: the statistics kernel launches only N=32 programs, each serially looping over 262144 elements, so only 32 of the GPU's SMs work during the stats pass (it should be a split reduction across many programs).
- lines 79, 82: two passes over x: it is read once for the statistics and again for the normalisation, plus a second kernel launch and the mean/rstd round trip through global memory.
- lines 41-45: the stats loop uses masked loads on every iteration and a single 1024-element block in flight per program (no unrolling / multiple outstanding loads), so each of the 32 programs is latency-bound.
- lines 59-64: the apply kernel does 4 scalar loads (mean, rstd, w, b) and integer div/mod per program for only 1024 elements of work each (default num_warps, no autotuning).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 32
C = 64
H = 64
W = 64


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.gn = nn.GroupNorm(1, channels).half()

    def forward(self, x):
        return self.gn(x)


@triton.jit
def gn_stats_kernel(x_ptr, mean_ptr, rstd_ptr, numel, eps, BLOCK: tl.constexpr):
    n = tl.program_id(0)
    base = x_ptr + n * numel
    offs = tl.arange(0, BLOCK)
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    sq = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, numel, BLOCK):
        idx = start + offs
        xv = tl.load(base + idx, mask=idx < numel, other=0.0).to(tl.float32)
        s += xv
        sq += xv * xv
    mean = tl.sum(s, axis=0) / numel
    var = tl.sum(sq, axis=0) / numel - mean * mean
    var = tl.maximum(var, 0.0)
    rstd = 1.0 / tl.sqrt(var + eps)
    tl.store(mean_ptr + n, mean)
    tl.store(rstd_ptr + n, rstd)


@triton.jit
def gn_apply_kernel(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr,
                    C, HW, BLOCK: tl.constexpr):
    pid_nc = tl.program_id(0)
    pid_s = tl.program_id(1)
    n = pid_nc // C
    c = pid_nc % C
    mean = tl.load(mean_ptr + n)
    rstd = tl.load(rstd_ptr + n)
    w = tl.load(w_ptr + c).to(tl.float32)
    b = tl.load(b_ptr + c).to(tl.float32)
    offs = pid_s * BLOCK + tl.arange(0, BLOCK)
    mask = offs < HW
    xv = tl.load(x_ptr + pid_nc * HW + offs, mask=mask, other=0.0).to(tl.float32)
    yv = (xv - mean) * rstd * w + b
    tl.store(y_ptr + pid_nc * HW + offs, yv.to(y_ptr.dtype.element_ty), mask=mask)


def groupnorm_g1(x, weight, bias, eps):
    x = x.contiguous()
    Nb, Cc = x.shape[0], x.shape[1]
    HW = x.numel() // (Nb * Cc)
    y = torch.empty_like(x)
    mean = torch.empty((Nb,), device=x.device, dtype=torch.float32)
    rstd = torch.empty((Nb,), device=x.device, dtype=torch.float32)
    gn_stats_kernel[(Nb,)](x, mean, rstd, Cc * HW, eps, BLOCK=1024)
    BLOCK = 1024
    grid = (Nb * Cc, triton.cdiv(HW, BLOCK))
    gn_apply_kernel[grid](x, y, weight, bias, mean, rstd, Cc, HW, BLOCK=BLOCK)
    return y


class ModelNew(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.gn = nn.GroupNorm(1, channels).half()

    def forward(self, x):
        return groupnorm_g1(x, self.gn.weight, self.gn.bias, self.gn.eps)


def get_inputs():
    return [torch.randn(N, C, H, W, dtype=torch.float16)]


def get_init_inputs():
    return [C]


TEST_SHAPES = [
    {"N": 2, "C": 8, "H": 16, "W": 16},
    {"N": 3, "C": 5, "H": 37, "W": 29},
]
