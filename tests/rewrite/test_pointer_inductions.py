"""Pointers a loop advances (`ptrs += stride`) rewritten as offsets from the loop index, so that the schedules that
reorder a loop's iterations apply to kernels written that way: the same column reductions and scans written with
indices and with advanced pointers, rewritten, then run against torch under the interpreter at sizes no block
divides."""

from __future__ import annotations

import textwrap

from recipe_helpers import check_rewrites_correct, context, declined, rewrite, task

from tritonlens.analysis.rewrite.recipe_kit import KernelSource
from tritonlens.analysis.rewrite.schedules.pointer_inductions import index_form

COLUMN_LSE_ADVANCED = task('''
    TEST_SHAPES = [{"R": 37, "C": 70}, {"R": 130, "C": 5}]
    R, C = 37, 70

    @triton.jit
    def col_lse(x_ptr, y_ptr, n_rows, n_cols, BC: tl.constexpr):
        cols = tl.program_id(0) * BC + tl.arange(0, BC)
        ok = cols < n_cols
        hi = tl.full([BC], float("-inf"), dtype=tl.float32)
        total = tl.zeros([BC], dtype=tl.float32)
        p = x_ptr + cols
        for r in range(0, n_rows):
            v = tl.load(p, mask=ok, other=0.0)
            p = p + n_cols
            new = tl.maximum(hi, v)
            total = total * tl.exp(hi - new) + tl.exp(v - new)
            hi = new
        tl.store(y_ptr + cols, hi + tl.log(total), mask=ok)

    class Model(nn.Module):
        def forward(self, x):
            return torch.logsumexp(x, dim=0)

    class ModelNew(nn.Module):
        def forward(self, x):
            y = torch.empty(x.shape[1], device=x.device, dtype=x.dtype)
            col_lse[(triton.cdiv(x.shape[1], 16),)](x, y, x.shape[0], x.shape[1], BC=16)
            return y

    def get_inputs():
        return [torch.randn(R, C)]
''')

COLUMN_LSE_INDEXED = COLUMN_LSE_ADVANCED.replace("        p = x_ptr + cols\n", "").replace(
    "v = tl.load(p, mask=ok, other=0.0)\n            p = p + n_cols\n",
    "v = tl.load(x_ptr + r * n_cols + cols, mask=ok, other=0.0)\n")

COLUMN_CUMSUM_ADVANCED = task('''
    TEST_SHAPES = [{"R": 37, "C": 70}, {"R": 9, "C": 3}]
    R, C = 37, 70

    @triton.jit
    def col_cumsum(x_ptr, y_ptr, n_rows, n_cols, BC: tl.constexpr):
        cols = tl.program_id(0) * BC + tl.arange(0, BC)
        ok = cols < n_cols
        run = tl.zeros([BC], dtype=tl.float32)
        src = x_ptr + cols
        dst = y_ptr + cols
        for r in range(0, n_rows):
            run += tl.load(src, mask=ok, other=0.0)
            src += n_cols
            tl.store(dst, run, mask=ok)  # after the source advanced: only the destination's own step counts
            dst += n_cols

    class Model(nn.Module):
        def forward(self, x):
            return torch.cumsum(x, dim=0)

    class ModelNew(nn.Module):
        def forward(self, x):
            y = torch.empty_like(x)
            col_cumsum[(triton.cdiv(x.shape[1], 16),)](x, y, x.shape[0], x.shape[1], BC=16)
            return y

    def get_inputs():
        return [torch.randn(R, C)]
''')

# the advanced pointer is read once more after the step, in the same iteration
STEP_THEN_READ = task('''
    TEST_SHAPES = [{"R": 13, "C": 70}]
    R, C = 13, 70

    @triton.jit
    def pairs(x_ptr, y_ptr, n_rows, n_cols, BC: tl.constexpr):
        cols = tl.program_id(0) * BC + tl.arange(0, BC)
        ok = cols < n_cols
        acc = tl.zeros([BC], dtype=tl.float32)
        p = x_ptr + cols
        for r in range(1, n_rows, 2):
            a = tl.load(p, mask=ok, other=0.0)
            p += 2 * n_cols
            acc += a * tl.load(p - n_cols, mask=ok, other=0.0)
        tl.store(y_ptr + cols, acc, mask=ok)

    class Model(nn.Module):
        def forward(self, x):
            n = x.shape[0] // 2 * 2
            return (x[0:n:2] * x[1:n:2]).sum(dim=0)

    class ModelNew(nn.Module):
        def forward(self, x):
            y = torch.empty(x.shape[1], device=x.device, dtype=x.dtype)
            pairs[(triton.cdiv(x.shape[1], 16),)](x, y, x.shape[0], x.shape[1], BC=16)
            return y

    def get_inputs():
        return [torch.randn(R, C)]
''')


