"""TL116's premise on the real triton-ascend compiler: the gather example's indexed load becomes a scalar
`DiscreteMemAccess` loop in the ttadapter IR, the contiguous vector add does not (ascend runner env, no CANN)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from triage_helpers import EXAMPLES

from tritonlens.analysis.triage import triage
from tritonlens.ascend_runner.environments import EnvironmentUnavailable, find_environment
from tritonlens.ascend_runner.protocol import CompileRequest

pytestmark = pytest.mark.ascend_env


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    try:
        find_environment("ascend")
    except EnvironmentUnavailable as exc:
        pytest.skip(f"ascend runner environment missing: {exc}")
    from tritonlens.ascend_runner.client import LocalRunner

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TRITONLENS_CACHE_DIR", str(tmp_path_factory.mktemp("triage-ascend-cache")))
        with LocalRunner() as local:
            yield local


def _ttadapter(runner: object, name: str, kernel: str, signature: dict[str, str]) -> str:
    path = EXAMPLES / name
    request = CompileRequest(
        source=path.read_text(encoding="utf-8"),
        path=str(Path("examples") / name),
        kernel=kernel,
        signature={**signature, "BLOCK_SIZE": "constexpr"},
        constants={"BLOCK_SIZE": 1024},
        target="ascend910b3",
    )
    result = runner.compile(request, timeout_s=300)
    assert "ttadapter" in result.stages, [e.message for e in result.errors]
    return result.stages["ttadapter"]


def test_gather_flagged_by_tl116_is_scalarized_by_triton_ascend(runner: object) -> None:
    source = (EXAMPLES / "gather.py").read_text(encoding="utf-8")
    assert [f.code for f in triage(source).findings if f.code == "TL116"] == ["TL116"]
    ir = _ttadapter(
        runner,
        "gather.py",
        "gather_kernel",
        {"table_ptr": "*fp32", "idx_ptr": "*i32", "out_ptr": "*fp32", "n_indices": "i32"},
    )
    assert "DiscreteMemAccess" in ir


def test_contiguous_add_is_not_flagged_and_not_scalarized(runner: object) -> None:
    source = (EXAMPLES / "vector_add.py").read_text(encoding="utf-8")
    assert not [f for f in triage(source).findings if f.code == "TL116"]
    ir = _ttadapter(
        runner,
        "vector_add.py",
        "add_kernel",
        {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32"},
    )
    assert "DiscreteMemAccess" not in ir
