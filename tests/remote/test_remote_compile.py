"""A real compile job through the runner service on loopback: RemoteRunner -> HTTP -> LocalRunner -> worker."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

uvicorn = pytest.importorskip("uvicorn")
from tritonlens.ascend_runner.client import LocalRunner  # noqa: E402
from tritonlens.ascend_runner.environments import EnvironmentUnavailable, find_environment  # noqa: E402
from tritonlens.ascend_runner.protocol import CompileRequest  # noqa: E402
from tritonlens.ascend_runner.remote_client import RemoteRunner  # noqa: E402
from tritonlens.ascend_runner.remote_server import ServerConfig, create_app  # noqa: E402

TOKEN = "another-token-for-the-compile-test"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "vector_add.py"


@pytest.fixture(scope="module")
def remote(tmp_path_factory):
    try:
        find_environment("cuda")
    except EnvironmentUnavailable as exc:
        pytest.skip(str(exc))
    local = LocalRunner({"cache_dir": str(tmp_path_factory.mktemp("cache"))})
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(ServerConfig(token=TOKEN), local), host="127.0.0.1", port=port, log_level="warning"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    yield RemoteRunner(f"http://127.0.0.1:{port}", TOKEN)
    server.should_exit = True
    thread.join(timeout=10)
    local.close()


def _request(source: str) -> CompileRequest:
    return CompileRequest(
        source=source,
        path=str(EXAMPLE),
        kernel="add_kernel",
        signature={
            "x_ptr": "*fp32",
            "y_ptr": "*fp32",
            "output_ptr": "*fp32",
            "n_elements": "i32",
            "BLOCK_SIZE": "constexpr",
        },
        constants={"BLOCK_SIZE": 1024},
        divisibility=["x_ptr", "y_ptr", "output_ptr"],
        target="sm_90",
    )


def test_compile_through_the_service_returns_every_stage(remote):
    result = remote.compile(_request(EXAMPLE.read_text()), timeout_s=180)
    assert result.ok, result.errors
    assert {"ttir", "ttgir", "llir", "ptx", "sass"} <= set(result.stages)
    assert "vector_add.py" in result.stages["ttgir"]
    assert result.resources.get("registers", 0) > 0
    again = remote.compile(_request(EXAMPLE.read_text()), timeout_s=60)
    assert again.cached and again.stages["ptx"] == result.stages["ptx"]


def test_compile_error_comes_back_with_its_line(remote):
    source = EXAMPLE.read_text().replace("tl.load(x_ptr + offsets", "tl.load(x_ptr + undefined_name", 1)
    result = remote.compile(_request(source), timeout_s=180)
    assert not result.ok
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "undefined_name" in text)
    assert any(e.line == line for e in result.errors), result.errors
