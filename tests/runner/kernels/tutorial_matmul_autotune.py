"""Tiled matmul in the style of the matmul tutorial: the autotune configs are picked at import time by asking
the active driver which backend it is, and the device is checked through torch.cuda."""

import torch
import triton
import triton.language as tl

DEVICE = triton.runtime.driver.active.get_active_torch_device()


def is_cuda() -> bool:
    return triton.runtime.driver.active.get_current_target().backend == "cuda"


def has_wgmma() -> bool:
    return is_cuda() and torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 9


def get_cuda_autotune_config() -> list[triton.Config]:
    stages = 4 if has_wgmma() else 3
    return [
        triton.Config(
            {"TILE_M": 128, "TILE_N": 256, "TILE_K": 64, "GROUP": 8}, num_stages=stages, num_warps=8
        ),
        triton.Config(
            {"TILE_M": 64, "TILE_N": 128, "TILE_K": 32, "GROUP": 8}, num_stages=stages, num_warps=4
        ),
    ]


def get_hip_autotune_config() -> list[triton.Config]:
    return [
        triton.Config({"TILE_M": 128, "TILE_N": 128, "TILE_K": 32, "GROUP": 4}, num_stages=2, num_warps=4)
    ]


def get_autotune_config() -> list[triton.Config]:
    return get_cuda_autotune_config() if is_cuda() else get_hip_autotune_config()


SM_COUNT = torch.cuda.get_device_properties(0).multi_processor_count


# tritonlens: TILE_M=128, TILE_N=256, TILE_K=64, GROUP=8, a_ptr=*fp16, b_ptr=*fp16, c_ptr=*fp16
@triton.autotune(configs=get_autotune_config(), key=["M", "N", "K"])
@triton.jit
def tiled_matmul_kernel(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_cm,
    stride_cn,
    TILE_M: tl.constexpr,
    TILE_N: tl.constexpr,
    TILE_K: tl.constexpr,
    GROUP: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    tiles_m = tl.cdiv(M, TILE_M)
    tiles_n = tl.cdiv(N, TILE_N)
    per_group = GROUP * tiles_n
    group_first_m = (pid // per_group) * GROUP
    group_rows = min(tiles_m - group_first_m, GROUP)
    pid_m = group_first_m + ((pid % per_group) % group_rows)
    pid_n = (pid % per_group) // group_rows
    rows = (pid_m * TILE_M + tl.arange(0, TILE_M)) % M
    cols = (pid_n * TILE_N + tl.arange(0, TILE_N)) % N
    ks = tl.arange(0, TILE_K)
    a_tile = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
    b_tile = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn
    acc = tl.zeros((TILE_M, TILE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, TILE_K)):
        a = tl.load(a_tile, mask=ks[None, :] < K - k * TILE_K, other=0.0)
        b = tl.load(b_tile, mask=ks[:, None] < K - k * TILE_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += TILE_K * stride_ak
        b_tile += TILE_K * stride_bk
    out_rows = pid_m * TILE_M + tl.arange(0, TILE_M)
    out_cols = pid_n * TILE_N + tl.arange(0, TILE_N)
    c_tile = c_ptr + out_rows[:, None] * stride_cm + out_cols[None, :] * stride_cn
    tl.store(c_tile, acc.to(tl.float16), mask=(out_rows[:, None] < M) & (out_cols[None, :] < N))


def tiled_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)

    def grid(meta: dict) -> tuple[int]:
        return (triton.cdiv(M, meta["TILE_M"]) * triton.cdiv(N, meta["TILE_N"]),)

    tiled_matmul_kernel[grid](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1)
    )
    return c


a_in = torch.randn((512, 512), device=DEVICE, dtype=torch.float16)
b_in = torch.randn((512, 512), device=DEVICE, dtype=torch.float16)
print(torch.max(torch.abs(tiled_matmul(a_in, b_in) - torch.matmul(a_in, b_in))))
