"""Issue 23, item 5: Profile under `interpret` runs a KernelBench task at its smallest TEST_SHAPES entry (not the
benchmark size, minutes on the CPU), or says it will not; the run job honours the size overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.ascend_runner.environments import EnvironmentUnavailable, find_environment
from tritonlens.ascend_runner.protocol import ProtocolError
from tritonlens.server.engine.profile.jobs import harness_spec, interpret_sizes, profile_request

TASK = Path(__file__).resolve().parents[1] / "fixtures" / "optimize" / "kb_scale.py"  # N=4096, TEST_SHAPES 1000/1537


def test_the_smallest_test_shape_is_chosen_and_named() -> None:
    sizes, note = interpret_sizes(TASK.read_text(), "kernelbench")
    assert sizes == {"N": 1000}
    assert note is not None and "N=1000" in note


def test_without_test_shapes_it_says_it_runs_as_written() -> None:
    text = TASK.read_text().replace('TEST_SHAPES = [{"N": 1000}, {"N": 1537}]', "")
    sizes, note = interpret_sizes(text, "kernelbench")
    assert sizes == {}
    assert note is not None and "no TEST_SHAPES" in note and "as written" in note


def test_scripts_are_left_alone() -> None:
    assert interpret_sizes(TASK.read_text(), "script") == ({}, None)


def test_sizes_must_be_integers() -> None:
    with pytest.raises(ProtocolError, match="sizes"):
        profile_request(harness_spec(str(TASK), TASK.read_text(), "auto", []), "interpret", sizes={"N": "big"})


def test_the_run_job_launches_at_the_overridden_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        find_environment("cuda")
    except EnvironmentUnavailable as exc:
        pytest.skip(str(exc))
    monkeypatch.setenv("TRITONLENS_CACHE_DIR", str(tmp_path / "cache"))
    text = TASK.read_text()
    sizes, _ = interpret_sizes(text, "kernelbench")
    payload = profile_request(harness_spec(str(TASK), text, "auto", []), "interpret", sizes=sizes)
    with LocalRunner({"cache": False}) as runner:
        reply = runner.profile("interpret", payload, timeout_s=300)
    assert reply.get("ok"), reply
    grids = [tuple(rec["grid"]) for rec in reply["result"]["launches"]]
    assert grids == [(16, 1, 1)], grids  # cdiv(1000, 64); the benchmark size N=4096 would launch 64 programs
