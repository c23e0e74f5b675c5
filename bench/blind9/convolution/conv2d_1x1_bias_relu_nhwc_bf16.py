"""relu(conv2d 1x1 with bias) on channels-last data:
torch.relu(x @ W.T + b) for x of shape (N, H, W, Cin) (NHWC), W (Cout, Cin), b (Cout); output (N, H, W, Cout).
Known problems:
- fixed block sizes (128x128x64), no autotune, no num_warps/num_stages tuning
- plain 2D grid with no grouped (L2-friendly) tile ordering
- weight read as a transposed (strided) tile instead of a pre-transposed copy
- no persistent kernel / TMA / warp specialization
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

N = 32
H = 56
W = 56
CIN = 256
COUT = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(COUT, CIN, dtype=torch.bfloat16) * (1.0 / CIN ** 0.5))
        self.bias = nn.Parameter(torch.randn(COUT, dtype=torch.bfloat16) * 0.1)

    def forward(self, x):
        # x: (N, H, W, Cin) -> NCHW view for conv2d, result back to NHWC
        y = torch.nn.functional.conv2d(x.permute(0, 3, 1, 2), self.weight[:, :, None, None], self.bias)
        return torch.relu(y).permute(0, 2, 3, 1).contiguous()


@triton.jit
def _conv1x1_bias_relu_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, CI, CO,
    stride_xm, stride_wo, stride_ym,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    DOT_FP32: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < CO
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, CI, BLOCK_K):
        kk = k0 + offs_k
        mask_k = kk < CI
        a = tl.load(x_ptr + offs_m[:, None] * stride_xm + kk[None, :],
                    mask=mask_m[:, None] & mask_k[None, :], other=0.0)
        # W^T tile: (BLOCK_K, BLOCK_N), element [k, n] = W[n, k]
        b = tl.load(w_ptr + offs_n[None, :] * stride_wo + kk[:, None],
                    mask=mask_n[None, :] & mask_k[:, None], other=0.0)
        if DOT_FP32:
            acc += tl.dot(a.to(tl.float32), b.to(tl.float32))
        else:
            acc += tl.dot(a, b)
    bias = tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    acc = tl.maximum(acc, 0.0)
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :],
             acc.to(y_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(COUT, CIN, dtype=torch.bfloat16) * (1.0 / CIN ** 0.5))
        self.bias = nn.Parameter(torch.randn(COUT, dtype=torch.bfloat16) * 0.1)

    def forward(self, x):
        n, h, w, ci = x.shape
        x = x.contiguous()
        wt = self.weight.contiguous()
        bias = self.bias.contiguous()
        co = wt.shape[0]
        m = n * h * w
        y = torch.empty((n, h, w, co), device=x.device, dtype=x.dtype)
        BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 64
        grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(co, BLOCK_N))
        _conv1x1_bias_relu_kernel[grid](
            x, wt, bias, y,
            m, ci, co,
            ci, wt.stride(0), co,
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
            DOT_FP32=(x.device.type == "cpu"),
            num_warps=8, num_stages=3,
        )
        return y


def get_inputs():
    return [torch.randn(N, H, W, CIN, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


TEST_SHAPES = [
    {"N": 2, "H": 7, "W": 9, "CIN": 64, "COUT": 64},
    {"N": 1, "H": 11, "W": 13, "CIN": 80, "COUT": 144},
    {"N": 3, "H": 5, "W": 6, "CIN": 48, "COUT": 40},
]
