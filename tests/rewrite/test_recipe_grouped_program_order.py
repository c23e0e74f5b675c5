"""grouped-program-order: 2D program ids recomputed in groups (a bijection on the same grid)."""

from __future__ import annotations

from pathlib import Path

from recipe_helpers import check_correct, declined, rewrite

ROOT = Path(__file__).resolve().parents[2]
MATMUL = (ROOT / "bench" / "matmul" / "matmul.py").read_text(encoding="utf-8")
TRANSPOSE = (ROOT / "bench" / "transpose" / "transpose.py").read_text(encoding="utf-8")


def test_rewrite_and_correctness(tmp_path) -> None:
    new = rewrite("grouped-program-order", MATMUL, "matmul_kernel")[0].source
    assert "    pid_m = first_pid_m + (pid_linear % group_span) % group_pid_m\n" in new
    assert "    pid_n = (pid_linear % group_span) // group_pid_m\n" in new
    assert new.count("tl.program_id(") == 2  # only in the linear id
    # the test shapes give grids of 2x2 and 2x2 with partial tiles; a taller grid checks the group tail
    tall = new.replace('TEST_SHAPES = [{"M": 64, "N": 64, "K": 32}, {"M": 50, "N": 37, "K": 29}]',
                       'TEST_SHAPES = [{"M": 330, "N": 40, "K": 8}, {"M": 50, "N": 37, "K": 29}]')
    check_correct({"grouped": new, "tall": tall}, tmp_path)


def test_declines() -> None:
    assert "program order does not matter" in declined("grouped-program-order", TRANSPOSE, "transpose_kernel")
    one_axis = MATMUL.replace("pid_n = tl.program_id(1)", "pid_n = tl.program_id(0) * 0")
    assert "adjacent" in declined("grouped-program-order", one_axis, "matmul_kernel")
