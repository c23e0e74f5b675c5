"""Fixtures for the runner tests: runner environments (skipped when absent) and temporary caches."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # kernel_requests
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # warm_runner

from warm_runner import warm_runner  # noqa: E402

from tritonlens.ascend_runner.client import LocalRunner  # noqa: E402
from tritonlens.ascend_runner.environments import EnvironmentUnavailable, find_environment  # noqa: E402


@pytest.fixture(scope="session")
def cuda_python() -> str:
    try:
        return find_environment("cuda").python
    except EnvironmentUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def cuda_runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRunner]:
    """One warm LocalRunner per test module, with its own cache directory."""
    yield from warm_runner("cuda", tmp_path_factory)
