"""Fixtures for the pipeline tests: runner environments (skip cleanly when absent), a private compile cache,
and an in-process `tritonlens` CLI."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tritonlens.ascend_runner.environments import EnvironmentUnavailable, find_environment
from tritonlens.server.cli import main


@dataclass
class CliResult:
    rc: int
    out: str
    err: str

    def json(self) -> list[dict]:
        return json.loads(self.out)


def _require(name: str) -> None:
    try:
        find_environment(name)
    except EnvironmentUnavailable as exc:
        pytest.skip(f"{name} runner environment missing: {exc}")


@pytest.fixture(scope="module")
def compile_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One cache per test module, so repeated compiles in a module are warm but tests never share state."""
    path = tmp_path_factory.mktemp("tritonlens-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRITONLENS_CACHE_DIR", str(path))
        yield path


@pytest.fixture(scope="module")
def cuda_env() -> None:
    _require("cuda")


@pytest.fixture(scope="module")
def ascend_env() -> None:
    _require("ascend")


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    def run(*argv: str) -> CliResult:
        capsys.readouterr()
        rc = main(list(argv))
        captured = capsys.readouterr()
        return CliResult(rc, captured.out, captured.err)

    return run