def _index_form(source: str, kernel: str) -> str | None:
    return index_form(KernelSource(context(source, kernel)))


def test_advanced_pointers_become_offsets_from_the_loop_index() -> None:
    lse = _index_form(COLUMN_LSE_ADVANCED, "col_lse")
    assert lse is not None and "p = p + n_cols" not in lse
    assert "        v = tl.load(p + r * n_cols, mask=ok, other=0.0)\n        new = tl.maximum(hi, v)\n" in lse
    scan = _index_form(COLUMN_CUMSUM_ADVANCED, "col_cumsum")
    assert "run += tl.load(src + r * n_cols, mask=ok, other=0.0)\n" in scan
    assert "tl.store(dst + r * n_cols, run, mask=ok)  # after the source advanced" in scan
    assert "+= n_cols" not in scan
    pairs = _index_form(STEP_THEN_READ, "pairs")  # range(1, n, 2): the iteration count, and a read after the step
    assert "a = tl.load(p + ((r - 1) // 2) * (2 * n_cols), mask=ok, other=0.0)" in pairs
    assert "acc += a * tl.load(p + (((r - 1) // 2) + 1) * (2 * n_cols) - n_cols, mask=ok, other=0.0)" in pairs


def test_pointers_that_carry_past_their_loop_stay() -> None:
    read_after = COLUMN_LSE_ADVANCED.replace("tl.store(y_ptr + cols,", "tl.store(p - n_cols + y_ptr - x_ptr,")
    assert read_after != COLUMN_LSE_ADVANCED and _index_form(read_after, "col_lse") is None
    # set before an enclosing loop: the pointer carries across that loop's iterations
    loop = COLUMN_LSE_ADVANCED[COLUMN_LSE_ADVANCED.index("    for r in"):COLUMN_LSE_ADVANCED.index("    tl.store(y_ptr")]
    nested = COLUMN_LSE_ADVANCED.replace(loop, "    for rep in range(0, 1):\n" + textwrap.indent(loop, "    "))
    assert nested != COLUMN_LSE_ADVANCED and _index_form(nested, "col_lse") is None
    stepped_twice = COLUMN_LSE_ADVANCED.replace("        new = tl.maximum(hi, v)\n",
                                                "        p = p + n_cols\n        new = tl.maximum(hi, v)\n")
    assert stepped_twice != COLUMN_LSE_ADVANCED
    assert _index_form(stepped_twice, "col_lse") is None
    # set afresh between two passes: each pass's pointer is its own
    two_passes = COLUMN_CUMSUM_ADVANCED.replace(
        "        dst += n_cols\n",
        "        dst += n_cols\n    src = x_ptr + cols\n    for r in range(0, n_rows):\n"
        "        tl.store(dst, tl.load(src, mask=ok, other=0.0), mask=ok)\n        src += n_cols\n")
    assert two_passes != COLUMN_CUMSUM_ADVANCED
    rewritten = _index_form(two_passes, "col_cumsum")
    assert rewritten is not None and rewritten.count("src + r * n_cols") == 2 and "src +=" not in rewritten


def test_the_schedules_apply_to_advanced_pointers() -> None:
    split = rewrite("schedule-reduction-split", COLUMN_LSE_ADVANCED, "col_lse")
    indexed = rewrite("schedule-reduction-split", COLUMN_LSE_INDEXED, "col_lse")
    assert [c.title for c in split] == [c.title for c in indexed]
    assert "offsets from its index" in split[0].rationale
    assert "for r in range(r_first, tl.minimum(r_first + r_slice, n_rows)):" in split[0].source
    scan = rewrite("schedule-blocked-scan", COLUMN_CUMSUM_ADVANCED, "col_cumsum")
    assert [c.title for c in scan] == ["Blocked scan (8 iterations per step)", "Blocked scan (32 iterations per step)"]
    assert "r = r_block + tl.arange(0, SCAN_BLOCK)[:, None]" in scan[0].source
    # a block pointer's tl.advance is not rewritten: the schedule still says why it declines
    assert "advances" in declined("schedule-reduction-split", STEP_THEN_READ.replace(
        "p += 2 * n_cols", "p = p + 2 * n_cols * r"), "pairs")


def test_stay_correct(tmp_path) -> None:
    check_rewrites_correct({"lse": ("schedule-reduction-split", COLUMN_LSE_ADVANCED, "col_lse"),
                            "cumsum": ("schedule-blocked-scan", COLUMN_CUMSUM_ADVANCED, "col_cumsum"),
                            "pairs": ("schedule-reduction-split", STEP_THEN_READ, "pairs")}, tmp_path)
