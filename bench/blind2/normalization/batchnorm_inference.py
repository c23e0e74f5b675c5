"""BatchNorm2d in eval mode: y = (x - running_mean[c]) / sqrt(running_var[c] + 1e-5) * weight[c] + bias[c], x fp16 NCHW (N, C, H, W) -> y fp16; stats/affine are fp32 (C,).

The kernel treats the tensor as a flat array of N*C*H*W elements. Each
program handles BLOCK contiguous elements: it computes the channel of every
element as (offset // (H*W)) % C, gathers the four per-channel values
(running mean, running var, weight, bias), computes the normalization in
fp32 and stores fp16.

Known problems:
- line 32: a div and a mod per element just to find the channel; a 2-D grid over (n*c, hw-blocks) would make the channel a per-program scalar.
- lines 34-37: four gathered loads per element for per-channel values that are identical across each H*W run (they hit L1/L2, but cost load instructions and issue slots).
- line 38: rsqrt(var + eps) * weight is recomputed per element; folding into a per-channel scale/shift (precomputed once, C values) would leave one FMA per element.
- line 47: BLOCK=1024 with default num_warps=4 and fp16 data gives only 8 halves (16 bytes) per thread per program; larger blocks per program would help a purely bandwidth-bound kernel a bit.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 32
CHANNELS = 256
HEIGHT = 56
WIDTH = 56


@triton.jit
def batchnorm_infer_kernel(x_ptr, y_ptr, mean_ptr, var_ptr, w_ptr, b_ptr,
                           total, C, HW, eps, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    c = (offs // HW) % C
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.load(mean_ptr + c, mask=mask, other=0.0).to(tl.float32)
    var = tl.load(var_ptr + c, mask=mask, other=1.0).to(tl.float32)
    w = tl.load(w_ptr + c, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + c, mask=mask, other=0.0).to(tl.float32)
    y = (x - mean) / tl.sqrt(var + eps) * w + b
    tl.store(y_ptr + offs, y.to(tl.float16), mask=mask)


def batchnorm_inference(x, running_mean, running_var, weight, bias, eps=1e-5):
    x = x.contiguous()
    n, c, h, w = x.shape
    y = torch.empty_like(x)
    total = x.numel()
    BLOCK = 1024
    grid = (triton.cdiv(total, BLOCK),)
    batchnorm_infer_kernel[grid](x, y, running_mean, running_var, weight, bias,
                                 total, c, h * w, eps, BLOCK=BLOCK)
    return y


class Model(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_features))
        self.bias = nn.Parameter(torch.randn(num_features))
        self.register_buffer("running_mean", torch.randn(num_features))
        self.register_buffer("running_var", torch.rand(num_features) + 0.5)
        self.eps = 1e-5

    def forward(self, x):
        return torch.nn.functional.batch_norm(x, self.running_mean, self.running_var, self.weight,
                                              self.bias, training=False, eps=self.eps)


class ModelNew(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(num_features))
        self.bias = nn.Parameter(torch.randn(num_features))
        self.register_buffer("running_mean", torch.randn(num_features))
        self.register_buffer("running_var", torch.rand(num_features) + 0.5)
        self.eps = 1e-5

    def forward(self, x):
        return batchnorm_inference(x, self.running_mean, self.running_var, self.weight,
                                   self.bias, self.eps)


def get_inputs():
    return [torch.randn(BATCH, CHANNELS, HEIGHT, WIDTH).to(torch.float16)]


def get_init_inputs():
    return [CHANNELS]


TEST_SHAPES = [
    {"BATCH": 3, "CHANNELS": 5, "HEIGHT": 7, "WIDTH": 11},
    {"BATCH": 2, "CHANNELS": 37, "HEIGHT": 13, "WIDTH": 9},
    {"BATCH": 5, "CHANNELS": 3, "HEIGHT": 29, "WIDTH": 17},
]
