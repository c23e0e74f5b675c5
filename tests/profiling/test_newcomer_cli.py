"""Issue 14, item 16: what a newcomer meets first on the command line gets a plain answer.

`--backend npu` without torch_npu, a remote runner without a token, a non-Python file, `tritonlens-runner serve
--openapi` without a token file, and the warnings a runner operator must see (token file readable by others,
a non-loopback bind without TLS)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tritonlens.ascend_runner import cli as runner_cli
from tritonlens.ascend_runner.environments import EnvironmentUnavailable, find_environment

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "vector_add.py"


def tritonlens(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tritonlens.server.cli", *args], capture_output=True, text=True, timeout=timeout
    )


def test_npu_without_torch_npu_is_a_plain_message() -> None:
    try:
        python = find_environment("ascend").python
    except EnvironmentUnavailable as exc:
        pytest.skip(str(exc))
    if subprocess.run([python, "-c", "import torch_npu"], capture_output=True).returncode == 0:
        pytest.skip("this ascend environment has torch_npu")
    proc = tritonlens("profile", str(EXAMPLE), "--backend", "npu")
    assert proc.returncode == 1
    assert "needs PyTorch and torch_npu" in proc.stderr and "--backend interpret" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_remote_runner_without_token_names_the_flags() -> None:
    proc = tritonlens("profile", str(EXAMPLE), "--runner", "http://127.0.0.1:9", "--backend", "interpret")
    assert proc.returncode == 1
    assert "--token-env" in proc.stderr and "--token-file" in proc.stderr, proc.stderr
    assert "tokenEnv" not in proc.stderr


def test_remote_runner_with_unset_variable_names_the_flag(monkeypatch) -> None:
    monkeypatch.delenv("TL_NO_SUCH_TOKEN", raising=False)
    proc = tritonlens(
        "profile", str(EXAMPLE), "--runner", "http://127.0.0.1:9", "--token-env", "TL_NO_SUCH_TOKEN"
    )
    assert proc.returncode == 1 and "TL_NO_SUCH_TOKEN" in proc.stderr and "tokenEnv" not in proc.stderr


@pytest.mark.parametrize("command", ["check", "profile"])
def test_a_non_python_file_is_a_usage_error(tmp_path: Path, command: str) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not python\n")
    proc = tritonlens(command, str(notes))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "not a Python file" in proc.stderr and "TL001" not in proc.stdout


def test_openapi_needs_no_token_file(capsys) -> None:
    pytest.importorskip("fastapi")
    assert runner_cli.main(["serve", "--openapi"]) == 0
    spec = json.loads(capsys.readouterr().out)
    assert "/v1/jobs" in spec["paths"]


def test_token_file_readable_by_others_is_warned(tmp_path: Path, capsys) -> None:
    token = tmp_path / "token"
    token.write_text("x" * 32)
    token.chmod(0o644)
    assert runner_cli.read_token(str(token)) == "x" * 32
    assert "readable by other users" in capsys.readouterr().err
    token.chmod(0o600)
    runner_cli.read_token(str(token))
    assert capsys.readouterr().err == ""


def test_non_loopback_without_tls_is_refused_unless_insecure(tmp_path: Path, capsys, monkeypatch) -> None:
    pytest.importorskip("uvicorn")
    token = tmp_path / "token"
    token.write_text("y" * 32)
    token.chmod(0o600)
    started: list[str] = []

    class NoServe:
        def run(self) -> None:
            started.append("run")

    monkeypatch.setattr("tritonlens.ascend_runner.remote_gate.uvicorn_server", lambda *a, **k: NoServe())
    argv = ["serve", "--host", "0.0.0.0", "--token-file", str(token), "--sandbox-root", str(tmp_path / "sb")]
    assert runner_cli.main(argv) == 2  # refused without --allow-non-loopback
    assert runner_cli.main([*argv, "--allow-non-loopback"]) == 2  # refused without TLS (issue 21)
    assert started == []
    assert "refusing to serve 0.0.0.0 without TLS" in capsys.readouterr().err
    assert runner_cli.main([*argv, "--allow-non-loopback", "--insecure"]) == 0  # the operator's TLS proxy
    assert started == ["run"]
    assert "without TLS" in capsys.readouterr().err
