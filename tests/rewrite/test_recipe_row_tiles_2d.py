"""row-tiles-2d: one program per row becomes a tile of rows per program (2D tiles), launch included."""

from __future__ import annotations

from pathlib import Path

import pytest
from recipe_helpers import check_correct, declined, rewrite

ROOT = Path(__file__).resolve().parents[2]


def bench(name: str) -> str:
    return (ROOT / "bench" / f"{name}.py").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def rewrites() -> dict[str, str]:
    out = {}
    for name, kernel in (("transpose/transpose", "transpose_kernel"), ("gather/embedding", "embedding_kernel"),
                         ("reduction/column_sum", "column_sum_kernel"), ("scan/cumsum", "cumsum_kernel")):
        small, large = rewrite("row-tiles-2d", bench(name), kernel)
        out[name.split("/")[1]] = small.source
        out[name.split("/")[1] + "_64"] = large.source
    return out


def test_rewrite_shape(rewrites: dict[str, str]) -> None:
    new = rewrites["transpose"]
    assert "    row_ids = tl.program_id(0) * 16 + tl.arange(0, 16)\n    row_ok = row_ids[:, None] < n_rows_total\n" in new
    assert "cols = start + tl.arange(0, BLOCK_SIZE)[None, :]" in new
    assert "tl.store(out_ptr + cols * n_rows + row, x, mask=(mask) & row_ok)" in new
    assert "transpose_kernel[(triton.cdiv(x.shape[0], 16),)](x, out, x.shape[0], x.shape[1], BLOCK_SIZE=128, n_rows_total=x.shape[0])" in new
    assert "acc = tl.full([16, 1], 0.0, dtype=tl.float32)" in rewrites["column_sum"]


def test_stay_correct(rewrites: dict[str, str], tmp_path) -> None:
    # the test shapes have row counts that are no multiple of 16 or 64 (19, 13, 37, 5)
    check_correct(rewrites, tmp_path)


def test_declines() -> None:
    assert "reduces" in declined("row-tiles-2d", bench("reduction/row_sum"), "row_sum_kernel")
    assert "rows are not independent" in declined("row-tiles-2d", bench("matmul/matmul"), "matmul_kernel")
    two_ids = bench("transpose/transpose").replace("    for start in", "    other = tl.program_id(0)\n    for start in")
    assert "exactly one" in declined("row-tiles-2d", two_ids, "transpose_kernel")
    lambda_grid = bench("transpose/transpose").replace("transpose_kernel[(x.shape[0],)]", "transpose_kernel[lambda meta: (x.shape[0],)]")
    assert "single-axis" in declined("row-tiles-2d", lambda_grid, "transpose_kernel")
    bounds = bench("scan/cumsum").replace("for i in range(0, n_cols):", "for i in range(0, n_cols + row * 0):")
    assert "bounds depend" in declined("row-tiles-2d", bounds, "cumsum_kernel")
