"""block-size-warps: larger block sizes with a matching num_warps, grid literals followed."""

from __future__ import annotations

from recipe_helpers import check_correct, declined, rewrite, task

SCALE = task('''
    N = 5000
    TEST_SHAPES = [{"N": 4096}, {"N": 3001}]


    @triton.jit
    def scale_kernel(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
        offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


    class Model(nn.Module):
        def forward(self, x):
            return x * 2.0


    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.empty_like(x)
            grid = (triton.cdiv(x.numel(), 128),)
            scale_kernel[grid](x, out, x.numel(), BLOCK_SIZE=128,)
            return out


    def get_inputs():
        return [torch.randn(N)]
''')

ROWS = task('''
    M = 4
    N = 300
    TEST_SHAPES = [{"M": 3, "N": 2500}]


    @triton.jit
    def copy_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            tl.store(out_ptr + row * n_cols + cols, tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols), mask=cols < n_cols)


    class Model(nn.Module):
        def forward(self, x):
            return x.clone()


    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.empty_like(x)
            copy_kernel[(x.shape[0],)](x, out, x.shape[1], 64, num_warps=2)
            return out


    def get_inputs():
        return [torch.randn(M, N)]
''')


def test_candidates_and_correctness(tmp_path) -> None:
    grid_tiled = rewrite("block-size-warps", SCALE, "scale_kernel")
    assert [c.config for c in grid_tiled] == [
        {"BLOCK_SIZE": 1024, "num_warps": 4}, {"BLOCK_SIZE": 2048, "num_warps": 8},
        {"BLOCK_SIZE": 4096, "num_warps": 16},
    ]
    first = grid_tiled[0].source
    assert "grid = (triton.cdiv(x.numel(), 1024),)" in first
    # the draft's trailing comma is kept: a second argument appended at the same place still parses
    assert "scale_kernel[grid](x, out, x.numel(), BLOCK_SIZE=1024, num_warps=4,)" in first
    loop_tiled = rewrite("block-size-warps", ROWS, "copy_kernel")
    assert "copy_kernel[(x.shape[0],)](x, out, x.shape[1], 2048, num_warps=8)" in loop_tiled[1].source
    ascend = rewrite("block-size-warps", ROWS, "copy_kernel", target="ascend910b3")
    assert "num_warps=2" in ascend[0].source and ascend[0].config == {"BLOCK": 1024}
    check_correct(
        {"scale0": first, "scale2": grid_tiled[2].source, "rows1": loop_tiled[1].source, "orig": ROWS}, tmp_path
    )


def test_declines() -> None:
    assert "int literal" in declined("block-size-warps", SCALE.replace("BLOCK_SIZE=128,", "BLOCK_SIZE=B,"), "scale_kernel")
    big = SCALE.replace("BLOCK_SIZE=128,", "BLOCK_SIZE=4096,").replace("cdiv(x.numel(), 128)", "cdiv(x.numel(), 4096)")
    assert "already" in declined("block-size-warps", big, "scale_kernel")
    tuned = SCALE.replace("@triton.jit", "@triton.autotune(configs=[], key=['n'])\n@triton.jit")
    assert "autotuned" in declined("block-size-warps", tuned, "scale_kernel")


def test_a_launch_shared_by_two_kernels_is_left_alone() -> None:
    # `kernel = a if c else b; kernel[grid](...)`: new block sizes in that launch would reach the other kernel too
    other = (
        "@triton.jit\n"
        "def scale3_kernel(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)\n"
        "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 3.0, mask=offs < n)\n\n\n"
    )
    twin = SCALE.replace("class Model(", other + "class Model(", 1).replace(
        "        scale_kernel[grid](", "        kernel = scale_kernel if x.numel() > 0 else scale3_kernel\n        kernel[grid](")
    assert "        kernel[grid](" in twin and "def scale3_kernel" in twin
    assert "would change the others too" in declined("block-size-warps", twin, "scale_kernel")
