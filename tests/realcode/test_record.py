"""`tritonlens record -- COMMAND` on the CPU (interpret backend): from a script, from a pytest test and through
a remote runner on a loopback port; levels 3-4 then compile the recorded launches, and an edit of the kernel
invalidates them."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tritonlens.ascend_runner.environments import EnvironmentUnavailable, find_environment
from tritonlens.server.engine.record.launch_store import recorded_for, workspace_root

KERNEL = """import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, OUT: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, (tl.load(x_ptr + offs, mask=mask) * 2).to(OUT), mask=mask)


def scale(x):
    y = torch.empty_like(x)
    block = triton.next_power_of_2(min(x.numel(), 256))
    scale_kernel[(triton.cdiv(x.numel(), block),)](x, y, x.numel(), BLOCK=block, OUT=tl.float16)
    return y
"""
SCRIPT = "import torch\nfrom pkg.kern import scale\nscale(torch.ones(1000, dtype=torch.float16))\n"
TEST = (
    "import torch\nfrom pkg.kern import scale\n\n\ndef test_small():\n"
    "    assert scale(torch.ones(64, dtype=torch.float16)).sum().item() == 128\n"
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    try:
        find_environment("cuda")
    except EnvironmentUnavailable as exc:
        pytest.skip(str(exc))
    root = tmp_path_factory.mktemp("proj")
    (root / "pyproject.toml").write_text("")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "kern.py").write_text(KERNEL)
    (root / "run.py").write_text(SCRIPT)
    (root / "test_kern.py").write_text(TEST)
    return root


def record(root: Path, *argv: str) -> subprocess.CompletedProcess:
    cmd = [
        sys.executable,
        "-m",
        "tritonlens.server.cli",
        "record",
        "--backend",
        "interpret",
        "--format",
        "json",
    ]
    return subprocess.run([*cmd, "--", *argv], cwd=root, capture_output=True, text=True, timeout=300)


def launches(root: Path) -> list[dict]:
    kern = root / "pkg" / "kern.py"
    return recorded_for(str(kern), kern.read_text())


def test_record_from_a_script_then_from_pytest(project: Path) -> None:
    done = record(project, "python", "run.py")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["stored"] == {"pkg/kern.py": {"scale_kernel": 1}}
    (first,) = launches(project)
    assert first["signature"]["x_ptr"] == "*fp16" and first["constants"] == {
        "BLOCK": 256,
        "OUT": "triton.language.float16",
    }
    assert "n" not in first["divisibility"]  # 1000 is not a multiple of 16: the real launch, not the guess
    done = record(project, "pytest", "-q", "test_kern.py")
    assert done.returncode == 0, done.stderr
    assert sorted(x["constants"]["BLOCK"] for x in launches(project)) == [64, 256]
    assert (project / ".tritonlens" / ".gitignore").read_text().strip().endswith("*")


def test_levels_3_4_compile_the_recorded_launches(project: Path) -> None:
    from tritonlens.ascend_runner.client import LocalRunner
    from tritonlens.server.engine.diagnose import analyze_kernel

    if not launches(project):
        record(project, "python", "run.py")
    kern = project / "pkg" / "kern.py"
    runner = LocalRunner({"workers": 1, "timeout_s": 120})
    try:
        result = analyze_kernel(kern.read_text(), str(kern), "scale_kernel", "sm_90", runner, max_variants=1)
    finally:
        runner.close()
    assert result.primary is not None, (result.error, [v.errors for v in result.variants])
    assert result.primary.specialization.label.startswith("recorded launch")
    assert "f16" in result.primary.stages["ttir"]


def test_an_edit_of_the_kernel_invalidates_its_records(project: Path) -> None:
    kern = project / "pkg" / "kern.py"
    if not launches(project):
        record(project, "python", "run.py")
    source = kern.read_text()
    elsewhere = source + "\n\nUNRELATED = 1\n"
    assert recorded_for(str(kern), elsewhere)  # an edit outside the kernel keeps them
    edited = source.replace("* 2).to(OUT)", "* 3).to(OUT)")
    assert recorded_for(str(kern), edited) == []
    assert workspace_root(kern) == project.resolve()


def test_a_command_that_fails_says_so(project: Path) -> None:
    done = record(project, "python", "-c", "raise SystemExit(3)")
    assert done.returncode == 1
    assert "exited with status 3" in json.loads(done.stdout)["errors"][0]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def local_service(tmp_path: Path) -> Iterator[str]:
    uvicorn = pytest.importorskip("uvicorn")
    from tritonlens.ascend_runner.client import LocalRunner
    from tritonlens.ascend_runner.remote_server import ServerConfig, create_app

    runner = LocalRunner({"workers": 1, "timeout_s": 120})
    config = ServerConfig(token="tok-" + "0" * 28, sandbox_root=tmp_path / "sandboxes")
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(config, runner), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


def test_record_through_a_remote_runner(
    project: Path, local_service: str, tmp_path: Path, monkeypatch
) -> None:
    from tritonlens.server.engine.record.jobs import record_remote

    remote_copy = tmp_path / "client"
    remote_copy.mkdir()
    for rel in ("pyproject.toml", "pkg/__init__.py", "pkg/kern.py", "run.py"):
        (remote_copy / rel).parent.mkdir(parents=True, exist_ok=True)
        (remote_copy / rel).write_text((project / rel).read_text())
    monkeypatch.setenv("TL_TEST_TOKEN", "tok-" + "0" * 28)
    outcome = record_remote(
        local_service, "TL_TEST_TOKEN", ["python", "run.py"], remote_copy, remote_copy, "interpret", 300
    )
    assert outcome.setup_error is None and outcome.run.returncode == 0, outcome.run.errors
    (launch,) = outcome.run.launches
    assert launch["file"] == str(
        remote_copy / "pkg" / "kern.py"
    )  # sandbox paths mapped back to the workspace
    assert launch["signature"]["x_ptr"] == "*fp16"


def test_profiling_a_kernelbench_file_records_its_launches_by_itself(tmp_path: Path, capsys) -> None:
    import shutil

    from tritonlens.server.cli import main

    try:
        find_environment("cuda")
    except EnvironmentUnavailable as exc:
        pytest.skip(str(exc))
    source = Path(__file__).resolve().parents[1] / "fixtures" / "run" / "kb_add.py"
    if not source.exists():
        pytest.skip("no KernelBench fixture")
    (tmp_path / "pyproject.toml").write_text("")
    copy = tmp_path / "kb_add.py"
    shutil.copy(source, copy)
    assert main(["profile", str(copy), "--backend", "interpret", "--format", "json"]) == 0
    capsys.readouterr()
    stored = recorded_for(str(copy), copy.read_text())
    assert stored and all(x["file"] == str(copy) for x in stored)
