"""A reduction whose outputs already take two grid axes (batch x column blocks) is split over the third: the same
schedule as for a one-axis grid, the output programs' index linear over both axes. Rewritten, then run against
torch under the interpreter at sizes no block divides."""

from __future__ import annotations

from recipe_helpers import check_rewrites_correct, declined, rewrite, task

MIDDLE_LSE = task('''
    TEST_SHAPES = [{"A": 3, "B": 37, "C": 100}, {"A": 2, "B": 130, "C": 17}]
    A, B, C = 3, 37, 100

    @triton.jit
    def mid_lse(x_ptr, y_ptr, n_b, n_c, BC: tl.constexpr):
        a = tl.program_id(0)
        cols = tl.program_id(1) * BC + tl.arange(0, BC)
        ok = cols < n_c
        hi = tl.full([BC], float("-inf"), dtype=tl.float32)
        total = tl.zeros([BC], dtype=tl.float32)
        for j in range(0, n_b):
            v = tl.load(x_ptr + (a * n_b + j) * n_c + cols, mask=ok, other=0.0).to(tl.float32)
            new = tl.maximum(hi, v)
            total = total * tl.exp(hi - new) + tl.exp(v - new)
            hi = new
        tl.store(y_ptr + a * n_c + cols, (hi + tl.log(total)).to(tl.float16), mask=ok)

    class Model(nn.Module):
        def forward(self, x):
            return torch.logsumexp(x.float(), dim=1).half()

    class ModelNew(nn.Module):
        def forward(self, x):
            y = torch.empty((x.shape[0], x.shape[2]), device=x.device, dtype=torch.float16)
            block_c = 32
            grid = (x.shape[0], triton.cdiv(x.shape[2], block_c))
            mid_lse[grid](x, y, x.shape[1], x.shape[2], BC=block_c)
            return y

    def get_inputs():
        return [torch.randn(A, B, C).half()]
''')

MIDDLE_SUM = task('''
    TEST_SHAPES = [{"A": 3, "B": 37, "C": 100}, {"A": 2, "B": 130, "C": 17}]
    A, B, C = 3, 37, 100

    @triton.jit
    def mid_sum(x_ptr, y_ptr, n_b, n_c, BB: tl.constexpr, BC: tl.constexpr):
        a = tl.program_id(0)
        cols = tl.program_id(1) * BC + tl.arange(0, BC)
        acc = tl.zeros([BB, BC], dtype=tl.float32)
        for j in range(0, n_b, BB):
            rows = j + tl.arange(0, BB)
            ok = (rows[:, None] < n_b) & (cols[None, :] < n_c)
            acc += tl.load(x_ptr + (a * n_b + rows[:, None]) * n_c + cols[None, :], mask=ok, other=0.0).to(tl.float32)
        tl.store(y_ptr + a * n_c + cols, tl.sum(acc, axis=0).to(tl.float16), mask=cols < n_c)

    class Model(nn.Module):
        def forward(self, x):
            return x.float().sum(dim=1).half()

    class ModelNew(nn.Module):
        def forward(self, x):
            y = torch.empty((x.shape[0], x.shape[2]), device=x.device, dtype=torch.float16)
            mid_sum[(x.shape[0], triton.cdiv(x.shape[2], 32))](x, y, x.shape[1], x.shape[2], BB=8, BC=32)
            return y

    def get_inputs():
        return [torch.randn(A, B, C).half()]
''')


def test_the_third_axis_takes_the_slices() -> None:
    [lse] = rewrite("schedule-reduction-split", MIDDLE_LSE, "mid_lse")
    assert "third grid axis" in lse.title and "grid axis 2" in lse.rationale
    src = lse.source
    assert "for j in range(j_first, tl.minimum(j_first + j_slice, n_b)):" in src
    assert "j_first = tl.program_id(2) * j_slice" in src
    # one arrival counter and one slot per output program, linear over the two output axes
    assert "tl.atomic_add(arrivals + (tl.program_id(0) * tl.num_programs(1) + tl.program_id(1)), 1)" in src
    assert "row_splits = max(1, min(64, 528 // max(1, grid[0] * grid[1])))" in src
    assert "mid_lse[(grid[0], grid[1], row_splits)](" in src
    [direct] = rewrite("schedule-reduction-split", MIDDLE_SUM, "mid_sum")
    assert "mid_sum[(x.shape[0], triton.cdiv(x.shape[2], 32), row_splits)](" in direct.source
    # the slices meet in fp32: the user's cast to fp16 is left to the one copy into the output
    assert "tl.atomic_add(y_ptr + a * n_c + cols, tl.sum(acc, axis=0), mask=cols < n_c)" in direct.source
    third = MIDDLE_SUM.replace("a = tl.program_id(0)\n", "a = tl.program_id(0) + tl.program_id(2)\n")
    assert third != MIDDLE_SUM
    assert "no free axis" in declined("schedule-reduction-split", third, "mid_sum")


def test_stay_correct(tmp_path) -> None:
    check_rewrites_correct({"lse": ("schedule-reduction-split", MIDDLE_LSE, "mid_lse"),
                            "sum": ("schedule-reduction-split", MIDDLE_SUM, "mid_sum")}, tmp_path)
