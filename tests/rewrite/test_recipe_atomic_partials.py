"""atomic-partials: a single-address atomic per program becomes a partials buffer summed by the wrapper."""

from __future__ import annotations

from pathlib import Path

from recipe_helpers import check_correct, declined, rewrite, task

ROOT = Path(__file__).resolve().parents[2]
XENT = (ROOT / "bench" / "loss" / "cross_entropy.py").read_text(encoding="utf-8")

TOTAL_2D = task('''
    M = 8
    N = 64
    TEST_SHAPES = [{"M": 6, "N": 40}, {"M": 5, "N": 33}]


    @triton.jit
    def total_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        if row < n_rows:
            tl.atomic_add(out_ptr, tl.sum(x, axis=0))


    class Model(nn.Module):
        def forward(self, x):
            return x.sum().reshape(1) + 1.0


    class ModelNew(nn.Module):
        def forward(self, x):
            out = torch.ones(1)
            grid = (x.shape[0], triton.cdiv(x.shape[1], 16))
            total_kernel[grid](x, out, x.shape[0], x.shape[1], BLOCK=16)
            return out


    def get_inputs():
        return [torch.randn(M, N)]
''')


def test_rewrites_and_correctness(tmp_path) -> None:
    xent = rewrite("atomic-partials", XENT, "cross_entropy_kernel")[0].source
    assert "tl.store(loss_ptr + tl.program_id(0), loss / n_rows)" in xent
    assert "loss_partials = torch.zeros((n_rows), dtype=loss.dtype, device=loss.device)\n" in xent
    assert "loss.view(-1)[0] += loss_partials.sum()\n        return loss[0]" in xent
    two_d = rewrite("atomic-partials", TOTAL_2D, "total_kernel")[0].source
    assert "tl.store(out_ptr + tl.program_id(0) + tl.program_id(1) * tl.num_programs(0), tl.sum(x, axis=0))" in two_d
    # the output starts at 1.0: the partials are added to it, not written over it
    check_correct({"xent": xent, "two_d": two_d}, tmp_path)


def test_declines() -> None:
    in_loop = TOTAL_2D.replace("    if row < n_rows:\n", "    for _ in range(2):\n")
    assert "inside a loop" in declined("atomic-partials", in_loop, "total_kernel")
    used = TOTAL_2D.replace("x = tl.load(x_ptr", "x = tl.load(out_ptr * 0 + x_ptr")
    assert "used elsewhere" in declined("atomic-partials", used, "total_kernel")
    no_launch = TOTAL_2D.replace("total_kernel[grid](x, out, x.shape[0], x.shape[1], BLOCK=16)", "pass")
    assert "no launch" in declined("atomic-partials", no_launch, "total_kernel")
