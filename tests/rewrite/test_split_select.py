"""An arg-reduction (a best value and its index replaced together under one condition) is split over a free grid
axis: each slice keeps its own (value, index) and the last slice to arrive folds the slices in order with the
kernel's own condition and selects. Rewritten, then run against torch under the interpreter at sizes no block
divides, on data full of ties (the first index must win, as torch's does)."""

from __future__ import annotations

from recipe_helpers import check_rewrites_correct, declined, rewrite, task

from tritonlens.analysis.computation import classify, lift_kernel
from tritonlens.analysis.kernels import parse_module

# a named condition, the block's own argmax, a strict `>`: the first row of the maximum wins
COLUMN_ARGMAX = task('''
    TEST_SHAPES = [{"R": 300, "C": 37}, {"R": 77, "C": 130}]
    R, C = 300, 37

    @triton.jit
    def col_argmax(x_ptr, out_ptr, n_rows, n_cols, BR: tl.constexpr, BC: tl.constexpr):
        cols = tl.program_id(0) * BC + tl.arange(0, BC)
        keep = cols < n_cols
        top = tl.full((BC,), float("-inf"), dtype=tl.float32)
        where_top = tl.zeros((BC,), dtype=tl.int32)
        for r in range(0, n_rows, BR):
            rows = r + tl.arange(0, BR)
            x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :],
                        mask=(rows[:, None] < n_rows) & keep[None, :], other=float("-inf"))
            m, i = tl.max(x, axis=0, return_indices=True)
            better = m > top
            top = tl.where(better, m, top)
            where_top = tl.where(better, i + r, where_top)
        tl.store(out_ptr + cols, where_top.to(tl.int64), mask=keep)

    class Model(nn.Module):
        def forward(self, x):
            return torch.argmax(x, dim=0)

    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.empty(x.shape[1], device=x.device, dtype=torch.int64)
            col_argmax[(triton.cdiv(x.shape[1], 16),)](x, out, x.shape[0], x.shape[1], BR=8, BC=16)
            return out

    def get_inputs():
        return [torch.randint(0, 4, (R, C)).float()]  # ties everywhere: the first index must win
''')

# one row per program, the condition written inside both selects, the index update before the value's
ROW_ARGMIN = task('''
    TEST_SHAPES = [{"R": 5, "C": 1000}, {"R": 3, "C": 129}]
    R, C = 5, 1000

    @triton.jit
    def row_argmin(x_ptr, out_ptr, n_cols, BC: tl.constexpr):
        row = tl.program_id(0)
        low = tl.full((BC,), float("inf"), dtype=tl.float32)
        at = tl.zeros((BC,), dtype=tl.int32)
        for c in range(0, n_cols, BC):
            cols = c + tl.arange(0, BC)
            v = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=float("inf"))
            at = tl.where(v < low, cols, at)
            low = tl.where(v < low, v, low)
        m = tl.min(low, axis=0)
        first = tl.min(tl.where(low == m, at, n_cols), axis=0)
        tl.store(out_ptr + row, first.to(tl.int64))

    class Model(nn.Module):
        def forward(self, x):
            return torch.argmin(x, dim=1)

    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.empty(x.shape[0], device=x.device, dtype=torch.int64)
            row_argmin[(x.shape[0],)](x, out, x.shape[1], BC=32)
            return out

    def get_inputs():
        return [torch.randint(0, 5, (R, C)).float()]
''')


def test_the_model_reads_the_pair_as_a_selection_over_the_loop() -> None:
    for source, kernel in ((COLUMN_ARGMAX, "col_argmax"), (ROW_ARGMIN, "row_argmin")):
        module = parse_module(source)
        comp = lift_kernel(module, next(k for k in module.kernels if k.name == kernel))
        selected = [a for a in comp.accumulations if a.op == "select"]
        assert len(selected) == 2
        assert selected[0].loop in classify(comp).reduced_over


def test_the_slices_fold_with_the_kernels_own_condition() -> None:
    [split] = rewrite("schedule-reduction-split", COLUMN_ARGMAX, "col_argmax")
    src = split.source
    assert "the loop's own select step" in src
    assert "better_0 = top_slice > top" not in src  # the condition is the user's, its block value renamed
    assert "= top_slice > top" in src
    assert "top = tl.where(slice_wins, top_slice, top)" in src
    assert "where_top = tl.where(slice_wins, where_top_slice, where_top)" in src
    assert "chosen together under one condition" in split.rationale


def test_an_inline_condition_keeps_its_order_of_selects() -> None:
    [split] = rewrite("schedule-reduction-split", ROW_ARGMIN, "row_argmin")
    assert "slice_wins = low_slice < low" in split.source
    assert split.source.index("at = tl.where(slice_wins, at_slice, at)") < split.source.index(
        "low = tl.where(slice_wins, low_slice, low)")


def test_a_condition_on_a_value_no_slice_keeps_declines() -> None:
    window = COLUMN_ARGMAX.replace("better = m > top", "better = (m > top) & (r < 4096)")
    assert "no carried value keeps" in declined("schedule-reduction-split", window, "col_argmax")
    first, second = "at = tl.where(v < low, cols, at)", "low = tl.where(v < low, v, low)"
    late = ROW_ARGMIN.replace(first, "\0").replace(second, first).replace("\0", second)
    assert late != ROW_ARGMIN
    assert "a later select's condition reads" in declined("schedule-reduction-split", late, "row_argmin")


def test_split_arg_reductions_are_correct_with_ties(tmp_path) -> None:
    check_rewrites_correct({
        "col_argmax": ("schedule-reduction-split", COLUMN_ARGMAX, "col_argmax"),
        "row_argmin": ("schedule-reduction-split", ROW_ARGMIN, "row_argmin"),
    }, tmp_path)
