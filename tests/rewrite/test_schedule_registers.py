"""A schedule's kernel keeps the compiler's resources: compiled for sm_90 through the product's own compile path
(server.engine.diagnose on a local runner: Triton 3.6 and ptxas -v, on the CPU) at the task's real launch values
(dtypes and sizes from get_inputs()), the flash kernel spills no more registers than the draft it replaces.

Measured before the fix (H200): the flash schedule carried its K^T/V pointer tiles across the key loop, ptxas spilled
3,456 B at head dim 128 and the candidate ran at 0.14x of the draft."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from recipe_helpers import rewrite
from test_schedules_reduce import (
    CHANNEL_STATS_NESTED,
    COLUMN_SCALAR_FP16,
    COLUMN_STD_DEAD_START,
    COLUMN_VAR_TWO_PASS,
    ROW_MEAN_FP16,
)
from warm_runner import warm_runner

from tritonlens.analysis.compiler.variants import variant_guesses
from tritonlens.analysis.kernels import parse_module
from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.server.engine.diagnose import analyze_document
from tritonlens.server.engine.optimize.gate import compile_facts

pytestmark = pytest.mark.cuda_env
BENCH = Path(__file__).resolve().parents[2] / "bench"
TASKS = (  # flash drafts of the tuning sets: head dims 64 to 256, causal and not, fp16 and bf16
    "blind2/attention/causal_attention_hd128_fp16.py",
    "blind2/attention/attention_hd64_bf16.py",
    "blind/attention/causal_attention_hd64.py",
    "blind/attention/attention_hd128.py",
    # head dims padded to a power of two and masked, flag-guarded upcasts, grouped K/V heads (blind set 6, tuning)
    "blind6/attention/attention_hd256_fp16.py",
    "blind6/attention/causal_attention_hd80_bf16.py",
    "blind6/attention/gqa_attention_noncausal_bf16.py",
    "blind6/attention/causal_attention_softcap_fp16.py",  # a soft cap on the scores, carried
)


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRunner]:
    yield from warm_runner("cuda", tmp_path_factory, timeout_s=300)


def _compiled(text: str, path: str, kernel: str, runner: LocalRunner, flags: frozenset[str] = frozenset()) -> dict:
    analysis = next(a for a in analyze_document(text, path, "sm_90", runner) if a.kernel == kernel)
    assert analysis.primary is not None, analysis.error
    guessed = set(variant_guesses(analysis.primary.specialization)) - flags
    assert not guessed, "the launch values should come from get_inputs()"
    facts = compile_facts(analysis)
    assert facts["registers"], facts
    return facts


@pytest.mark.parametrize("task", TASKS)
def test_flash_kernel_spills_no_more_than_the_draft(task: str, runner: LocalRunner) -> None:
    path = BENCH / task
    text = path.read_text(encoding="utf-8")
    kernel = next(k.name for k in parse_module(text).kernels if k.launched)
    candidate = rewrite("schedule-attention-flash", text, kernel)[0].source
    # a flag read from the environment at import (the interpreter's upcast) is a named guess; every size is not
    flags = frozenset({"causal_attention_hd80_bf16.py": "DOT_FP32", "gqa_attention_noncausal_bf16.py": "UPCAST_DOT"}
                      .get(Path(task).name, "").split() or ())
    draft = _compiled(text, str(path), kernel, runner, flags)
    flash = _compiled(candidate, str(path), kernel, runner, flags)
    assert int(flash["spill_stores"] or 0) <= int(draft["spill_stores"] or 0), (draft, flash)


@pytest.mark.parametrize("name", ["column_min_fp16", "row_mean_fp16"])
def test_reduction_split_of_fp16_outputs_compiles(name: str, runner: LocalRunner, tmp_path: Path) -> None:
    # Triton has no fp16 atomic min: the split's slices combine in an fp32 buffer (the H200 run of blind set 3
    # saw this schedule's candidate fail to compile on an fp16 output); a row mean cast to fp16 in the kernel adds
    # into that fp32 buffer
    source, kernel = {"column_min_fp16": (COLUMN_SCALAR_FP16, "colmin"), "row_mean_fp16": (ROW_MEAN_FP16, "row_mean")}[name]
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    candidate = rewrite("schedule-reduction-split", source, kernel)[0].source
    _compiled(candidate, str(path), kernel, runner)


SPLITS = (  # tuning drafts whose splits combine through a workspace (the last slice, or a launch per pass, finishes)
    ("blind5/reduction/column_std_fp16.py", "schedule-reduction-split", None),  # two sums, sqrt epilogue
    ("blind4/reduction/column_mean_var_fp32.py", "schedule-reduction-split", None),  # 2-D partials, 3 launches
    ("blind5/matmul/matmul_large_k_fp16.py", "schedule-dot-tiles", (4, 4)),  # split-K: 16 programs profiled
)


@pytest.mark.parametrize("task,schedule,grid", SPLITS)
def test_split_combine_compiles_without_spills(task: str, schedule: str, grid: tuple | None,
                                               runner: LocalRunner) -> None:
    # relaxed atomics into the workspace, the barrier, the acquire-release arrival counter and the .cg reloads
    # go through Triton's sm_90 pipeline at the task's real launch values
    path = BENCH / task
    text = path.read_text(encoding="utf-8")
    kernel = next(k.name for k in parse_module(text).kernels if k.launched)
    candidate = next(c for c in rewrite(schedule, text, kernel, grid=grid)
                     if "the last slice finishes" in c.title or "launches" in c.title or "split-K" in c.title)
    facts = _compiled(candidate.source, str(path), kernel, runner)
    assert not int(facts["spill_stores"] or 0), facts


@pytest.mark.parametrize("name", ["column_var_passes", "channel_stats"])
def test_launch_per_pass_compiles_every_phase(name: str, runner: LocalRunner, tmp_path: Path) -> None:
    # a kernel split into one launch per reduction pass: each launch passes its PHASE as a literal, so levels 2-4
    # see every phase as a launch of its own (no guessed value) and each compiles for sm_90 without spilling
    source, kernel, phases = {"column_var_passes": (COLUMN_VAR_TWO_PASS, "colvar", 4),
                              "channel_stats": (CHANNEL_STATS_NESTED, "chan_norm", 3)}[name]
    candidate = rewrite("schedule-reduction-split", source, kernel)[0].source
    path = tmp_path / f"{name}.py"
    path.write_text(candidate, encoding="utf-8")
    analysis = next(a for a in analyze_document(candidate, str(path), "sm_90", runner) if a.kernel == kernel)
    assert len(analysis.variants) == phases and all(v.ok for v in analysis.variants), analysis.error
    for v in analysis.variants:
        assert not variant_guesses(v.specialization), v.specialization
        assert not int(v.resources["spill_stores"] or 0), v.resources


def test_last_slice_form_compiles_after_a_dead_start(runner: LocalRunner, tmp_path: Path) -> None:
    # `mean = 0` before the loop and `mean = s / rows` in the rest: under the last slice's runtime `if`, Triton
    # refused to merge int32 with fp32 (found on microsoft/DeepSpeed's LayerNorm); the dead start is dropped
    candidate = rewrite("schedule-reduction-split", COLUMN_STD_DEAD_START, "colstd")[0].source
    path = tmp_path / "colstd.py"
    path.write_text(candidate, encoding="utf-8")
    _compiled(candidate, str(path), "colstd", runner)
