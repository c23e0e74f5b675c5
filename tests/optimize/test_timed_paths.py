"""The timed paths without a GPU: the worker's interleaved timing (host clock standing in for the device), and the
loop's chaining on a timed backend (a scripted runner standing in for the GPU: its "times" are a stated formula,
so only the loop's decisions are under test, never a speed)."""

from __future__ import annotations

import json
import re
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tritonlens.analysis.rewrite.model import Candidate, RecipeContext, Verdict
from tritonlens.ascend_runner.protocol import VerifyRequest
from tritonlens.server.engine.optimize.gate import GateConfig
from tritonlens.server.engine.optimize.loop import Budget, OptimizeOptions, optimize_source

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "optimize" / "kb_scale.py"
PYTHON = ROOT / ".envs" / "cuda" / "bin" / "python"

SCRIPT = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from harness_backend import InterpretBackend, interpret_mode
    from verify_job import verify_job

    class HostTimed(InterpretBackend):
        timing_meaningful = True  # exercises the timed path; the numbers mean nothing

    payload = json.loads(sys.stdin.read())
    with interpret_mode(True):
        print(json.dumps(verify_job(HostTimed(), payload), default=str))
    """
)


@pytest.mark.cuda_env
@pytest.mark.skipif(not PYTHON.exists(), reason="cuda runner env (.envs/cuda) not installed")
def test_worker_interleaves_baseline_and_candidate_and_checks_the_timing_shape():
    source = FIXTURE.read_text()
    payload = {
        "harness": {
            "mode": "kernelbench",
            "path": str(FIXTURE),
            "source": source.replace("BLOCK = 64", "BLOCK = 256"),
        },
        "seeds": [0],
        "shapes": [{"label": "1000", "overrides": {"N": 1000}}],
        "baseline_source": source,
        "interleave": {"repeats": 3, "overrides": {"N": 700}, "label": "700"},
        "timing": {"warmup_ms": 1, "rep_ms": 1},
    }
    proc = subprocess.run(
        [str(PYTHON), "-c", SCRIPT, str(ROOT / "ascend_runner" / "worker")],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = json.loads(proc.stdout)
    assert out["passed"], out
    assert [c["shape"] for c in out["checks"]] == ["1000", "700"]  # correctness at the timing shape too
    timing = out["timing"]
    assert timing["repeats"] == 3 and len(timing["baseline_ms"]) == len(timing["candidate_ms"]) == 3
    assert timing["overrides"] == {"N": 700} and out["speedup"] is not None


class ScriptedRunner:
    """Stands in for a GPU runner: every candidate passes correctness and 'takes' 64/BLOCK ms (a formula)."""

    def __init__(self) -> None:
        self.verified: list[str] = []

    def verify(self, backend: str, payload: VerifyRequest, **_: Any) -> dict[str, Any]:
        def ms(text: str) -> float:
            return 64 / int(re.search(r"BLOCK = (\d+)", text).group(1))

        base, cand = ms(payload.baseline_source), ms(payload.harness.source)
        self.verified.append(payload.harness.source)
        checks = [
            {"seed": 0, "passed": True, "max_abs": 0.0, "shape": s["label"], "held_out": s["held_out"]}
            for s in payload.shapes
        ]
        result = {
            "ok": True,
            "passed": True,
            "checks": checks,
            "timing_meaningful": True,
            "timing": {"baseline_ms": [base] * 4, "candidate_ms": [cand] * 4, "device": {"name": "scripted"}},
        }
        return {"ok": True, "result": result}


class Doubler:
    name = "doubler"

    def propose(self, ctx: RecipeContext, feedback: list[Verdict]) -> list[Candidate]:
        block = int(re.search(r"BLOCK = (\d+)", ctx.source).group(1))
        return [
            Candidate(
                ctx.source.replace(f"BLOCK = {block}", f"BLOCK = {block * f}"),
                "config",
                "doubler",
                ctx.kernel,
                f"BLOCK {block * f}",
                "",
                (),
                4,
            )
            for f in (2, 4)
        ]


def test_loop_applies_the_fastest_each_round_and_measures_the_chain(monkeypatch):
    from tritonlens.server.engine.optimize import loop

    monkeypatch.setattr(loop, "collect", lambda *a, **k: loop.Evidence())  # no compile/profile in this test
    runner = ScriptedRunner()
    options = OptimizeOptions(
        backend="cuda",
        budget=Budget(candidates=10, rounds=2),
        gate=GateConfig(backend="cuda", compile_check=False),
        profile=False,
    )
    source = FIXTURE.read_text()
    result = optimize_source(source, str(FIXTURE), runner, options, [Doubler()])
    assert [s.candidate.title for s in result.applied] == [
        "BLOCK 256",
        "BLOCK 1024",
    ]  # x4 twice, each the best
    assert "BLOCK = 1024" in result.final
    assert [s.candidate.title for s in result.offered] == ["BLOCK 128", "BLOCK 512"]
    assert result.overall is not None and result.overall.accepted
    assert result.overall.speedup == pytest.approx(16.0)
    assert runner.verified[-1] == result.final  # the chain was measured against the original once more


class Halver:
    """A 'recipe' whose one candidate is slower under the scripted formula (BLOCK / 2)."""

    name = "halver"

    def propose(self, ctx: RecipeContext, feedback: list[Verdict]) -> list[Candidate]:
        block = int(re.search(r"BLOCK = (\d+)", ctx.source).group(1))
        text = ctx.source.replace(f"BLOCK = {block}", f"BLOCK = {block // 2}")
        return [Candidate(text, "recipe", "halver", ctx.kernel, f"half {block // 2}", "", (), 1)]


class WaitingDoubler(Doubler):
    waits_for_recipes = True


def test_config_search_waits_while_an_untried_recipe_has_candidates(monkeypatch):
    from tritonlens.server.engine.optimize import loop

    collected = []
    monkeypatch.setattr(loop, "collect", lambda *a, **k: collected.append(a[0]) or loop.Evidence())
    runner = ScriptedRunner()
    options = OptimizeOptions(backend="cuda", budget=Budget(candidates=10, rounds=3),
                              gate=GateConfig(backend="cuda", compile_check=False), profile=False)
    source = FIXTURE.read_text()
    result = optimize_source(source, str(FIXTURE), runner, options, [Halver(), WaitingDoubler()])
    gated = [s.candidate.title for s in (*result.rejected, *result.applied, *result.offered)]
    # round 1: only the recipe (slower: rejected); round 2: the config search on the same text (x4 applied);
    # round 3: the recipe was judged before, so it no longer holds the config search back
    assert gated[0] == "half 32" and result.rejected[0].round == 1
    assert [(s.candidate.title, s.round) for s in result.applied] == [("BLOCK 256", 2), ("BLOCK 1024", 3)]
    assert any("no recipe was faster; doubler (" in n for n in result.notes)
    assert len(collected) == 3  # rounds 1 and 3 and the final text: round 2 (same text as round 1) reused it


class StoppedAtTheFinalCheck(ScriptedRunner):
    """The run is stopped (SIGTERM, the editor's cancel) while the final text is measured: that job fails."""

    def __init__(self, cancel: Any) -> None:
        super().__init__()
        self.cancel = cancel
        self.calls = 0

    def verify(self, backend: str, payload: VerifyRequest, **kw: Any) -> dict[str, Any]:
        self.calls += 1
        original = FIXTURE.read_text()
        if payload.baseline_source == original and payload.harness.source == original.replace("BLOCK = 64", "BLOCK = 1024"):
            self.cancel.set()
            return {"ok": False, "error": "the job was cancelled"}
        return super().verify(backend, payload, **kw)


def test_a_run_stopped_during_the_final_check_is_cancelled_not_a_result(monkeypatch):
    import threading

    from tritonlens.server.engine.optimize import loop

    assert "BLOCK = 64" in FIXTURE.read_text()
    monkeypatch.setattr(loop, "collect", lambda *a, **k: loop.Evidence())
    cancel = threading.Event()
    runner = StoppedAtTheFinalCheck(cancel)
    options = OptimizeOptions(backend="cuda", budget=Budget(candidates=10, rounds=2),
                              gate=GateConfig(backend="cuda", compile_check=False), profile=False)
    result = optimize_source(FIXTURE.read_text(), str(FIXTURE), runner, options, [Doubler()], cancel=cancel)
    assert result.applied and result.overall is not None and not result.overall.accepted
    assert result.cancelled  # the bench runs the task again instead of recording the draft's time as its result


class SharedDeviceRunner(ScriptedRunner):
    """Each verify job takes 10 s of a stand-in clock, 9 of them waiting while other jobs' timings held the device
    (as `bench --jobs N` reports them: the worker's device_wait_s)."""

    def __init__(self, clock: list[float], wait_s: float) -> None:
        super().__init__()
        self.clock, self.wait_s = clock, wait_s

    def verify(self, backend: str, payload: VerifyRequest, **kw: Any) -> dict[str, Any]:
        self.clock[0] += 10.0
        reply = super().verify(backend, payload, **kw)
        reply["result"]["device_wait_s"] = self.wait_s
        return reply


@pytest.mark.parametrize("wait_s, rounds_applied", [(9.0, 3), (0.0, 1)])
def test_waits_for_a_shared_device_are_outside_the_time_budget(monkeypatch, wait_s, rounds_applied):
    from tritonlens.server.engine.optimize import loop

    clock = [1000.0]
    monkeypatch.setattr(loop.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(loop, "collect", lambda *a, **k: loop.Evidence())
    runner = SharedDeviceRunner(clock, wait_s)
    options = OptimizeOptions(backend="cuda", budget=Budget(candidates=10, rounds=3, seconds=25),
                              gate=GateConfig(backend="cuda", compile_check=False), profile=False)
    result = optimize_source(FIXTURE.read_text(), str(FIXTURE), runner, options, [Doubler()])
    # 10 s per verification: two of them spend a 25 s budget, unless 9 s of each were waits for the device
    assert len(result.applied) == rounds_applied
    waited = [n for n in result.notes if n.startswith("waited ")]
    assert bool(waited) == (wait_s > 0)
    assert result.device_wait_s == pytest.approx(6 * wait_s)
    assert result.elapsed_s >= 60 if wait_s else result.elapsed_s < 60
