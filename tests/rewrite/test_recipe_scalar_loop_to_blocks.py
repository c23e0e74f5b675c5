"""scalar-loop-to-blocks: sequential scalar scans and reductions become block scans / block reductions."""

from __future__ import annotations

from pathlib import Path

from recipe_helpers import check_correct, declined, rewrite, task

ROOT = Path(__file__).resolve().parents[2]
CUMSUM = (ROOT / "bench" / "scan" / "cumsum.py").read_text(encoding="utf-8")
COLSUM = (ROOT / "bench" / "reduction" / "column_sum.py").read_text(encoding="utf-8")
CUMPROD = (ROOT / "bench" / "scan" / "cumprod.py").read_text(encoding="utf-8")

SQUARES = task('''
    M = 4
    N = 2000
    TEST_SHAPES = [{"M": 3, "N": 1500}, {"M": 2, "N": 1024}]


    @triton.jit
    def sq_scan_kernel(x_ptr, out_ptr, n_cols):
        row = tl.program_id(0)
        total = 0.0
        for i in range(n_cols):
            v = tl.load(x_ptr + row * n_cols + i)
            total = total + v * v + 1.0
            tl.store(out_ptr + row * n_cols + i, total * 0.5)


    class Model(nn.Module):
        def forward(self, x):
            return torch.cumsum(x * x + 1.0, dim=1) * 0.5


    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.empty_like(x)
            sq_scan_kernel[(x.shape[0],)](x, out, x.shape[1])
            return out


    def get_inputs():
        return [torch.randn(M, N)]
''')


def test_rewrites_and_correctness(tmp_path) -> None:
    scan = rewrite("scalar-loop-to-blocks", CUMSUM, "cumsum_kernel")[0].source
    assert "for i in range(0, n_cols, 1024):" in scan
    assert "x = tl.load(x_row + offs_i, mask=mask_i, other=0.0)" in scan
    assert "acc_scan = acc + tl.cumsum(acc_part, axis=0)" in scan
    assert "tl.store(out_row + offs_i, acc_scan, mask=mask_i)" in scan
    assert scan.rstrip().endswith(CUMSUM.split("class Model")[1].rstrip()) or "class Model" in scan
    reduction = rewrite("scalar-loop-to-blocks", COLSUM, "column_sum_kernel")[0].source
    assert "acc += tl.sum(acc_part, axis=0)" in reduction and "cumsum" not in reduction
    squares = rewrite("scalar-loop-to-blocks", SQUARES, "sq_scan_kernel")[0].source
    # masked lanes would add 1.0 each: the part is zeroed outside the mask
    assert "total_part = tl.where(mask_i, v * v + 1.0, 0.0)" in squares
    product = rewrite("scalar-loop-to-blocks", CUMPROD, "cumprod_kernel")[0].source
    # masked lanes multiply by 1; the carry is the last lane of the block's inclusive product scan
    assert "acc_part = tl.where(mask_i, tl.load(x_ptr + row * stride_row + offs_i, mask=mask_i, other=0.0), 1.0)" in product
    assert "acc_scan = acc * tl.cumprod(acc_part, axis=0)" in product
    assert "acc = tl.sum(tl.where(tl.arange(0, 1024) == 1023, acc_scan, 0.0), axis=0)" in product
    check_correct({"scan": scan, "reduction": reduction, "squares": squares, "product": product}, tmp_path)


def test_declines() -> None:
    exclusive = CUMSUM.replace("        acc += x\n        tl.store(out_row + i, acc)", "        tl.store(out_row + i, acc)\n        acc += x")
    assert "exclusive" in declined("scalar-loop-to-blocks", exclusive, "cumsum_kernel")
    branchy = CUMSUM.replace("        acc += x\n", "        if x > 0:\n            x = x * 2\n        acc += x\n")
    assert "control flow" in declined("scalar-loop-to-blocks", branchy, "cumsum_kernel")
    fixed_store = CUMSUM.replace("tl.store(out_row + i, acc)", "tl.store(out_row, acc)")
    assert "does not depend" in declined("scalar-loop-to-blocks", fixed_store, "cumsum_kernel")
