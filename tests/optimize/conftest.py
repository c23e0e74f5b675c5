from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.ascend_runner.environments import EnvironmentUnavailable, find_environment

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "optimize"


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRunner]:
    """A local runner over the cuda environment (compiles for sm_90 on the CPU, runs under the interpreter)."""
    try:
        find_environment("cuda")
    except EnvironmentUnavailable as exc:
        pytest.skip(f"cuda runner environment missing: {exc}")
    with LocalRunner({"cache_dir": str(tmp_path_factory.mktemp("optimize-cache")), "workers": 2}) as r:
        yield r
