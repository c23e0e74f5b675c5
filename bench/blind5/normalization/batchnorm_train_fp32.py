"""
BatchNorm2d forward in training mode, fp32.

Computes the output of nn.BatchNorm2d(C) in training mode for x of shape
(N, C, H, W) float32: per channel c, mean and biased variance over (N, H, W),
y = (x - mean) * rsqrt(var + 1e-5) * weight[c] + bias[c]; output (N, C, H, W)
float32. The reference calls F.batch_norm(..., training=True) with no running
buffers so that it uses batch statistics whatever the module's train/eval flag;
the running-stat update is not reproduced.
Benchmark shape: N=32, C=128, H=56, W=56.

Known problems:
- L43-L47: one program per channel: only C = 128 programs (fewer than the 132 SMs of an H200), each serially streaming 32 x 3136 fp32 = 400 KB twice; no split of the (N, HW) reduction across programs.
- L48-L50: the inner loop walks HW = 3136 in BLOCK = 1024 steps, so the 4th step of every sample is ~94% masked and every step is a separate short strided run per sample.
- L63-L68: x is read twice (statistics pass, then normalise pass) plus the write: 3 memory passes instead of 2.
- L74-L77: BLOCK = 1024 and num_warps are fixed guesses, not tuned; x.contiguous() copies a non-contiguous input.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

N = 32
C = 128
H = 56
W = 56


class Model(nn.Module):
    def __init__(self, num_channels):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_channels)

    def forward(self, x):
        return F.batch_norm(x, None, None, self.bn.weight, self.bn.bias,
                            training=True, momentum=0.0, eps=self.bn.eps)


@triton.jit
def batchnorm_train_kernel(x_ptr, w_ptr, b_ptr, y_ptr, N, C, HW, eps,
                           BLOCK: tl.constexpr):
    c = tl.program_id(0)
    acc_s = tl.zeros((BLOCK,), dtype=tl.float32)
    acc_ss = tl.zeros((BLOCK,), dtype=tl.float32)
    for n in range(0, N):
        base = n * C * HW + c * HW
        for start in range(0, HW, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            mask = offs < HW
            x = tl.load(x_ptr + base + offs, mask=mask, other=0.0)
            acc_s += x
            acc_ss += x * x
    count = N * HW
    mean = tl.sum(acc_s, axis=0) / count
    var = tl.sum(acc_ss, axis=0) / count - mean * mean
    var = tl.maximum(var, 0.0)
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + c)
    b = tl.load(b_ptr + c)
    scale = rstd * w
    shift = b - mean * scale
    for n in range(0, N):
        base = n * C * HW + c * HW
        for start in range(0, HW, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            mask = offs < HW
            x = tl.load(x_ptr + base + offs, mask=mask, other=0.0)
            y = x * scale + shift
            tl.store(y_ptr + base + offs, y, mask=mask)


def batchnorm_train(x, weight, bias, eps):
    x = x.contiguous()
    n, c, h, w = x.shape
    y = torch.empty_like(x)
    BLOCK = 1024
    grid = (c,)
    batchnorm_train_kernel[grid](x, weight, bias, y, n, c, h * w, eps, BLOCK=BLOCK)
    return y


class ModelNew(nn.Module):
    def __init__(self, num_channels):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_channels)

    def forward(self, x):
        return batchnorm_train(x, self.bn.weight, self.bn.bias, self.bn.eps)


def get_inputs():
    x = torch.randn(N, C, H, W, dtype=torch.float32)
    return [x]


def get_init_inputs():
    return [C]


TEST_SHAPES = [
    {"N": 3, "C": 5, "H": 7, "W": 9},
    {"N": 2, "C": 8, "H": 37, "W": 29},
    {"N": 4, "C": 3, "H": 16, "W": 16},
]
