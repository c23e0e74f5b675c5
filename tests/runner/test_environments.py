"""Finding runner interpreters and routing targets/backends to environments."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tritonlens.ascend_runner import environments as envs
from tritonlens.ascend_runner.client import LocalRunner, Runner
from tritonlens.ascend_runner.factory import get_runner
from tritonlens.ascend_runner.protocol import CompileRequest


def fake_python(folder: Path) -> Path:
    python = folder / ".envs" / "cuda" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\n")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    site = folder / ".envs" / "cuda" / "lib" / "python3.11" / "site-packages" / "triton-9.9.1.dist-info"
    site.mkdir(parents=True)
    return python


@pytest.mark.parametrize(
    ("target", "env"),
    [
        ("sm_80", "cuda"),
        ("sm_90", "cuda"),
        ("sm_100", "cuda"),
        ("interpret", "cuda"),
        ("ascend910b4", "ascend"),
    ],
)
def test_targets_route_to_environments(target: str, env: str) -> None:
    assert envs.environment_for_target(target) == env


def test_backends_route_to_environments() -> None:
    assert envs.environment_for_backend("interpret") == "cuda"
    assert envs.environment_for_backend("npu") == "ascend"
    with pytest.raises(ValueError, match="unknown backend"):
        envs.environment_for_backend("metal")
    with pytest.raises(ValueError, match="no runner environment"):
        envs.environment_for_target("gfx942")


def test_config_beats_env_var_beats_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    python = fake_python(tmp_path)
    other = fake_python(tmp_path / "other")
    monkeypatch.setenv("TRITONLENS_CUDA_PYTHON", str(other))
    found = envs.find_environment("cuda", {"cuda": {"python": str(python)}})
    assert found.python == str(python) and found.found_by == "config"
    found = envs.find_environment("cuda")
    assert found.python == str(other) and found.found_by == "$TRITONLENS_CUDA_PYTHON"
    assert found.compiler_version() == "triton 9.9.1"


def test_working_directory_fallback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_python(tmp_path)
    monkeypatch.delenv("TRITONLENS_CUDA_PYTHON", raising=False)
    monkeypatch.setattr(envs, "REPO_ROOT", tmp_path / "elsewhere")
    monkeypatch.chdir(tmp_path)
    found = envs.find_environment("cuda")
    assert found.found_by == "working directory"
    assert os.path.samefile(found.python, tmp_path / ".envs" / "cuda" / "bin" / "python")


def test_missing_environment_says_how_to_set_it_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRITONLENS_ASCEND_PYTHON", raising=False)
    monkeypatch.setattr(envs, "REPO_ROOT", tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(envs.EnvironmentUnavailable, match=r"scripts/bootstrap --all"):
        envs.find_environment("ascend")
    monkeypatch.setenv("TRITONLENS_ASCEND_PYTHON", str(tmp_path / "nope"))
    with pytest.raises(envs.EnvironmentUnavailable, match="not an executable"):
        envs.find_environment("ascend")


def test_runner_reports_unavailable_environment_as_stage_error(tmp_path: Path) -> None:
    runner = LocalRunner({"cuda": {"python": str(tmp_path / "missing-python")}, "cache": False})
    req = CompileRequest(source="", path="k.py", kernel="k", signature={}, target="sm_90")
    result = runner.compile(req)
    assert not result.ok and result.errors[0].stage == "worker"
    assert "not an executable" in result.errors[0].message
    health = runner.health()
    assert health["backends"]["cuda"]["available"] is False
    runner.close()


def test_remote_config_builds_the_remote_client(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TL_TEST_RUNNER_TOKEN", "secret")
    runner = get_runner({"url": "http://127.0.0.1:9", "tokenEnv": "TL_TEST_RUNNER_TOKEN"})
    assert not isinstance(runner, LocalRunner)
    assert isinstance(runner, Runner)
    assert runner.url == "http://127.0.0.1:9"
    runner.close()
