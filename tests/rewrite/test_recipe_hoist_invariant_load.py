"""hoist-invariant-load: a load that reads the same address every iteration moves before the loop."""

from __future__ import annotations

from recipe_helpers import check_correct, declined, rewrite, task

SCALE = task('''
    M = 8
    N = 300
    TEST_SHAPES = [{"M": 4, "N": 64}, {"M": 3, "N": 45}]


    @triton.jit
    def scale_kernel(x_ptr, t_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            t = tl.load(t_ptr)  # the temperature
            x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols)
            tl.store(out_ptr + row * n_cols + cols, x * t, mask=cols < n_cols)


    class Model(nn.Module):
        def forward(self, x, t):
            return x * t


    class ModelNew(nn.Module):
        def forward(self, x, t):
            out = torch.empty_like(x)
            scale_kernel[(x.shape[0],)](x, t, out, x.shape[1], BLOCK=16)
            return out


    def get_inputs():
        return [torch.randn(M, N), torch.randn(1)]
''')


def test_rewrite_and_correctness(tmp_path) -> None:
    new = rewrite("hoist-invariant-load", SCALE, "scale_kernel")[0].source
    assert "    row = tl.program_id(0)\n    t = tl.load(t_ptr)  # the temperature\n    for start" in new
    assert new.count("tl.load(t_ptr)") == 1
    assert "x = tl.load(x_ptr" in new.split("for start")[1]  # the loop-dependent load stays
    check_correct({"orig": SCALE, "rewritten": new}, tmp_path)


def test_declines_when_the_loop_writes_through_the_pointer() -> None:
    source = SCALE.replace("tl.store(out_ptr + row", "tl.store(t_ptr + 0 * row").replace(
        "TEST_SHAPES", "UNUSED"
    )
    assert "stores through" in declined("hoist-invariant-load", source, "scale_kernel")


def test_declines_without_invariant_load() -> None:
    source = SCALE.replace("t = tl.load(t_ptr)", "t = tl.load(t_ptr + start * 0)")
    assert "no loop-invariant load" in declined("hoist-invariant-load", source, "scale_kernel")


def test_a_cast_load_moves_with_its_cast(tmp_path) -> None:
    # `tl.load(p).to(tl.float32)`: TL106 flags the load; the recipe declined it as "no loop-invariant load"
    source = SCALE.replace("t = tl.load(t_ptr)", "t = tl.load(t_ptr).to(tl.float32)")
    new = rewrite("hoist-invariant-load", source, "scale_kernel")[0].source
    assert "    t = tl.load(t_ptr).to(tl.float32)  # the temperature\n    for start" in new
    check_correct({"cast_rewritten": new}, tmp_path)
