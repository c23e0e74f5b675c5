"""One warm LocalRunner of a runner environment per test module, with its own cache directory (skipped when the
environment is not installed). Shared by the conftest files that offer `cuda_runner` / `ascend_runner`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.ascend_runner.environments import EnvironmentUnavailable, find_environment


def warm_runner(environment: str, tmp_path_factory: pytest.TempPathFactory, timeout_s: int = 120) -> Iterator[LocalRunner]:
    try:
        find_environment(environment)
    except EnvironmentUnavailable as exc:
        pytest.skip(str(exc))
    runner = LocalRunner({"cache_dir": str(tmp_path_factory.mktemp("cache")), "workers": 1, "timeout_s": timeout_s})
    yield runner
    runner.close()
