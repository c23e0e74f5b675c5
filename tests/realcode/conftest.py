"""Warm runners (CUDA and Ascend environments) for the real-code tests (skipped when the environment is absent)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # warm_runner

from warm_runner import warm_runner  # noqa: E402

from tritonlens.ascend_runner.client import LocalRunner  # noqa: E402


@pytest.fixture(scope="module")
def cuda_runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRunner]:
    yield from warm_runner("cuda", tmp_path_factory)


@pytest.fixture(scope="module")
def ascend_runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRunner]:
    yield from warm_runner("ascend", tmp_path_factory)
