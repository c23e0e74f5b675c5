"""SwiGLU MLP up-projection, fp16.

Computes y = silu(x @ Wg^T) * (x @ Wu^T).
x: (TOKENS, HIDDEN) fp16, Wg and Wu: (INTERMEDIATE, HIDDEN) fp16 parameters (bias-free nn.Linear weights).
y: (TOKENS, INTERMEDIATE) fp16. The Triton version computes both products in one kernel (two fp32 accumulators,
the x tile is loaded once per K step) and applies silu(g) * u in the epilogue.

Known problems:
- line 70: fixed tile config (128x64x32, 8 warps, 3 stages, no autotuning); two fp32 accumulators limit the tile size
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

TOKENS = 4096
HIDDEN = 2048
INTERMEDIATE = 5632


@triton.jit
def swiglu_up_kernel(x_ptr, wg_ptr, wu_ptr, y_ptr, M, N, K,
                     stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
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
    w_off = offs_k[:, None] * stride_wk + offs_n[None, :] * stride_wn  # (k, n) -> W[n, k]
    wg_ptrs = wg_ptr + w_off
    wu_ptrs = wu_ptr + w_off

    acc_g = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc_u = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_rem = K - k * BLOCK_K
        x = tl.load(x_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_rem), other=0.0)
        w_mask = (offs_k[:, None] < k_rem) & (offs_n[None, :] < N)
        wg = tl.load(wg_ptrs, mask=w_mask, other=0.0)
        wu = tl.load(wu_ptrs, mask=w_mask, other=0.0)
        acc_g = tl.dot(x, wg, acc_g)
        acc_u = tl.dot(x, wu, acc_u)
        x_ptrs += BLOCK_K * stride_xk
        wg_ptrs += BLOCK_K * stride_wk
        wu_ptrs += BLOCK_K * stride_wk

    out = acc_g * tl.sigmoid(acc_g) * acc_u

    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, out.to(y_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def swiglu_up(x, w_gate, w_up):
    assert x.dim() == 2 and w_gate.shape == w_up.shape and x.shape[1] == w_gate.shape[1]
    assert w_gate.stride() == w_up.stride()
    m, k = x.shape
    n = w_gate.shape[0]
    y = torch.empty((m, n), device=x.device, dtype=x.dtype)
    BLOCK_M, BLOCK_N, BLOCK_K = 128, 64, 32
    grid = (triton.cdiv(m, BLOCK_M) * triton.cdiv(n, BLOCK_N),)
    swiglu_up_kernel[grid](
        x, w_gate, w_up, y, m, n, k,
        x.stride(0), x.stride(1), w_gate.stride(0), w_gate.stride(1), y.stride(0), y.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, GROUP_M=8,
        num_warps=8, num_stages=3,
    )
    return y


class Model(nn.Module):
    def __init__(self, hidden, intermediate):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False, dtype=torch.float16)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False, dtype=torch.float16)

    def forward(self, x):
        return torch.nn.functional.silu(self.gate_proj(x)) * self.up_proj(x)


class ModelNew(nn.Module):
    def __init__(self, hidden, intermediate):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False, dtype=torch.float16)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False, dtype=torch.float16)

    def forward(self, x):
        return swiglu_up(x, self.gate_proj.weight, self.up_proj.weight)


def get_inputs():
    return [torch.randn(TOKENS, HIDDEN, dtype=torch.float16)]


def get_init_inputs():
    return [HIDDEN, INTERMEDIATE]


TEST_SHAPES = [
    {"TOKENS": 64, "HIDDEN": 64, "INTERMEDIATE": 128},
    {"TOKENS": 37, "HIDDEN": 129, "INTERMEDIATE": 100},
]
