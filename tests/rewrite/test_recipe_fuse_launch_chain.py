"""fuse-launch-chain: two back-to-back launches passing an intermediate become one fused kernel."""

from __future__ import annotations

from pathlib import Path

from recipe_helpers import check_correct, declined, rewrite

ROOT = Path(__file__).resolve().parents[2]
GELU = (ROOT / "bench" / "elementwise" / "bias_gelu.py").read_text(encoding="utf-8")


def test_rewrite_and_correctness(tmp_path) -> None:
    from_consumer = rewrite("fuse-launch-chain", GELU, "gelu_kernel")[0]
    from_producer = rewrite("fuse-launch-chain", GELU, "add_bias_kernel")[0]
    assert from_consumer.source == from_producer.source
    new = from_consumer.source
    assert "def add_bias_gelu_kernel_fused(x_ptr, bias_ptr, n_elements, n_cols, out_ptr_2, BLOCK_SIZE: tl.constexpr):" in new
    assert "    fused_value = x + b\n    x = fused_value\n    inner = " in new
    assert "    # tanh(u) = 1 - 2 / (exp(2u) + 1), safe when exp overflows\n    t = tl.exp(2.0 * inner)" in new
    assert "tl.store(out_ptr_2 + offsets, y, mask=mask)" in new
    assert new.count("[grid](") == 1 and "add_bias_gelu_kernel_fused[grid](x_ptr=x, bias_ptr=bias" in new
    # both original kernels are still there, byte for byte
    assert GELU.split("class Model")[0] in new
    check_correct({"fused": new}, tmp_path)


def test_declines() -> None:
    other_grid = GELU.replace("gelu_kernel[grid](tmp", "gelu_kernel[(triton.cdiv(n, 128),)](tmp")
    assert "different grids" in declined("fuse-launch-chain", other_grid, "gelu_kernel")
    shifted = GELU.replace("x = tl.load(x_ptr + offsets, mask=mask)\n    inner", "x = tl.load(x_ptr + offsets + 1, mask=mask)\n    inner")
    assert "different addresses" in declined("fuse-launch-chain", shifted, "gelu_kernel")
    apart = GELU.replace("        gelu_kernel[grid]", "        out.zero_()\n        gelu_kernel[grid]")
    assert "right before or after" in declined("fuse-launch-chain", apart, "gelu_kernel")
