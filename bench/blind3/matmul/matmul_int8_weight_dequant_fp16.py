"""Matmul with an int8 weight dequantized on the fly (per-output-column scale), fp16.

Computes y = x @ (w_int8.to(fp16) * scale[None, :]).
x: (M, K) fp16, w_int8: (K, N) int8 buffer with values in [-127, 127], scale: (N,) fp16 buffer (one per output
column). y: (M, N) fp16. The Triton version loads int8 weight tiles, converts them to fp16 in registers, runs an fp16
tensor-core dot with fp32 accumulate, and applies the column scale once in the epilogue (it factors out of the K sum).

Known problems:
- line 67: fixed tile config (128x128x32, 8 warps, 3 stages, no autotuning); BLOCK_K=32 is on the small side for H200
- line 48: the int8 weight tile is converted to fp16 in registers, so it has to be re-staged to shared memory for the dot each K step (extra layout conversion in the main loop)
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

M = 4096
K = 4096
N = 4096


@triton.jit
def int8_dequant_matmul_kernel(x_ptr, w_ptr, s_ptr, y_ptr, M, N, K,
                               stride_xm, stride_xk, stride_wk, stride_wn, stride_ym, stride_yn,
                               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                               GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    x_ptrs = x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_ptrs = w_ptr + offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_rem = K - k * BLOCK_K
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_rem), other=0.0)
        w = tl.load(w_ptrs, mask=(offs_k[:, None] < k_rem) & (offs_n[None, :] < N), other=0)
        w = w.to(tl.float16)  # int8 values in [-127, 127] are exact in fp16
        acc = tl.dot(x, w, acc)
        x_ptrs += BLOCK_K * stride_xk
        w_ptrs += BLOCK_K * stride_wk

    scale = tl.load(s_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    out = acc * scale[None, :]

    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, out.to(y_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def int8_dequant_matmul(x, w_int8, scale):
    assert x.dim() == 2 and w_int8.dim() == 2 and x.shape[1] == w_int8.shape[0]
    assert x.dtype == torch.float16 and w_int8.dtype == torch.int8
    m, k = x.shape
    n = w_int8.shape[1]
    scale = scale.contiguous()
    y = torch.empty((m, n), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 128, 32
    grid = (triton.cdiv(m, BLOCK_M) * triton.cdiv(n, BLOCK_N),)
    int8_dequant_matmul_kernel[grid](
        x, w_int8, scale, y, m, n, k,
        x.stride(0), x.stride(1), w_int8.stride(0), w_int8.stride(1), y.stride(0), y.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
        num_warps=8, num_stages=3,
    )
    return y


def _make_quant_buffers(in_features, out_features):
    w_int8 = torch.randint(-127, 128, (in_features, out_features), dtype=torch.int8)
    scale = (torch.rand(out_features) * 1e-3 + 5e-4).to(torch.float16)
    return w_int8, scale


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        w_int8, scale = _make_quant_buffers(in_features, out_features)
        self.register_buffer("w_int8", w_int8)
        self.register_buffer("scale", scale)

    def forward(self, x):
        return x @ (self.w_int8.to(torch.float16) * self.scale[None, :])


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        w_int8, scale = _make_quant_buffers(in_features, out_features)
        self.register_buffer("w_int8", w_int8)
        self.register_buffer("scale", scale)

    def forward(self, x):
        return int8_dequant_matmul(x, self.w_int8, self.scale)


def get_inputs():
    return [torch.randn(M, K, dtype=torch.float16)]


def get_init_inputs():
    return [K, N]


TEST_SHAPES = [
    {"M": 64, "K": 64, "N": 128},
    {"M": 37, "K": 129, "N": 100},
]
