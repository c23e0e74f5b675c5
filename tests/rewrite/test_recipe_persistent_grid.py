"""persistent-grid (Ascend): at most one program per core, looping over the old grid's tiles."""

from __future__ import annotations

from pathlib import Path

from recipe_helpers import check_correct, declined, rewrite

ROOT = Path(__file__).resolve().parents[2]
GELU = (ROOT / "bench" / "elementwise" / "bias_gelu.py").read_text(encoding="utf-8")
ROWSUM = (ROOT / "bench" / "reduction" / "row_sum.py").read_text(encoding="utf-8")
ASCEND = "ascend910b3"


def test_rewrites_and_correctness(tmp_path) -> None:
    rows = rewrite("persistent-grid", ROWSUM, "row_sum_kernel", target=ASCEND)[0]
    new = rows.source
    assert "def row_sum_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK_SIZE: tl.constexpr, n_tiles):" in new
    assert "    for tile in range(tl.program_id(0), n_tiles, tl.num_programs(0)):\n        row = tile\n" in new
    assert "row_sum_kernel[(min(x.shape[0], 40),)](x, out, x.shape[1], x.stride(0), BLOCK_SIZE=128, n_tiles=x.shape[0])" in new
    assert "guess" in rows.rationale
    # a grid held in a variable, and a kernel that is not the first in its file
    gelu = rewrite("persistent-grid", GELU, "gelu_kernel", target=ASCEND)[0].source
    assert "gelu_kernel[(min(triton.cdiv(n, 256), 40),)](tmp, out, n, BLOCK_SIZE=256, n_tiles=triton.cdiv(n, 256))" in gelu
    assert "        pid = (tile + 0 * tl.program_id(0)).to(tl.int64)\n" in gelu
    # more rows than programs: each program must loop over several rows
    many = new.replace('TEST_SHAPES = [{"M": 16, "N": 512}, {"M": 13, "N": 301}]', 'TEST_SHAPES = [{"M": 97, "N": 33}]')
    check_correct({"rows": new, "gelu": gelu, "many": many}, tmp_path)


def test_declines() -> None:
    assert "Ascend" in declined("persistent-grid", ROWSUM, "row_sum_kernel", target="sm_90")
    matmul = (ROOT / "bench" / "matmul" / "matmul.py").read_text(encoding="utf-8")
    assert "axis other than 0" in declined("persistent-grid", matmul, "matmul_kernel", target=ASCEND)
    early = ROWSUM.replace("    acc = 0.0\n", "    acc = 0.0\n    if row < 0:\n        return\n")
    assert "returns early" in declined("persistent-grid", early, "row_sum_kernel", target=ASCEND)
