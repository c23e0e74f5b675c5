"""2D convolution 3x3, stride 1, padding 1, with bias, followed by ReLU, fp32, NCHW.

x: (BATCH, C_IN, HEIGHT, WIDTH) = (16, 128, 56, 56) fp32
out = relu(nn.Conv2d(128, 128, kernel_size=3, stride=1, padding=1, bias=True)(x)): (16, 128, 56, 56) fp32.
The Triton port is an implicit-GEMM kernel: M = BATCH*H*W output pixels, N = C_OUT, K = C_IN*3*3, reading the
NCHW input directly (no im2col buffer), fp32 accumulation, bias + ReLU fused in the epilogue.
tl.dot uses its default precision for fp32 inputs (TF32 tensor cores), like cuDNN's default for convolutions.

Known problems:
- line 64: the input tile is gathered straight from NCHW: along K (channels) the stride is H*W, so each row of the tile is a strided gather; an NHWC layout would make the channel axis contiguous
- line 66: weight tile read from (C_OUT, C_IN, 3, 3) layout with a stride of 9 elements along K, uncoalesced
- lines 59, 65: the padding/bounds mask is recomputed for every (kh, kw) tap and and-ed with the channel mask on every channel-block load
- lines 84, 94: BLOCK_M/BLOCK_N/BLOCK_K/num_warps/num_stages fixed by hand, no autotuning
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BATCH = 16
C_IN = 128
C_OUT = 128
HEIGHT = 56
WIDTH = 56
KSIZE = 3
STRIDE = 1
PAD = 1


@triton.jit
def _conv2d_bias_relu_fwd(
    X, W, B, Y,
    N_BATCH, C, H, Wd, OC, OH, OW,
    sxn, sxc, sxh, sxw,
    swo, swc, swh, sww,
    syn, syc, syh, syw,
    KH: tl.constexpr, KW: tl.constexpr, STRIDE: tl.constexpr, PAD: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    M = N_BATCH * OH * OW
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    m_valid = offs_m < M
    n_valid = offs_n < OC
    ow = offs_m % OW
    oh = (offs_m // OW) % OH
    nb = offs_m // (OW * OH)

    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for kh in range(KH):
        for kw in range(KW):
            ih = oh * STRIDE - PAD + kh
            iw = ow * STRIDE - PAD + kw
            pix_valid = m_valid & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < Wd)
            x_row = X + nb * sxn + ih * sxh + iw * sxw
            for c0 in range(0, C, BLOCK_K):
                cs = c0 + offs_k
                c_valid = cs < C
                a = tl.load(x_row[:, None] + cs[None, :] * sxc,
                            mask=pix_valid[:, None] & c_valid[None, :], other=0.0)
                w_ptrs = W + offs_n[None, :] * swo + cs[:, None] * swc + kh * swh + kw * sww
                b = tl.load(w_ptrs, mask=c_valid[:, None] & n_valid[None, :], other=0.0)
                acc += tl.dot(a, b)

    bias = tl.load(B + offs_n, mask=n_valid, other=0.0)
    acc += bias[None, :]
    acc = tl.maximum(acc, 0.0)

    y_ptrs = Y + nb[:, None] * syn + offs_n[None, :] * syc + oh[:, None] * syh + ow[:, None] * syw
    tl.store(y_ptrs, acc, mask=m_valid[:, None] & n_valid[None, :])


def conv2d_bias_relu(x, weight, bias, stride, padding):
    N, C, H, Wd = x.shape
    OC, _, KH, KW = weight.shape
    OH = (H + 2 * padding - KH) // stride + 1
    OW = (Wd + 2 * padding - KW) // stride + 1
    y = torch.empty((N, OC, OH, OW), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 64, 32
    grid = (triton.cdiv(N * OH * OW, BLOCK_M), triton.cdiv(OC, BLOCK_N))
    _conv2d_bias_relu_fwd[grid](
        x, weight, bias, y,
        N, C, H, Wd, OC, OH, OW,
        x.stride(0), x.stride(1), x.stride(2), x.stride(3),
        weight.stride(0), weight.stride(1), weight.stride(2), weight.stride(3),
        y.stride(0), y.stride(1), y.stride(2), y.stride(3),
        KH=KH, KW=KW, STRIDE=stride, PAD=padding,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        num_warps=4, num_stages=3,
    )
    return y


class Model(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, KSIZE, stride=STRIDE, padding=PAD, bias=True)

    def forward(self, x):
        return torch.relu(self.conv(x))


class ModelNew(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, KSIZE, stride=STRIDE, padding=PAD, bias=True)

    def forward(self, x):
        return conv2d_bias_relu(x, self.conv.weight, self.conv.bias, STRIDE, PAD)


def get_inputs():
    return [torch.randn(BATCH, C_IN, HEIGHT, WIDTH, dtype=torch.float32)]


def get_init_inputs():
    return [C_IN, C_OUT]


TEST_SHAPES = [
    {"BATCH": 2, "C_IN": 16, "C_OUT": 32, "HEIGHT": 16, "WIDTH": 16},
    {"BATCH": 1, "C_IN": 37, "C_OUT": 70, "HEIGHT": 19, "WIDTH": 23},
]
