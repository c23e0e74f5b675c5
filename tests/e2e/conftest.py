"""Fixtures for editor-level end-to-end tests: runner environments (skip cleanly when absent), a private
compile cache, and a real `tritonlens-runner serve` subprocess on a loopback port."""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tritonlens.ascend_runner.environments import EnvironmentUnavailable, find_environment

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "server"))


@pytest.fixture(scope="module")
def cuda_env() -> None:
    try:
        find_environment("cuda")
    except EnvironmentUnavailable as exc:
        pytest.skip(f"cuda runner environment missing: {exc}")


@pytest.fixture(scope="module")
def compile_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("tritonlens-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRITONLENS_CACHE_DIR", str(path))
        yield path


@dataclass
class RunnerService:
    url: str
    token: str
    process: subprocess.Popen[bytes]
    log: Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _healthy(url: str, token: str) -> bool:
    req = urllib.request.Request(url + "/v1/health", headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return bool(json.loads(resp.read()))
    except (urllib.error.URLError, OSError, ValueError):
        return False


@pytest.fixture
def runner_service(tmp_path: Path, cuda_env: None) -> Iterator[RunnerService]:
    """`tritonlens-runner serve` as its own process, token from a file, serving this machine's environments."""
    pytest.importorskip("uvicorn")
    token = secrets.token_hex(16)
    token_file = tmp_path / "runner-token"
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)
    port = _free_port()
    log = tmp_path / "runner.log"
    env = {**os.environ, "TRITONLENS_CACHE_DIR": str(tmp_path / "runner-cache")}
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tritonlens.ascend_runner.cli",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--token-file",
                str(token_file),
                "--sandbox-root",
                str(tmp_path / "sandboxes"),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while not _healthy(url, token):
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"runner service did not start:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.1)
        yield RunnerService(url, token, process, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
