"""Config search's screen: compiled moves are timed once at the timing shape before the gate sees them; only
moves that ran faster than the current text go on, fastest first (server/engine/optimize/config_screen.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tritonlens.analysis.kernels import parse_module
from tritonlens.analysis.rewrite.model import RecipeContext
from tritonlens.server.engine.optimize.config_screen import ConfigScreen, Screened, screenable
from tritonlens.server.engine.optimize.config_search import ConfigSearch

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "optimize" / "kb_tile.py"
WORKER = Path(__file__).resolve().parents[2] / "ascend_runner" / "worker"
PROFILED = {"ok": True, "timing_meaningful": True, "timings": {"model_ms": {"median": 1.0}}}


class FakeScreen:
    """Times a text by its tile_sum_kernel launch's BLOCK (a device where 128 is fastest and 16 slowest)."""

    def __init__(self, by_block: dict[int, float | None]) -> None:
        self.by_block = by_block
        self.calls: list[list[str]] = []
        self.device_wait_s = 0.0

    def time(self, path: str, sources: list[str]) -> list[Screened]:
        self.calls.append(list(sources))
        out = []
        for s in sources:
            block = int(re.search(r"BLOCK=(\d+)", s.split("class ModelNew")[1]).group(1))
            ms = self.by_block.get(block, 1.0)
            out.append(Screened(ms, "" if ms else "RuntimeError: out of resources"))
        return out


def _ctx(profile: dict[str, Any] | None) -> RecipeContext:
    source = FIXTURE.read_text()
    return RecipeContext(source=source, path=str(FIXTURE), kernel="tile_sum_kernel", module=parse_module(source),
                         profile=profile)


@pytest.mark.cuda_env
def test_moves_that_ran_slower_never_reach_the_gate_and_the_fastest_goes_first(runner) -> None:
    screen = FakeScreen({64: 1.0, 128: 0.5, 32: 0.8, 16: 1.3})
    search = ConfigSearch(runner, "sm_90", backend="cuda", screen=screen)  # type: ignore[arg-type]
    survivors, pruned = search.search(_ctx(PROFILED))
    assert len(screen.calls) == 1 and screen.calls[0][0] == FIXTURE.read_text()  # the current text, then the moves
    blocks = [c.config.get("tile_sum_kernel.BLOCK") for c in survivors]
    assert blocks[:2] == [128, 32], blocks  # fastest first: 2.00x, then 1.25x
    assert "screened at 2.00x" in survivors[0].rationale and "before the gate" in survivors[0].rationale
    reasons = {p.move: p.reason for p in pruned}
    assert reasons["tile_sum_kernel.BLOCK: 64 -> 16"] == "screened: 0.77x of the current text at the timing shape"
    # a move that only changes warps or stages runs at the current text's speed: not faster, so not timed
    assert all(c.config.get("tile_sum_kernel.BLOCK") != 64 for c in survivors)
    assert any(r.startswith("screened: 1.00x") for r in reasons.values())
    assert "spills" in reasons["tile_sum_kernel.BLOCK: 64 -> 256"]  # pruned by the compile, never screened
    (note,) = search.notes()  # the report says what the gate never saw, and why
    assert note.startswith("config-search: ") and "screened slower or within 2%" in note and "compile result" in note


@pytest.mark.cuda_env
def test_a_move_that_did_not_run_is_pruned_with_the_reason(runner) -> None:
    screen = FakeScreen({32: None, 16: 0.9})
    search = ConfigSearch(runner, "sm_90", backend="cuda", screen=screen)  # type: ignore[arg-type]
    survivors, pruned = search.search(_ctx(PROFILED))
    reasons = {p.move: p.reason for p in pruned}
    assert "did not run at the timing shape (RuntimeError: out of resources)" in reasons[
        "tile_sum_kernel.BLOCK: 64 -> 32"]
    assert [c.config.get("tile_sum_kernel.BLOCK") for c in survivors] == [16]


@pytest.mark.cuda_env
@pytest.mark.parametrize("profile", [None, {**PROFILED, "timing_meaningful": False}])
def test_a_text_the_evidence_did_not_time_on_a_device_is_not_screened(runner, profile) -> None:
    screen = FakeScreen({128: 0.5})
    with_screen = ConfigSearch(runner, "sm_90", backend="cuda", screen=screen)  # type: ignore[arg-type]
    without = ConfigSearch(runner, "sm_90", backend="cuda")
    got, _ = with_screen.search(_ctx(profile))
    expected, _ = without.search(_ctx(profile))
    assert screen.calls == []
    assert [c.title for c in got] == [c.title for c in expected]


@pytest.mark.cuda_env
def test_when_the_current_text_does_not_run_nothing_is_screened_out(runner) -> None:
    screen = FakeScreen({64: None, 128: 0.5})
    survivors, _ = ConfigSearch(runner, "sm_90", backend="cuda", screen=screen).search(  # type: ignore[arg-type]
        _ctx(PROFILED))
    expected, _ = ConfigSearch(runner, "sm_90", backend="cuda").search(_ctx(PROFILED))
    assert [c.title for c in survivors] == [c.title for c in expected]


