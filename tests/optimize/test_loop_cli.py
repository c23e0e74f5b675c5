"""The loop with test proposers, and `tritonlens optimize` end to end, on the interpret backend."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, Scripted

from tritonlens.analysis.rewrite.model import Candidate, RecipeContext, Verdict
from tritonlens.server.cli import main
from tritonlens.server.engine.optimize.loop import Budget, OptimizeOptions, optimize_source
from tritonlens.server.engine.optimize.proposers import Proposer, RecipeProposer
from tritonlens.server.engine.optimize.report import to_dict, to_markdown
from tritonlens.server.engine.profile.jobs import backend_from_health

pytestmark = pytest.mark.cuda_env
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "optimize" / "kb_scale.py"


class TwoEdits:
    """A test proposer: one correct rewrite (a larger block) and one wrong one."""

    name = "test-proposer"

    def __init__(self) -> None:
        self.feedback: list[Sequence[Verdict]] = []

    def propose(self, ctx: RecipeContext, feedback: Sequence[Verdict]) -> list[Candidate]:
        self.feedback.append(list(feedback))
        good = ctx.source.replace("BLOCK = 64", "BLOCK = 512")
        bad = ctx.source.replace("x * 2.0 + 1.0, mask", "x * 2.0 - 1.0, mask")
        return [
            Candidate(good, "recipe", "bigger-block", ctx.kernel, "larger block", "test", ("TL999",), 1),
            Candidate(bad, "recipe", "sign-flip", ctx.kernel, "wrong sign", "test", ("TL999",), 1),
        ]


class FakeRecipe:
    name, title, keys = "never", "never", ("TL999",)

    def propose(self, ctx: RecipeContext) -> list[Candidate]:
        raise AssertionError("a recipe whose keys are absent must not be asked")


def test_loop_offers_verified_correct_and_keeps_rejections(runner):
    source = FIXTURE.read_text()
    proposer = TwoEdits()
    assert isinstance(proposer, Proposer)
    options = OptimizeOptions(target="sm_90", backend="interpret", budget=Budget(candidates=4, rounds=3))
    messages: list[str] = []
    result = optimize_source(
        source,
        str(FIXTURE),
        runner,
        options,
        [proposer, RecipeProposer(recipes=[FakeRecipe()])],
        progress=lambda m, f: messages.append(m),
    )
    assert result.error is None
    assert [s.candidate.title for s in result.offered] == ["larger block"]
    assert [(s.candidate.title, s.verdict.stage) for s in result.rejected] == [("wrong sign", "correctness")]
    assert (
        result.applied == [] and result.final == source
    )  # interpret: nothing chained, nothing claimed faster
    assert len(proposer.feedback) == 1  # one round only without timing
    assert any("verifying larger block" in m for m in messages)
    data = to_dict(result)
    assert data["timing_meaningful"] is False and data["rejected"][0]["reason"]
    markdown = to_markdown(result)
    assert "none is claimed or applied as faster" in markdown and "rejected at correctness" in markdown


def test_not_kernelbench_is_a_plain_message(runner, tmp_path):
    path = tmp_path / "plain.py"
    path.write_text("import triton\n\n@triton.jit\ndef k(x):\n    pass\n")
    result = optimize_source(path.read_text(), str(path), runner, OptimizeOptions(), [])
    assert result.error and "not in KernelBench form" in result.error


def test_cli_writes_reports_and_apply_leaves_interpret_results_unapplied(runner, tmp_path, capsys):
    task = tmp_path / "kb_scale.py"
    task.write_text(FIXTURE.read_text())
    report = tmp_path / "report"
    with FakeOpenAI() as llm:  # a real local OpenAI-compatible server whose model ignores the reply format
        llm.script = [Scripted("no markers"), Scripted("still no markers")]
        code = main(args(task, report, llm.base_url))
    out = capsys.readouterr()
    assert code == 0, out.err
    data = json.loads(out.out)
    (entry,) = data["files"]
    assert entry["backend"] == "interpret" and entry["applied"] == [] and entry["speedup"] is None
    assert all(s["details"]["faster"] is False for s in entry["offered"])
    assert entry["shapes"]["held_out"][0]["overrides"] == {"N": 1537}
    assert (report / "optimize-report.md").read_text().startswith("# tritonlens optimize report")
    assert json.loads((report / "optimize-report.json").read_text())["files"][0]["path"] == str(task)
    # the report says where it ran: the runner, the device and its library versions, the tritonlens commit
    prov = json.loads((report / "optimize-report.json").read_text())["provenance"]
    assert prov == data["provenance"] and prov["runner"]["kind"] == "local" and prov["backend"] == "interpret"
    assert prov["devices"][0]["name"].startswith("cpu") and prov["versions"]["triton"]
    head = subprocess.run(["git", "-C", str(Path(__file__).parent), "rev-parse", "HEAD"], capture_output=True, text=True)
    assert prov["tritonlens"]["commit"] == head.stdout.strip()
    md = (report / "optimize-report.md").read_text()
    assert "## Where it ran" in md and f"commit {prov['tritonlens']['commit']}" in md and "triton " in md
    assert task.read_text() == FIXTURE.read_text()  # --apply never writes an untimed result
    assert [d["reason"].split(":")[0] for d in entry["declined"] if d["proposer"] == "llm:m"] == ["reply rejected"] * 2


def args(task: Path, report: Path, llm_url: str) -> list[str]:
    return (
        [
            "optimize",
            str(task),
            "--backend",
            "interpret",
            "--target",
            "sm_90",
            "--budget",
            "candidates=3,rounds=1",
            "--report",
            str(report),
            "--format",
            "json",
            "--apply",
            "--llm-base-url",
            llm_url,
            "--llm-model",
            "m",
        ]
    )


def test_cli_usage_errors(tmp_path, capsys):
    assert main(["optimize", str(tmp_path / "missing.py"), "--backend", "interpret"]) == 2
    assert main(["optimize", str(tmp_path), "--budget", "rounds=x"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_a_device_backend_without_the_device_stops_before_any_work(runner, tmp_path, capsys):
    # before: `optimize --backend cuda` on a CPU machine compiled every candidate, rejected each ("could not
    # run"), took 84 s on a public kernel's wrapper and exited 0 (check 3, latkins/trifast)
    if backend_from_health(runner.health()) == "cuda":
        pytest.skip("this machine has a GPU")
    for command in ("optimize", "bench"):
        assert main([command, str(FIXTURE), "--backend", "cuda", "--report", str(tmp_path / command)]) == 2
        err = capsys.readouterr().err
        assert "see no NVIDIA GPU" in err and "--backend interpret" in err, err
        assert not (tmp_path / command).exists()


def test_no_candidate_is_started_with_less_time_left_than_a_verification_takes():
    """A candidate started with a few seconds left is only killed by the budget: the loop stops first, and says so."""
    import time

    from tritonlens.server.engine.optimize.loop import BudgetClock, OptimizeResult, _stop

    budget = Budget(candidates=8, rounds=2, seconds=100)
    started = BudgetClock(time.monotonic() - 90)  # 10 s left
    out = OptimizeResult(path="k.py", original="", final="", backend="cuda", target="sm_90")
    assert not _stop(None, out, started, budget, costs=[12.0, 14.0])  # 10 s > 0.6 x 13 s
    assert _stop(None, out, started, budget, costs=[30.0, 25.0, 40.0])
    assert out.notes == ["time budget spent: 10 s left, less than a verification here takes (about 30 s); "
                         "no further candidate started"]
    assert not _stop(None, OptimizeResult(path="k.py", original="", final="", backend="cuda", target="sm_90"), started, budget)
