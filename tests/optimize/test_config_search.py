"""Config search compiles every move first and prunes by what the compiler reports (spills here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tritonlens.analysis.kernels import parse_module
from tritonlens.analysis.rewrite.model import RecipeContext
from tritonlens.server.engine.optimize.config_search import ConfigSearch

pytestmark = pytest.mark.cuda_env
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "optimize" / "kb_tile.py"


def test_moves_that_spill_are_pruned_before_timing(runner):
    source = FIXTURE.read_text()
    ctx = RecipeContext(
        source=source, path=str(FIXTURE), kernel="tile_sum_kernel", module=parse_module(source)
    )
    search = ConfigSearch(runner, "sm_90", backend="cuda", max_survivors=20)
    survivors, pruned = search.search(ctx)
    reasons = {p.move: p.reason for p in pruned}
    # a 256x256 fp32 tile cannot live in registers: the compile result says so and the move is never timed
    assert "spills" in reasons["tile_sum_kernel.BLOCK: 64 -> 256"]
    assert "(compile result)" in reasons["tile_sum_kernel.BLOCK: 64 -> 256"]
    titles = [c.title for c in survivors]
    assert "config: tile_sum_kernel.BLOCK: 64 -> 32" in titles
    assert not any("64 -> 256" in t for t in titles)
    for cand in survivors:
        assert cand.origin == "config" and cand.config and "registers" in cand.rationale
        compile(cand.source, "candidate", "exec")
    moved = next(c for c in survivors if c.title == "config: tile_sum_kernel.BLOCK: 64 -> 32")
    assert "triton.cdiv(n, 32)" in moved.source and "BLOCK=32" in moved.source  # grid moved with the block


def test_interpret_backend_proposes_nothing_and_says_why(runner):
    source = FIXTURE.read_text()
    ctx = RecipeContext(
        source=source, path=str(FIXTURE), kernel="tile_sum_kernel", module=parse_module(source)
    )
    search = ConfigSearch(runner, "sm_90", backend="interpret")
    assert search.propose(ctx, []) == []
    assert "timings mean something" in search.declined[0].reason
