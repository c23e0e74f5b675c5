"""Several rows per program when the grid's second axis walks blocks of the row's columns: the row axis (and what
the kernel derives from it, `row // K`, `row % K`) becomes a column of row ids, the second axis stays. Rewritten,
then run against torch under the interpreter at sizes no block divides."""

from __future__ import annotations

from recipe_helpers import check_rewrites_correct, declined, rewrite, task

GATHER_ROWS = task('''
    TEST_SHAPES = [{"A": 3, "B": 11, "C": 300, "K": 7}, {"A": 2, "B": 5, "C": 33, "K": 9}]
    A, B, C, K = 3, 11, 300, 7

    @triton.jit
    def pick(x_ptr, idx_ptr, out_ptr, B, C, K, BLOCK_C: tl.constexpr):
        row = tl.program_id(0)
        a = row // K
        k = row % K
        src = tl.load(idx_ptr + k)
        cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
        ok = cols < C
        v = tl.load(x_ptr + (a * B + src) * C + cols, mask=ok)
        tl.store(out_ptr + row * C + cols, v * 2.0, mask=ok)

    class Model(nn.Module):
        def forward(self, x, idx):
            return torch.index_select(x, 1, idx) * 2.0

    class ModelNew(nn.Module):
        def forward(self, x, idx):
            out = torch.empty((x.shape[0], idx.shape[0], x.shape[2]), device=x.device, dtype=x.dtype)
            block = 64
            grid = (x.shape[0] * idx.shape[0], triton.cdiv(x.shape[2], block))
            pick[grid](x, idx, out, x.shape[1], x.shape[2], idx.shape[0], BLOCK_C=block)
            return out

    def get_inputs():
        return [torch.randn(A, B, C), torch.randint(0, B, (K,))]
''')


def test_the_second_axis_stays() -> None:
    cands = rewrite("schedule-row-tiles", GATHER_ROWS, "pick")
    src = cands[0].source
    assert "row = row_ids[:, None]\n" in src and "cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)[None, :]" in src
    assert "src = tl.load(idx_ptr + k, mask=row_ok)" in src  # the row's index, one per row of the tile
    assert "pick[(triton.cdiv(grid[0], rows_per_program), grid[1])](" in src and "n_rows_total=grid[0]" in src
    third = GATHER_ROWS.replace("a = row // K\n", "a = row // K + tl.program_id(2) * 0\n")
    assert third != GATHER_ROWS and "grid axis 2 (a second axis is kept" in declined("schedule-row-tiles", third, "pick")


def test_stay_correct(tmp_path) -> None:
    check_rewrites_correct({"gather": ("schedule-row-tiles", GATHER_ROWS, "pick")}, tmp_path)
