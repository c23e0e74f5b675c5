"""dot-tiles: a rank-1 update loop over K becomes tl.dot on K-tiles."""

from __future__ import annotations

from pathlib import Path

from recipe_helpers import check_correct, declined, rewrite

ROOT = Path(__file__).resolve().parents[2]
MATMUL = (ROOT / "bench" / "matmul" / "matmul.py").read_text(encoding="utf-8")


def test_rewrite_and_correctness(tmp_path) -> None:
    new = rewrite("dot-tiles", MATMUL, "matmul_kernel")[0].source
    assert "for k in range(0, K, 32):\n        offs_k = k + tl.arange(0, 32)\n" in new
    assert (
        "a = tl.load((a_ptr + offs_m * stride_am)[:, None] + (offs_k * stride_ak)[None, :], "
        "mask=(mask_m)[:, None] & (offs_k < K)[None, :], other=0.0)"
    ) in new
    assert "(b_ptr + offs_n * stride_bn)[None, :] + (offs_k * stride_bk)[:, None]" in new
    assert "acc += tl.dot(a, b)" in new
    # the wrapper and the reference are untouched
    assert new.split("class Model")[1] == MATMUL.split("class Model")[1]
    # the bench's test shapes include K=29, M=50, N=37: no multiple of any tile
    check_correct({"rewritten": new}, tmp_path)


def test_declines_other_loop_work_and_nonlinear_k() -> None:
    extra = MATMUL.replace("        acc += a[:, None]", "        a = a * 2\n        acc += a[:, None]")
    assert "does more than" in declined("dot-tiles", extra, "matmul_kernel")
    squared = MATMUL.replace("k * stride_ak", "k * k * stride_ak")
    assert "not k or k * stride" in declined("dot-tiles", squared, "matmul_kernel")
    padded = MATMUL.replace("mask=mask_m, other=0.0)", "mask=mask_m, other=1.0)")
    assert "non-zero" in declined("dot-tiles", padded, "matmul_kernel")
