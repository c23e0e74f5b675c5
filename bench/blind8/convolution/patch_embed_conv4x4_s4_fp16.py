"""ViT-style patch embedding: conv2d, kernel 4, stride 4, no padding, with bias, fp16.

x: (N, C_in, H, W) fp16, weight: nn.Conv2d parameter (C_out, C_in, 4, 4) fp16, bias (C_out,) fp16;
y[n, co, ph, pw] = bias[co] + sum_{c, kh, kw} x[n, c, 4*ph + kh, 4*pw + kw] * weight[co, c, kh, kw],
y: (N, C_out, H // 4, W // 4) fp16 (trailing rows/cols that do not fill a patch are dropped, as in
nn.Conv2d). Computed as a GEMM of the gathered patches [N*PH*PW, C_in*16] with the flattened weight
[C_in*16, C_out], fp32 accumulation, bias added in fp32, written back in NCHW.

Known problems:
- L57-63: im2col gather of the patch tile with div/mod per k inside the loop; each (patch, c, kh) row is only 4 contiguous fp16 (8 bytes), so the A load is made of small 8-byte segments rather than wide vector loads.
- L85 grid with BLOCK_N=64 (L84) against C_out=768: every patch tile is re-gathered by 12 C_out-tile programs (12x x traffic from L2) although the whole K=48 x C_out weight (72 KB) could serve one M-tile in a single program.
- L65-66: the weight tile is read transposed ([BLOCK_K, BLOCK_N] out of row-major (C_out, K), stride K=48 along C_out) and re-read by every M-tile program instead of being pre-transposed once.
- L71-72: the NCHW store writes, per output channel, runs of patches that are contiguous only within a row of PW=56 patches; 64-patch tiles straddle rows and images, and the dot-accumulator layout needs a shuffle to coalesce along m. This store (154 MB at the benchmark shape) dominates the runtime.
- L54-67, L84: K=48 is done as 3 tl.dot steps with BLOCK_K=16; fixed block sizes with default num_warps/num_stages and no autotune.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

N = 32
C_IN = 3
H = 224
W = 224
C_OUT = 768

TEST_SHAPES = [
    {"N": 2, "C_IN": 3, "H": 18, "W": 23, "C_OUT": 40},
    {"N": 1, "C_IN": 2, "H": 32, "W": 32, "C_OUT": 64},
]

PATCH = 4


@triton.jit
def patch_embed_kernel(x_ptr, w_ptr, b_ptr, y_ptr, N, C_in, H, W, C_out, PH, PW,
                       P: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    NP = PH * PW
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)  # patch index over N * PH * PW
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)  # output channel
    m_mask = offs_m < N * NP
    n_mask = offs_n < C_out
    img = offs_m // NP
    pidx = offs_m % NP
    ph = pidx // PW
    pw = pidx % PW
    K = C_in * P * P

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)  # k = (c, kh, kw) flattened like the weight
        k_mask = offs_k < K
        c = offs_k // (P * P)
        r = offs_k % (P * P)
        kh = r // P
        kw = r % P
        x_off = (img[:, None] * (C_in * H * W) + c[None, :] * (H * W)
                 + (ph[:, None] * P + kh[None, :]) * W + pw[:, None] * P + kw[None, :])
        a = tl.load(x_ptr + x_off, mask=m_mask[:, None] & k_mask[None, :], other=0.0)
        # weight[co, k] (flattened (C_out, C_in*P*P)) as a [BLOCK_K, BLOCK_N] tile
        b = tl.load(w_ptr + offs_n[None, :] * K + offs_k[:, None],
                    mask=k_mask[:, None] & n_mask[None, :], other=0.0)
        acc += tl.dot(a, b)

    bias = tl.load(b_ptr + offs_n, mask=n_mask, other=0.0).to(tl.float32)
    acc += bias[None, :]
    y_off = img[:, None] * (C_out * NP) + offs_n[None, :] * NP + pidx[:, None]
    tl.store(y_ptr + y_off, acc.to(y_ptr.dtype.element_ty), mask=m_mask[:, None] & n_mask[None, :])


def patch_embed(x, weight, bias):
    x = x.contiguous()
    weight = weight.contiguous()
    bias = bias.contiguous()
    n, c_in, h, w = x.shape
    c_out = weight.shape[0]
    ph = (h - PATCH) // PATCH + 1
    pw = (w - PATCH) // PATCH + 1
    y = torch.empty((n, c_out, ph, pw), dtype=x.dtype, device=x.device)
    BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 16
    grid = (triton.cdiv(n * ph * pw, BLOCK_M), triton.cdiv(c_out, BLOCK_N))
    patch_embed_kernel[grid](x, weight, bias, y, n, c_in, h, w, c_out, ph, pw,
                             P=PATCH, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    return y


class Model(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.proj = nn.Conv2d(c_in, c_out, PATCH, stride=PATCH, bias=True).to(torch.float16)

    def forward(self, x):
        return self.proj(x)


class ModelNew(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.proj = nn.Conv2d(c_in, c_out, PATCH, stride=PATCH, bias=True).to(torch.float16)

    def forward(self, x):
        return patch_embed(x, self.proj.weight, self.proj.bias)


def get_inputs():
    return [torch.randn(N, C_IN, H, W, dtype=torch.float16)]


def get_init_inputs():
    return [C_IN, C_OUT]
