"""split-reduction: a long reduction loop split over a second grid axis, partials combined with atomic_add."""

from __future__ import annotations

from pathlib import Path

from recipe_helpers import check_correct, declined, rewrite, task

ROOT = Path(__file__).resolve().parents[2]
COLUMN_SUM = (ROOT / "bench" / "reduction" / "column_sum.py").read_text(encoding="utf-8")
COLUMN_MEAN = (ROOT / "tests" / "fixtures" / "rewrite" / "column_mean_blocks.py").read_text(encoding="utf-8")

# one program per block of columns, a vector accumulator over the rows: few programs for a wide reduction
COLUMN_BLOCKS = task('''
    M = 300
    N = 40
    TEST_SHAPES = [{"M": 64, "N": 32}, {"M": 37, "N": 19}]


    @triton.jit
    def col_blocks_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
        cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
        acc = tl.zeros([BLOCK_C], dtype=tl.float32)
        for r in range(0, n_rows, BLOCK_R):
            rows = r + tl.arange(0, BLOCK_R)
            mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
            tile = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0)
            acc += tl.sum(tile, axis=0)
        tl.store(out_ptr + cols, acc / n_rows, mask=cols < n_cols)


    class Model(nn.Module):
        def forward(self, x):
            return x.mean(dim=0)


    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.empty(x.shape[1], dtype=torch.float32)
            grid = (triton.cdiv(x.shape[1], 16),)
            col_blocks_kernel[grid](x, out, x.shape[0], x.shape[1], BLOCK_R=8, BLOCK_C=16)
            return out


    def get_inputs():
        return [torch.randn(M, N)]
''')

# a global sum by a single program with a scalar accumulator and a loop of one argument
GLOBAL_SUM = task('''
    N = 5000
    TEST_SHAPES = [{"N": 4096}, {"N": 1001}]


    @triton.jit
    def total_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        total = 0.0
        for i in range(tl.cdiv(n, BLOCK)):
            offs = i * BLOCK + tl.arange(0, BLOCK)
            total += tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0))
        tl.store(out_ptr, total)


    class Model(nn.Module):
        def forward(self, x):
            return x.sum().reshape(1)


    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.empty(1, device=x.device)
            total_kernel[(1,)](x, out, x.numel(), BLOCK=128)
            return out


    def get_inputs():
        return [torch.randn(N)]
''')


def test_rewrites_and_correctness(tmp_path) -> None:
    mid = rewrite("scalar-loop-to-blocks", COLUMN_SUM, "column_sum_kernel", codes=("TL107",))[0].source
    column = rewrite("split-reduction", mid, "column_sum_kernel", codes=("TL202",))[0]
    assert "for row in range(split_lo, split_hi, 1024):" in column.source
    assert "tl.atomic_add(out_ptr + col, acc)" in column.source
    assert "out.zero_()\n" in column.source
    assert "if out.dtype == torch.float32 else 1" in column.source  # x.dtype is not visible: a run-time guard
    assert column.evidence == ("TL202",) and "guess" in column.rationale
    blocks = rewrite("split-reduction", COLUMN_BLOCKS, "col_blocks_kernel", codes=("TL203",))[0].source
    assert "tl.atomic_add(out_ptr + cols, acc / n_rows, mask=cols < n_cols)" in blocks
    assert "col_blocks_kernel[(*grid, split)]" in blocks
    assert "else 1" not in blocks  # the output is created as float32 in the file
    # row-tiles-2d first: 64 columns per program, 128 programs at 8192 columns (TL203 on a 132-SM H200)
    tiles = rewrite("row-tiles-2d", COLUMN_SUM, "column_sum_kernel", codes=("TL131",))[-1].source
    tiled = rewrite("split-reduction", tiles, "column_sum_kernel", codes=("TL203",))[0].source
    assert "split_span = tl.cdiv(n_rows, n_split)\n" in tiled
    assert "tl.atomic_add(out_ptr + col, acc, mask=col_ok)" in tiled
    mean = rewrite("split-reduction", COLUMN_MEAN, "column_mean_kernel", codes=("TL203",))[0].source
    assert "tl.atomic_add(out_ptr + cols, acc / n_rows, mask=col_ok)" in mean
    assert "for start in range(split_lo, split_hi, BLOCK_R):" in mean
    total = rewrite("split-reduction", GLOBAL_SUM, "total_kernel", codes=("TL203",))[0].source
    assert "for i in range(split_lo, split_hi):" in total
    # force several slices at the small test shapes too, so the atomic combine itself is exercised
    forced = {name: text.replace("max(1, min(64,", "max(3, min(64,") for name, text in
              {"column": column.source, "blocks": blocks, "total": total, "tiled": tiled,
               "mean": mean}.items()}
    assert all("max(3, min(64," in text for text in forced.values())
    check_correct({"column_sum": COLUMN_SUM, "column_blocks": COLUMN_BLOCKS, "global_sum": GLOBAL_SUM,
                   **forced}, tmp_path)


def test_declines() -> None:
    row_max = COLUMN_BLOCKS.replace("acc += tl.sum(tile, axis=0)", "acc = tl.maximum(acc, tl.max(tile, axis=0))")
    assert "max/min" in declined("split-reduction", row_max, "col_blocks_kernel", codes=("TL203",))
    norm = COLUMN_BLOCKS.replace("acc / n_rows", "tl.sqrt(acc)")
    assert "not a linear function" in declined("split-reduction", norm, "col_blocks_kernel", codes=("TL203",))
    half = COLUMN_BLOCKS.replace("dtype=torch.float32)", "dtype=torch.float16)")
    assert "only fp32" in declined("split-reduction", half, "col_blocks_kernel", codes=("TL203",))
    biased = GLOBAL_SUM.replace("total = 0.0", "total = 1.0")
    assert "not zero" in declined("split-reduction", biased, "total_kernel", codes=("TL203",))
    scan = GLOBAL_SUM.replace("    tl.store(out_ptr, total)\n", "        tl.store(out_ptr + i, total)\n")
    assert scan != GLOBAL_SUM
    assert "inside the reduction loop" in declined("split-reduction", scan, "total_kernel", codes=("TL203",))
    three = COLUMN_BLOCKS.replace("grid = (triton.cdiv(x.shape[1], 16),)", "grid = (triton.cdiv(x.shape[1], 16), 1, 1)")
    assert "one or two axes" in declined("split-reduction", three, "col_blocks_kernel", codes=("TL203",))


def test_profile_decides() -> None:
    """A measured grid already at >= 4 programs per SM declines; a small one proposes with the measured SM count."""
    from dataclasses import replace

    from recipe_helpers import context, recipe

    def with_grid(programs: int) -> object:
        profile = {"device": {"sm_count": 132}, "launches": [{"kernel": "col_blocks_kernel", "grid": [programs, 1, 1]}]}
        return recipe("split-reduction").propose(replace(context(COLUMN_BLOCKS, "col_blocks_kernel", codes=("TL202",)),
                                                         profile=profile))

    big = with_grid(8192)
    assert not isinstance(big, list) and "8,192 programs (62 per SM)" in big.reason
    small = with_grid(64)
    assert isinstance(small, list) and "132 SMs of the profiled device" in small[0].rationale
    assert "max(1, min(64, (528 + (triton.cdiv(x.shape[1], 16)) - 1)" in small[0].source
