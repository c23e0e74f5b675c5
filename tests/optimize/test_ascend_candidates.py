"""Every candidate for an Ascend target goes through triton-ascend and BiSheng's pipeline on the CPU (real
bishengir-compile output): its verdict carries compiled-or-not, PlanMemory's UB bytes against the target's UB and
the TL4xx change; a UB overflow is rejected at "compile"; the stop before hivmc (no CANN) is not a failure. The
same record shows in the optimize report, the bench table and the editor's hover. Nothing is timed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tritonlens.analysis.core.findings import Finding, Severity, Span
from tritonlens.analysis.rewrite.model import Candidate
from tritonlens.analysis.specialize.variant import Specialization
from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.ascend_runner.environments import EnvironmentUnavailable, find_environment
from tritonlens.ascend_runner.protocol import StageError
from tritonlens.server.engine.bench.summary import to_markdown as bench_markdown
from tritonlens.server.engine.diagnose.result import KernelAnalysis, VariantResult
from tritonlens.server.engine.optimize import report
from tritonlens.server.engine.optimize.ascend_compile import NO_DEVICE, ascend_compile, tally
from tritonlens.server.engine.optimize.gate import Gate, GateConfig
from tritonlens.server.engine.optimize.loop import OptimizeResult, Step
from tritonlens.server.engine.optimize.shapes import plan_shapes
from tritonlens.server.features.optimize_present import Offer, action_title, hover_record

ROOT = Path(__file__).resolve().parents[1]
PATH = str(ROOT / "fixtures" / "optimize" / "kb_scale.py")
SOURCE = Path(PATH).read_text()
HIVM = ROOT / "fixtures" / "ascend" / "hivm"
TARGET = "ascend910b3"
UB_BYTES = 192 * 1024  # Ascend910B3's Unified Buffer


def with_block(block: int) -> Candidate:
    text = SOURCE.replace("BLOCK = 64", f"BLOCK = {block}")
    assert text != SOURCE
    return Candidate(source=text, origin="recipe", producer="test", kernel="scale_kernel",
                     title=f"BLOCK {block}", rationale="")


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRunner]:
    for env in ("cuda", "ascend"):  # cuda: the interpret backend verifies; ascend: triton-ascend + bishengir
        try:
            find_environment(env)
        except EnvironmentUnavailable as exc:
            pytest.skip(f"{env} runner environment missing: {exc}")
    with LocalRunner({"cache_dir": str(tmp_path_factory.mktemp("ascend-cands")), "workers": 1,
                      "timeout_s": 180}) as r:
        yield r


@pytest.fixture(scope="module")
def verdicts(runner: LocalRunner) -> dict[str, Step]:
    """Two candidates of one gate: a block that fits the UB and one that cannot (1 MiB of fp32 per load)."""
    gate = Gate(runner, GateConfig(backend="interpret", target=TARGET, seeds=(0,)), plan_shapes(SOURCE), PATH,
                reference_source=SOURCE)
    out = {}
    for name, block in (("fits", 1024), ("overflows", 262144)):
        cand = with_block(block)
        out[name] = Step(cand, gate.check(SOURCE, cand).verdict, 1)
    return out


@pytest.mark.cuda_env
@pytest.mark.ascend_env
def test_a_fitting_candidate_is_compiled_through_bisheng_with_its_ub_use(verdicts: dict[str, Step]) -> None:
    v = verdicts["fits"].verdict
    assert v.accepted, v.reason
    assert not v.details.get("faster") and v.speedup is None  # nothing timed, nothing claimed
    assert NO_DEVICE in v.reason
    (k,) = v.details["ascend"]["kernels"]
    assert k["kernel"] == "scale_kernel" and k["compiled"] is True
    assert k["stage"] == "hivmc" and "not a failure" in k["reason"]  # the stop before hivmc is the expected end
    assert k["ub_capacity_bytes"] == UB_BYTES  # as the compiler's target spec states it
    # PlanMemory's plan: at least the 4 KiB x tile, well inside the UB
    assert 1024 * 4 <= k["ub_used_bytes"] < UB_BYTES
    assert v.details["checks"]  # the correctness check ran beside it


@pytest.mark.cuda_env
@pytest.mark.ascend_env
def test_a_tile_too_large_for_the_ub_is_rejected_at_compile(verdicts: dict[str, Step]) -> None:
    v = verdicts["overflows"].verdict
    assert not v.accepted and v.stage == "compile"
    assert "ub overflow" in v.reason and "does not fit the ascend910b3 UB" in v.reason
    (k,) = v.details["ascend"]["kernels"]
    assert k["ub_feasible"] is False and k["compiled"] is False
    assert k["ub_used_bytes"] > k["ub_capacity_bytes"] == UB_BYTES  # the compiler's requirement vs capacity
    assert "checks" not in v.details  # rejected before anything ran


@pytest.mark.cuda_env
@pytest.mark.ascend_env
def test_report_bench_and_hover_show_the_same_record(verdicts: dict[str, Step]) -> None:
    fits, overflows = verdicts["fits"], verdicts["overflows"]
    result = OptimizeResult(PATH, SOURCE, fits.candidate.source, "interpret", TARGET, shapes=plan_shapes(SOURCE),
                            offered=[fits], rejected=[overflows])
    md = report.to_markdown(result)
    used = fits.verdict.details["ascend"]["kernels"][0]["ub_used_bytes"]
    assert f"PlanMemory planned {used} B" in md and "ub overflow" in md and NO_DEVICE in md
    json.dumps(report.to_dict(result))  # the record is plain data
    cell = tally(None, [fits.to_dict(), overflows.to_dict()]).cell()
    assert "1 compiled, 1 rejected" in cell
    table = bench_markdown({k: None for k in SUMMARY_KEYS} | {"tasks": 1, "timed": 0, "errors": 0},
                           [{"task": "kb_scale", "ascend": cell}], {})
    assert "Ascend compile (BiSheng on the CPU" in table and cell in table
    offer = Offer(fits.candidate.id, fits.candidate, fits.verdict, False, False)
    hover = hover_record(offer, result)
    assert f"PlanMemory planned {used} B" in hover and NO_DEVICE in hover
    assert "Ascend UB" in action_title(offer, "N=4096")


SUMMARY_KEYS = ("geomean_speedup", "median_speedup", "above_2x", "above_5x", "slower_than_initial",
                "geomean_vs_eager", "geomean_vs_compile", "at_least_compile", "compile_measured",
                "median_roofline_after", "accepted_correct_on_unseen", "wins_by_level", "wins_by_producer")


# -- the record itself, over recorded compiler output (no compile here) -----------------------------------------
def spec() -> Specialization:
    return Specialization("k", "defaults", {}, {}, (), {}, {})


def analysis_from(fixture: str, findings: tuple[str, ...] = ()) -> KernelAnalysis:
    data = json.loads((HIVM / f"{fixture}-{TARGET}.json").read_text())
    stages = {p.name[len(f"{fixture}-{TARGET}."):]: p.read_text() for p in HIVM.glob(f"{fixture}-{TARGET}.*")
              if not p.name.endswith(".json")}
    variant = VariantResult(spec(), bool(data["ok"]), stages=stages, metadata=data["metadata"],
                            errors=[StageError(**e) for e in data["errors"]])
    found = [Finding(code, "m", Span(1, 0, 1, 1), Severity.WARNING, kernel="k") for code in findings]
    return KernelAnalysis("k", PATH, TARGET, findings=found, variants=[variant])


def test_the_hivmc_stop_is_the_expected_end_not_a_failure() -> None:
    record = ascend_compile([analysis_from("persistent_add")], TARGET)
    (k,) = record.kernels
    assert k.compiled is True and k.stage == "hivmc" and record.rejection() is None
    assert k.ub_used_bytes and k.ub_used_bytes < UB_BYTES


def test_a_recorded_overflow_rejects_with_the_compilers_numbers() -> None:
    record = ascend_compile([analysis_from("ub_overflow")], TARGET)
    (k,) = record.kernels
    assert (k.ub_used_bytes, k.ub_capacity_bytes) == (4194304 // 8, 1572864 // 8)
    assert "ub overflow: requires 4194304 bits while 1572864 bits available" in (record.rejection() or "")


def test_a_missing_api_is_named_and_other_stops_reject() -> None:
    message = "AttributeError: module 'triton.language' has no attribute 'gather'"
    variant = VariantResult(spec(), False, errors=[StageError("frontend", message, 7)])
    record = ascend_compile([KernelAnalysis("k", PATH, TARGET, variants=[variant])], TARGET)
    assert "`triton.language.gather`, which the installed triton-ascend lacks (line 7)" in (record.rejection() or "")
    hivm_failed = VariantResult(spec(), True, metadata={"hivm": {"status": "failed"}},
                                errors=[StageError("hivm", "bishengir-compile: error: 'hivm.vadd' op invalid")])
    record = ascend_compile([KernelAnalysis("k", PATH, TARGET, variants=[hivm_failed])], TARGET)
    assert "op invalid" in (record.rejection() or "")
    no_compiler = VariantResult(spec(), True,
                                metadata={"hivm": {"status": "unavailable", "message": "bishengir-compile not found"}})
    record = ascend_compile([KernelAnalysis("k", PATH, TARGET, variants=[no_compiler])], TARGET)
    assert record.rejection() is None and record.kernels[0].compiled is None  # undecided, said, not rejected
    assert "bishengir-compile not found" in record.kernels[0].reason


def test_tl4xx_findings_gained_and_lost_against_the_original() -> None:
    original = ascend_compile([analysis_from("persistent_add", ("TL404",))], TARGET)
    record = ascend_compile([analysis_from("persistent_add", ("TL409",))], TARGET, original)
    assert record.gained == ("TL409 (k)",) and record.lost == ("TL404 (k)",)
