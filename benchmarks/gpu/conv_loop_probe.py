"""Does a direct-convolution implicit GEMM written as static tap loops around a channel loop gain from one flat K
loop (taps x channel blocks, so Triton's pipeliner prefetches across taps), and from a K-major copy of the weights?

Issue 22: the convolution drafts of blind sets 6 and 7 that already use `tl.dot` inside `tl.static_range` tap loops
stayed at 0.41-0.72x of torch.compile; no schedule rewrites that form. Before building one, this probe times three
hand-written forms of the same 3x3 NHWC convolution (padding 1) at the draft's benchmark shape, over a small tile
sweep: `nested` (the drafts' form), `flat` (one loop over taps x channel blocks), `flat_packed` (the same with the
weights copied once per call into (tap, C, COUT), contiguous along COUT). Each is checked against F.conv2d first;
times are the median of triton.testing.do_bench_cudagraph of one call (the weight copy included), next to cuDNN
(F.conv2d on channels-last) and torch.compile of the reference.

    python3 benchmarks/gpu/conv_loop_probe.py [--out OUT.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

N, H, W, C, COUT = 8, 56, 56, 64, 64


@triton.jit
def conv_nested(x_ptr, w_ptr, y_ptr, NB, HH, WW, CI, CO, W_TAP, W_C, W_N,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_C: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    m_mask = offs_m < NB * HH * WW
    n_mask = offs_n < CO
    nb = offs_m // (HH * WW)
    oh = (offs_m % (HH * WW)) // WW
    ow = offs_m % WW
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for kh in tl.static_range(3):
        for kw in tl.static_range(3):
            ih = oh + (kh - 1)
            iw = ow + (kw - 1)
            valid = m_mask & (ih >= 0) & (ih < HH) & (iw >= 0) & (iw < WW)
            pix = ((nb.to(tl.int64) * HH + ih) * WW + iw) * CI
            for c0 in range(0, CI, BLOCK_C):
                offs_c = c0 + tl.arange(0, BLOCK_C)
                c_mask = offs_c < CI
                a = tl.load(x_ptr + pix[:, None] + offs_c[None, :], mask=valid[:, None] & c_mask[None, :], other=0.0)
                b = tl.load(w_ptr + (kh * 3 + kw) * W_TAP + offs_c[:, None] * W_C + offs_n[None, :] * W_N,
                            mask=c_mask[:, None] & n_mask[None, :], other=0.0)
                acc = tl.dot(a, b, acc)
    tl.store(y_ptr + offs_m.to(tl.int64)[:, None] * CO + offs_n[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=m_mask[:, None] & n_mask[None, :])


@triton.jit
def conv_flat(x_ptr, w_ptr, y_ptr, NB, HH, WW, CI, CO, W_TAP, W_C, W_N,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_C: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    m_mask = offs_m < NB * HH * WW
    n_mask = offs_n < CO
    nb = offs_m // (HH * WW)
    oh = (offs_m % (HH * WW)) // WW
    ow = offs_m % WW
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    blocks = tl.cdiv(CI, BLOCK_C)
    for k in range(0, 9 * blocks):
        tap = k // blocks
        c0 = (k - tap * blocks) * BLOCK_C
        ih = oh + (tap // 3 - 1)
        iw = ow + (tap % 3 - 1)
        valid = m_mask & (ih >= 0) & (ih < HH) & (iw >= 0) & (iw < WW)
        pix = ((nb.to(tl.int64) * HH + ih) * WW + iw) * CI
        offs_c = c0 + tl.arange(0, BLOCK_C)
        c_mask = offs_c < CI
        a = tl.load(x_ptr + pix[:, None] + offs_c[None, :], mask=valid[:, None] & c_mask[None, :], other=0.0)
        b = tl.load(w_ptr + tap * W_TAP + offs_c[:, None] * W_C + offs_n[None, :] * W_N,
                    mask=c_mask[:, None] & n_mask[None, :], other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(y_ptr + offs_m.to(tl.int64)[:, None] * CO + offs_n[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=m_mask[:, None] & n_mask[None, :])


def run(kind: str, x: torch.Tensor, w: torch.Tensor, cfg: dict) -> torch.Tensor:
    nb, hh, ww, ci = x.shape
    co = w.shape[0]
    y = torch.empty((nb, hh, ww, co), device=x.device, dtype=x.dtype)
    if kind.endswith("packed"):
        wk = w.permute(2, 3, 1, 0).contiguous()  # (3, 3, C, COUT): K-major, COUT contiguous
        strides = (ci * co, co, 1)
    else:
        wk = w  # (COUT, C, 3, 3) as the drafts read it
        strides = (1, 9, ci * 9)
    kernel = conv_nested if kind.startswith("nested") else conv_flat
    grid = (triton.cdiv(nb * hh * ww, cfg["BLOCK_M"]), triton.cdiv(co, cfg["BLOCK_N"]))
    kernel[grid](x, wk, y, nb, hh, ww, ci, co, *strides, BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"],
                 BLOCK_C=cfg["BLOCK_C"], num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    return y


def reference(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return F.conv2d(x.permute(0, 3, 1, 2), w, padding=1).permute(0, 2, 3, 1).contiguous()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.path.join(os.environ.get("OUT", "/tmp"), "conv_loop_probe.json"))
    args = parser.parse_args()
    torch.manual_seed(0)
    x = torch.randn(N, H, W, C, device="cuda", dtype=torch.float16)
    w = (torch.randn(COUT, C, 3, 3, device="cuda") / (C * 9) ** 0.5).to(torch.float16)
    want = reference(x, w).float()
    bench = triton.testing.do_bench_cudagraph
    rows = [{"form": "cudnn (F.conv2d, the Model)", "ms": bench(lambda: reference(x, w))}]
    compiled = torch.compile(reference)
    compiled(x, w)
    rows.append({"form": "torch.compile(Model)", "ms": bench(lambda: compiled(x, w))})
    grid = {"BLOCK_M": (64, 128), "BLOCK_N": (64,), "BLOCK_C": (32, 64), "num_warps": (4, 8), "num_stages": (3,)}
    for kind in ("nested", "flat", "nested_packed", "flat_packed"):
        for values in itertools.product(*grid.values()):
            cfg = dict(zip(grid, values, strict=True))
            try:
                got = run(kind, x, w, cfg).float()
                err = (got - want).abs().max().item()
                ms = bench(lambda: run(kind, x, w, cfg)) if err < 2e-2 else None  # noqa: B023
            except Exception as exc:  # a tile that does not compile is a result too
                rows.append({"form": kind, **cfg, "error": f"{type(exc).__name__}: {str(exc)[:200]}"})
                continue
            rows.append({"form": kind, **cfg, "max_err": err, "ms": ms})
    best = {}
    for r in rows:
        if r.get("ms") is not None:
            key = r["form"]
            best[key] = min(best.get(key, r), r, key=lambda q: q["ms"])
    for r in best.values():
        print(json.dumps(r))
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump({"device": torch.cuda.get_device_name(), "shape": [N, H, W, C, COUT], "rows": rows,
                   "best": best}, fh, indent=1)


if __name__ == "__main__":
    main()
