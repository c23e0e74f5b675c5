"""exp2-transcendentals: tl.exp / tl.log through the base-2 functions."""

from __future__ import annotations

from recipe_helpers import check_correct, declined, rewrite, task

LSE = task('''
    M = 8
    N = 300
    TEST_SHAPES = [{"M": 4, "N": 64}, {"M": 3, "N": 45}]


    @triton.jit
    def lse_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=-float("inf"))
        m = tl.max(x, axis=0)
        s = tl.sum(tl.exp(x - m), axis=0)
        tl.store(out_ptr + row, m + tl.log(s))


    class Model(nn.Module):
        def forward(self, x):
            return torch.logsumexp(x, dim=1)


    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.empty(x.shape[0])
            lse_kernel[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
            return out


    def get_inputs():
        return [torch.randn(M, N)]
''')


def test_rewrite_and_correctness(tmp_path) -> None:
    new = rewrite("exp2-transcendentals", LSE, "lse_kernel")[0].source
    assert "tl.exp2((x - m) * 1.4426950408889634)" in new
    assert "m + (tl.log2(s) * 0.6931471805599453)" in new
    check_correct({"orig": LSE, "rewritten": new}, tmp_path)


def test_declines_without_exp_or_log() -> None:
    source = LSE.replace("tl.exp(x - m)", "x - m").replace("tl.log(s)", "s")
    assert "no tl.exp" in declined("exp2-transcendentals", source, "lse_kernel")
