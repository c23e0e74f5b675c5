"""The verification gate on the interpret backend (CPU): each kind of bad candidate is rejected at its stage with
its reason; a correct one is accepted as verified-correct only, never as faster."""

from __future__ import annotations

from pathlib import Path

import pytest

from tritonlens.analysis.rewrite.model import Candidate
from tritonlens.server.engine.optimize.gate import Gate, GateConfig
from tritonlens.server.engine.optimize.shapes import plan_shapes

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "optimize"

pytestmark = pytest.mark.cuda_env

PATH = str(FIXTURES / "kb_scale.py")
SOURCE = (FIXTURES / "kb_scale.py").read_text()
STORE = "x * 2.0 + 1.0, mask=mask)"


def candidate(text: str, title: str = "t") -> Candidate:
    assert text != SOURCE
    return Candidate(
        source=text, origin="recipe", producer="test", kernel="scale_kernel", title=title, rationale=""
    )


def gate(runner, backend: str = "interpret") -> Gate:
    return Gate(runner, GateConfig(backend=backend, target="sm_90", seeds=(0, 1)), plan_shapes(SOURCE), PATH)


BAD = {
    "wrong": (SOURCE.replace(STORE, "x * 2.001 + 1.0, mask=mask)"), "correctness", "outside atol"),
    "not compiling": (
        SOURCE.replace(STORE, "tl.no_such_op(x), mask=mask)"),
        "compile",
        "does not compile for sm_90",
    ),
    "syntax": (SOURCE.replace("def scale_kernel(", "def scale_kernel(("), "compile", "syntax error"),
    "nan": (SOURCE.replace(STORE, "x * 2.0 + tl.sqrt(-1.0 - x * x), mask=mask)"), "correctness", "NaN"),
    # a grid sized for the searched shape (N=1000) only: correct there, elements beyond 1024 never written
    "shape-overfit": (
        SOURCE.replace("scale_kernel[(triton.cdiv(n, BLOCK),)]", "scale_kernel[(triton.cdiv(1000, BLOCK),)]"),
        "unseen-shape",
        "held out",
    ),
    # a candidate that edits the reference to agree with its own wrong answer is still compared with the original
    "moved reference": (
        SOURCE.replace(STORE, "x * 3.0 + 1.0, mask=mask)").replace(
            "return x * 2.0 + 1.0", "return x * 3.0 + 1.0"
        ),
        "correctness",
        "outside atol",
    ),
}


@pytest.mark.parametrize("name", list(BAD))
def test_gate_rejects_with_stage_and_reason(runner, name):
    text, stage, reason = BAD[name]
    verdict = gate(runner).check(SOURCE, candidate(text, name)).verdict
    assert not verdict.accepted
    assert verdict.stage == stage, verdict.reason
    assert reason in verdict.reason


def test_correct_candidate_is_verified_but_never_claimed_faster_under_interpret(runner):
    text = SOURCE.replace("BLOCK = 64", "BLOCK = 256")
    verdict = gate(runner).check(SOURCE, candidate(text)).verdict
    assert verdict.accepted and verdict.stage == "", verdict.reason
    assert verdict.speedup is None and verdict.details["faster"] is False
    assert "not timed" in verdict.reason and "correct on 2 shape(s) x 2 seed(s)" in verdict.reason
    checks = verdict.details["checks"]
    assert {c["shape"] for c in checks} == {"1000", "1537"}
    assert [c["held_out"] for c in checks if c["shape"] == "1537"] == [True, True]
    # every check names the bound it was held to; an elementwise kernel sums nothing (K=1): the float32 floor
    assert all(c["tolerance"]["atol"] == 1e-4 and "float32, K=1" in c["tolerance"]["basis"] for c in checks)
    assert all(c["reference"] == "float64" for c in checks)
    assert "within atol 0.0001 rtol 0.0001 (float32, K=1" in verdict.reason


def _timed_reply(baseline: list[float], cand: list[float]) -> dict:
    checks = [{"seed": 0, "passed": True, "max_abs": 1e-6, "shape": "1000", "held_out": False}]
    return {
        "ok": True,
        "result": {
            "ok": True,
            "passed": True,
            "checks": checks,
            "timing_meaningful": True,
            "timing": {"baseline_ms": baseline, "candidate_ms": cand, "device": {"name": "NVIDIA H200"}},
        },
    }


