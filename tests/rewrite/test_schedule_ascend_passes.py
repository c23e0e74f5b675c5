"""The reduction split's launch-per-pass form on Ascend: launches order the passes, so nothing inside a launch
needs cross-core ordering (the last-slice form stays CUDA-only). Every launch's phase goes through triton-ascend
and BiSheng's HFusion+HIVM pipeline on the CPU, with PlanMemory's UB within the target's. No Ascend device
exists here: nothing is timed, and the atomics' behaviour on the AI cores is compiled, not run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from recipe_helpers import declined, rewrite
from test_schedules_reduce import CHANNEL_STATS_NESTED, COLUMN_STD_TWO_SUMS, COLUMN_VAR_TWO_PASS
from warm_runner import warm_runner

from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.server.engine.diagnose import analyze_document
from tritonlens.server.engine.optimize.ascend_compile import kernel_compile

pytestmark = pytest.mark.ascend_env
TARGET = "ascend910b3"


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRunner]:
    yield from warm_runner("ascend", tmp_path_factory, timeout_s=300)


@pytest.mark.parametrize("name", ["column_var_passes", "channel_stats"])
def test_every_phase_compiles_for_ascend(name: str, runner: LocalRunner, tmp_path: Path) -> None:
    source, kernel, phases = {"column_var_passes": (COLUMN_VAR_TWO_PASS, "colvar", 4),
                              "channel_stats": (CHANNEL_STATS_NESTED, "chan_norm", 3)}[name]
    candidate = rewrite("schedule-reduction-split", source, kernel, target=TARGET)[0]
    assert "launches" in candidate.title and "AI cores" in candidate.rationale
    path = tmp_path / f"{name}.py"
    path.write_text(candidate.source, encoding="utf-8")
    analysis = next(a for a in analyze_document(candidate.source, str(path), TARGET, runner) if a.kernel == kernel)
    assert len(analysis.variants) == phases and all(v.ok for v in analysis.variants), analysis.error
    record = kernel_compile(analysis, TARGET)
    assert record.compiled and record.ub_used_bytes and record.ub_used_bytes <= record.ub_capacity_bytes, record


def test_last_slice_form_stays_off_ascend() -> None:
    why = declined("schedule-reduction-split", COLUMN_STD_TWO_SUMS, "colstd", target=TARGET)
    assert "no Ascend device here can check" in why
