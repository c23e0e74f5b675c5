"""Where does the dot schedule's kernel lose to cuBLAS? Variants of the tl.dot tile loop the schedule emits, timed
against torch.mm on the same card (issue 22: matmul-with-epilogue drafts end at 0.67-0.85x of cuBLAS after the
schedule, in every blind set).

Variants: the emitted form (load masks on M, N and K every step) at its default tile and at larger tiles; the same
without the M/N load masks (rows and columns wrapped modulo the size, only K masked: the tail rows are computed and
never stored); and operand tiles through host-side TMA tensor descriptors (Hopper's bulk copy engine). Each
result is checked against torch.mm in fp32 on random data first; times are the median of do_bench over a CUDA
graph replay of one call (L2 flushed). Writes a JSON file to $OUT (or the path given) and prints a table.

    python3 benchmarks/gpu/dot_schedule_probe.py [OUT.json]
"""

from __future__ import annotations

import json
import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def _tile(pid, M, N, BM: tl.constexpr, BN: tl.constexpr, GROUP_M: tl.constexpr):
    tiles_m = tl.cdiv(M, BM)
    tiles_n = tl.cdiv(N, BN)
    in_group = GROUP_M * tiles_n
    first_m = (pid // in_group) * GROUP_M
    rows_in_group = min(tiles_m - first_m, GROUP_M)
    return first_m + (pid % in_group) % rows_in_group, (pid % in_group) // rows_in_group


@triton.jit
def mm_pointers(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr,
                MASK_MN: tl.constexpr):
    tm, tn = _tile(tl.program_id(0), M, N, BM, BN, GROUP_M)
    rows = tm * BM + tl.arange(0, BM)
    cols = tn * BN + tl.arange(0, BN)
    lk = tl.arange(0, BK)
    if MASK_MN:
        ra, cb = rows, cols
    else:  # wrapped: every load stays in bounds on M and N; the tail rows/columns are never stored
        ra, cb = rows % M, cols % N
    a_ptrs = a + ra[:, None] * sam + lk[None, :] * sak
    b_ptrs = b + lk[:, None] * sbk + cb[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        if MASK_MN:
            x = tl.load(a_ptrs, mask=(rows[:, None] < M) & (lk[None, :] < K - k0), other=0.0)
            y = tl.load(b_ptrs, mask=(lk[:, None] < K - k0) & (cols[None, :] < N), other=0.0)
        else:
            x = tl.load(a_ptrs, mask=lk[None, :] < K - k0, other=0.0)
            y = tl.load(b_ptrs, mask=lk[:, None] < K - k0, other=0.0)
        acc = tl.dot(x, y, acc)
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    tl.store(c + rows[:, None] * scm + cols[None, :] * scn, acc.to(c.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def mm_tma(a_desc, b_desc, c_desc, M, N, K,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    tm, tn = _tile(tl.program_id(0), M, N, BM, BN, GROUP_M)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = a_desc.load([tm * BM, k0])
        y = b_desc.load([k0, tn * BN])
        acc = tl.dot(x, y, acc)
    c_desc.store([tm * BM, tn * BN], acc.to(c_desc.dtype))


def run_pointers(a, b, c, cfg, mask_mn):
    M, K = a.shape
    N = b.shape[1]
    bm, bn, bk, warps, stages = cfg
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    mm_pointers[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                      c.stride(1), BM=bm, BN=bn, BK=bk, GROUP_M=8, MASK_MN=mask_mn, num_warps=warps,
                      num_stages=stages)


def run_tma(a, b, c, cfg):
    from triton.tools.tensor_descriptor import TensorDescriptor

    M, K = a.shape
    N = b.shape[1]
    bm, bn, bk, warps, stages = cfg
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    mm_tma[grid](TensorDescriptor.from_tensor(a, [bm, bk]), TensorDescriptor.from_tensor(b, [bk, bn]),
                 TensorDescriptor.from_tensor(c, [bm, bn]), M, N, K, BM=bm, BN=bn, BK=bk, GROUP_M=8,
                 num_warps=warps, num_stages=stages)


def graph_time_ms(fn) -> float:
    fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        fn()
        with torch.cuda.graph(graph, stream=stream):
            fn()
    torch.cuda.synchronize()
    return triton.testing.do_bench(graph.replay, warmup=25, rep=100, return_mode="median")


def main() -> None:
    out_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.environ.get("OUT", "."), "dot_probe.json")
    torch.manual_seed(0)
    shapes = [(4096, 4096, 4096, torch.float16), (8192, 2048, 2048, torch.float16), (2000, 3000, 1000, torch.float16)]
    variants = {
        "emitted 128x128x32 w8 s3": ("ptr", (128, 128, 32, 8, 3), True),  # the schedule's default tile
        "emitted 128x128x64 w8 s3": ("ptr", (128, 128, 64, 8, 3), True),
        "emitted 128x256x64 w8 s3": ("ptr", (128, 256, 64, 8, 3), True),
        "wrapped 128x256x64 w8 s3": ("ptr", (128, 256, 64, 8, 3), False),
        "tma 128x256x64 w8 s3": ("tma", (128, 256, 64, 8, 3), None),
        "tma 128x128x64 w4 s4": ("tma", (128, 128, 64, 4, 4), None),
    }
    rows = []
    for M, N, K, dtype in shapes:
        a = torch.randn(M, K, device="cuda", dtype=dtype)
        b = torch.randn(K, N, device="cuda", dtype=dtype)
        ref = (a.double() @ b.double()).float()
        flops = 2 * M * N * K
        t_ref = graph_time_ms(lambda a=a, b=b: torch.mm(a, b))
        entry = {"shape": [M, N, K], "dtype": str(dtype), "cublas_ms": t_ref, "cublas_tflops": flops / t_ref / 1e9,
                 "variants": {}}
        for name, (kind, cfg, mask) in variants.items():
            c = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)
            if kind == "ptr":
                fn = lambda a=a, b=b, c=c, cfg=cfg, mask=mask: run_pointers(a, b, c, cfg, mask)  # noqa: E731
            else:
                fn = lambda a=a, b=b, c=c, cfg=cfg: run_tma(a, b, c, cfg)  # noqa: E731
            try:
                fn()
                torch.cuda.synchronize()
                err = ((c.float() - ref).norm() / ref.norm()).item()
                ms = graph_time_ms(fn)
                entry["variants"][name] = {"ms": ms, "tflops": flops / ms / 1e9, "vs_cublas": t_ref / ms,
                                           "rel_error": err}
            except Exception as exc:  # a variant that does not compile or run is reported, not fatal
                entry["variants"][name] = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
        rows.append(entry)
        print(f"{M}x{N}x{K} {dtype}: cuBLAS {t_ref * 1e3:.0f} us ({flops / t_ref / 1e9:.0f} TFLOP/s)", flush=True)
        for name, v in entry["variants"].items():
            if "error" in v:
                print(f"    {name:28s} ERROR {v['error'][:120]}")
            else:
                print(f"    {name:28s} {v['ms'] * 1e3:8.0f} us {v['tflops']:6.0f} TFLOP/s  {v['vs_cublas']:.2f}x of "
                      f"cuBLAS  err {v['rel_error']:.1e}")
    meta = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__}
    with open(out_path, "w") as f:
        json.dump({"meta": meta, "results": rows}, f, indent=1)


if __name__ == "__main__":
    main()