def test_screenable_needs_a_timed_profile() -> None:
    assert screenable(PROFILED)
    assert not screenable(None)
    assert not screenable({**PROFILED, "ok": False})
    assert not screenable({**PROFILED, "timing_meaningful": False})


class RecordingRunner:
    def __init__(self, replies: dict[str, Any]) -> None:
        self.replies = replies
        self.requests: list[Any] = []

    def run(self, backend: str, payload: Any, *, cancel: Any = None, timeout_s: float | None = None) -> dict:
        self.requests.append(payload)
        reply = self.replies[payload.harness.source]
        if isinstance(reply, Exception):
            raise reply
        return reply


def test_the_screen_times_modelnew_alone_and_reads_each_reply() -> None:
    ok = {"ok": True, "result": {"ok": True, "timings": {"model_ms": {"median": 0.25, "p20": 0.24}},
                                 "device_wait_s": 1.5}}
    failed = {"ok": True, "result": {"ok": False, "errors": ["IndexError: out of bounds"], "timings": {}}}
    runner = RecordingRunner({"a": ok, "b": failed, "c": ConnectionError("worker died"),
                              "d": {"ok": False, "error": {"stage": "run", "message": "timed out"}}})
    screen = ConfigScreen(runner, "cuda")  # type: ignore[arg-type]
    got = screen.time("task.py", ["a", "b", "c", "d"])
    assert got[0] == Screened(0.25) and got[0].ratio(0.5) == 2.0
    assert got[1].ms is None and "IndexError" in got[1].error
    assert got[2].ms is None and "worker died" in got[2].error
    assert got[3].ms is None and got[3].error == "timed out"
    assert screen.device_wait_s == 1.5
    for req in runner.requests:  # no per-launch replays, no eager reference: ModelNew's time is all it needs
        assert req.time_launches is False and req.time_reference is False
        assert req.harness.mode == "kernelbench" and req.harness.path == "task.py"


@pytest.mark.cuda_env
def test_run_job_leaves_the_reference_untimed_when_asked(tmp_path) -> None:
    """The worker's run job under a backend whose timings count (the interpreter, told so): model_ms is always
    timed, reference_ms only without time_reference=False."""
    from tritonlens.ascend_runner.environments import find_environment

    python = find_environment("cuda").python
    script = textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {str(WORKER)!r})
        import harness_backend, run_job
        class Timed(harness_backend.InterpretBackend):
            timing_meaningful = True
        source = open({str(FIXTURE)!r}).read()
        out = {{}}
        for flag in (True, False):
            payload = {{"harness": {{"mode": "kernelbench", "path": "kb_tile.py", "source": source}},
                       "sizes": {{"N": 20}}, "time_launches": False, "time_reference": flag}}
            with harness_backend.interpret_mode(True):
                result = run_job.run_job(Timed(), payload, profile=False)
            out[str(flag)] = sorted(result["timings"])
        print(json.dumps(out))
    """)
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    proc = subprocess.run([str(python), "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out == {"True": ["model_ms", "reference_ms"], "False": ["model_ms"]}


@pytest.mark.cuda_env
def test_moves_the_gate_found_faster_are_combined_with_the_applied_one_next_round(runner) -> None:
    """A round applies only its best move; the next round tries the others on top of it, first all together."""
    from tritonlens.analysis.rewrite.model import Verdict

    search = ConfigSearch(runner, "sm_90", backend="cuda", max_survivors=20)
    first, _ = search.search(_ctx(None))
    block = next(c for c in first if c.config == {"tile_sum_kernel.BLOCK": 32})
    warps = next(c for c in first if set(c.config) == {"tile_sum_kernel.num_warps"})
    stages = next(c for c in first if set(c.config) == {"tile_sum_kernel.num_stages"})
    slower = next(c for c in first if c.config == {"tile_sum_kernel.BLOCK": 16})
    feedback = [Verdict(block.id, True, "faster", speedup=1.3, details={"faster": True}),
                Verdict(warps.id, True, "faster", speedup=1.1, details={"faster": True}),
                Verdict(stages.id, True, "faster", speedup=1.05, details={"faster": True}),
                Verdict(slower.id, False, "slower", stage="timing", speedup=0.9, details={"faster": False})]
    source = block.source  # the round applied the block move
    ctx = RecipeContext(source=source, path=str(FIXTURE), kernel="tile_sum_kernel", module=parse_module(source))
    second, _ = search.search(ctx, feedback)
    together = second[0].config
    assert together == {**warps.config, **stages.config}, together  # the applied block is already in the text
    assert second[1].config == warps.config and second[2].config == stages.config
    assert not any(c.config == {"tile_sum_kernel.BLOCK": 16} for c in second[:3])  # slower at the gate: not reused
