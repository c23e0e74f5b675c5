"""Warm runners (CUDA and Ascend environments) for the real-code tests (skipped when the environment is absent)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.ascend_runner.environments import EnvironmentUnavailable, find_environment


def _runner(environment: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRunner]:
    try:
        find_environment(environment)
    except EnvironmentUnavailable as exc:
        pytest.skip(str(exc))
    runner = LocalRunner({"cache_dir": str(tmp_path_factory.mktemp("cache")), "workers": 1, "timeout_s": 120})
    yield runner
    runner.close()


@pytest.fixture(scope="module")
def cuda_runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRunner]:
    yield from _runner("cuda", tmp_path_factory)


@pytest.fixture(scope="module")
def ascend_runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRunner]:
    yield from _runner("ascend", tmp_path_factory)