def test_timed_verdicts_slower_than_noise_rejected_real_gain_accepted():
    """The timing decision on a timed backend's reply (the numbers a GPU runner returns), without a GPU."""
    g = Gate(None, GateConfig(backend="cuda"), plan_shapes(SOURCE), PATH)
    c = candidate(SOURCE.replace("BLOCK = 64", "BLOCK = 128"))
    noise = g.judge_reply(c, _timed_reply([1.0, 1.06, 0.97, 1.04], [1.0, 1.01, 0.99, 1.0]), {})
    assert not noise.accepted and noise.stage == "timing" and "inside run-to-run noise" in noise.reason
    slower = g.judge_reply(c, _timed_reply([1.0, 1.0, 1.0], [1.3, 1.3, 1.31]), {})
    assert not slower.accepted and slower.stage == "timing" and slower.reason.startswith("slower")
    good = g.judge_reply(c, _timed_reply([2.0, 2.02, 2.01], [1.0, 1.0, 1.01]), {})
    assert good.accepted and good.speedup == pytest.approx(2.0, rel=0.02) and good.spread is not None
    assert good.details["faster"] and good.details["device"] == "NVIDIA H200"


def test_later_rounds_still_compare_with_the_original_reference(runner):
    """Round 2 times against round 1's text; the reference Model still comes from the original file."""
    moved = BAD["moved reference"][0]  # its Model agrees with its own wrong kernel
    config = GateConfig(backend="interpret", target="sm_90", seeds=(0,), compile_check=False)
    g = Gate(runner, config, plan_shapes(SOURCE), PATH, reference_source=SOURCE)
    cand = candidate(moved.replace("BLOCK = 64", "BLOCK = 128"))
    verdict = g.check(moved, cand).verdict  # baseline: the (hypothetically applied) moved text
    assert not verdict.accepted and verdict.stage == "correctness" and "outside atol" in verdict.reason


def _killed_reply(budget_s: float) -> dict:
    reason = f"the candidate ran past its budget of {budget_s:g} s and was killed (with every process it started)"
    checks = [{"seed": -1, "shape": "all shapes", "held_out": False, "passed": False, "reason": reason}]
    return {"ok": True, "result": {"ok": True, "passed": False, "checks": checks, "timed_out_s": budget_s}}


def test_a_candidate_cut_by_the_optimize_budget_is_not_rejected_as_wrong():
    """Killed at the seconds the optimize budget had left: no verdict on it (stage budget); killed at the gate's own
    timeout: the candidate hung, a correctness failure."""
    g = Gate(None, GateConfig(backend="cuda"), plan_shapes(SOURCE), PATH)
    c = candidate(SOURCE.replace("BLOCK = 64", "BLOCK = 128"))
    cut = g.judge_reply(c, _killed_reply(5.0), {}, budget_cut_s=5.0)
    assert not cut.accepted and cut.stage == "budget" and "no verdict on the candidate" in cut.reason
    hung = g.judge_reply(c, _killed_reply(600.0), {})
    assert not hung.accepted and hung.stage == "correctness" and "ran past its budget of 600 s" in hung.reason


def test_a_device_wait_is_carried_from_our_candidates_only():
    """The worker's device_wait_s (waits for other jobs' holds on a shared device) leaves the optimize budget; an
    LLM's candidate runs code that could claim any wait, so its report is dropped."""
    import dataclasses

    g = Gate(None, GateConfig(backend="cuda"), plan_shapes(SOURCE), PATH)
    reply = _timed_reply([2.0, 2.02, 2.01], [1.0, 1.0, 1.01])
    reply["result"]["device_wait_s"] = 12.5
    ours = candidate(SOURCE.replace("BLOCK = 64", "BLOCK = 128"))
    assert g.judge_reply(ours, reply, {}).details["device_wait_s"] == 12.5
    llm = dataclasses.replace(ours, origin="llm")
    assert "device_wait_s" not in g.judge_reply(llm, reply, {}).details


def test_a_candidate_that_spills_far_more_than_the_original_is_rejected_at_its_compile(runner):
    # a 256x256 fp32 register tile: far past the register file, the sm_90 compile reports 17 KB of spills
    path = FIXTURES / "kb_tile.py"
    source = path.read_text()
    launch = "cdiv(n, 64),)](x, out, n, BLOCK=64)"
    g = Gate(runner, GateConfig(backend="interpret", target="sm_90", seeds=(0,)), plan_shapes(source), str(path),
             reference_source=source)

    def tile(block: int) -> Candidate:
        text = source.replace(launch, f"cdiv(n, {block}),)](x, out, n, BLOCK={block})")
        return Candidate(source=text, origin="recipe", producer="test", kernel="tile_sum_kernel", title="t",
                         rationale="")

    verdict = g.check(source, tile(256)).verdict
    assert not verdict.accepted and verdict.stage == "compile", verdict.reason
    assert "spills" in verdict.reason and "(the original: 0)" in verdict.reason
    assert g.check(source, tile(128)).verdict.stage != "compile"  # a few hundred bytes: verified as usual
