"""Issue 14, item 14: a kernel that imports a sibling module compiles and profiles through a remote runner.

The client (RemoteRunner) uploads the user's modules the file imports as `files`; the service writes them in
the job's private folder, which becomes the job's only import folder (never the folder the client's path names
on the runner host).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from remote_service import TOKEN, serve

from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.ascend_runner.environments import EnvironmentUnavailable, find_environment
from tritonlens.ascend_runner.protocol import CompileRequest, new_job
from tritonlens.ascend_runner.remote_client import RemoteRunner, with_local_files

HELPERS = """\
import triton
import triton.language as tl

BLOCK = 128


@triton.jit
def twice(x):
    return x * 2
"""

KERNEL = """\
import torch
import triton
import triton.language as tl

from helpers import BLOCK, twice


@triton.jit
def double_kernel(x_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    tl.store(out_ptr + offs, twice(tl.load(x_ptr + offs, mask=mask)), mask=mask)


if __name__ == "__main__":
    x = torch.arange(300, dtype=torch.float32)
    out = torch.empty_like(x)
    double_kernel[(triton.cdiv(300, BLOCK),)](x, out, 300, BLOCK_SIZE=BLOCK)
    assert torch.equal(out, x * 2)
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("project")
    (folder / "helpers.py").write_text(HELPERS)
    (folder / "kernel.py").write_text(KERNEL)
    return folder / "kernel.py"


@pytest.fixture
def local():  # the service closes its runner when it stops: one per test
    try:
        find_environment("cuda")
    except EnvironmentUnavailable as exc:
        pytest.skip(str(exc))
    runner = LocalRunner({"cache": False, "workers": 1})
    yield runner
    runner.close()


def test_client_attaches_the_modules_the_file_imports(project: Path) -> None:
    job = new_job("run", "interpret", {"harness": {"mode": "script", "path": str(project)}})
    sent = with_local_files(job)["payload"]
    assert sent["harness"]["source"] == KERNEL  # the runner cannot read the client's disk
    assert sent["files"] == {"helpers.py": HELPERS}


# The client's path names a folder the runner host does not have: only the uploaded files can satisfy imports.
ELSEWHERE = "/nonexistent/client/project/kernel.py"


def test_kernel_importing_a_sibling_compiles_remotely(local, tmp_path) -> None:
    req = CompileRequest(
        source=KERNEL,
        path=ELSEWHERE,
        files={"helpers.py": HELPERS},
        kernel="double_kernel",
        signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "BLOCK_SIZE": "constexpr"},
        constants={"BLOCK_SIZE": 128},
        target="sm_90",
    )
    with serve(tmp_path, runner=local, max_body_bytes=4 * 1024 * 1024) as (url, _):
        result = RemoteRunner(url, TOKEN).compile(req, timeout_s=240)
    assert result.ok, result.errors
    assert "ttir" in result.stages


@pytest.mark.slow
def test_kernel_importing_a_sibling_profiles_remotely(project: Path, local, tmp_path) -> None:
    payload = {
        "harness": {"mode": "script", "path": ELSEWHERE, "source": KERNEL},
        "files": {"helpers.py": HELPERS},
        "time_launches": False,
    }
    with serve(tmp_path, runner=local, max_body_bytes=4 * 1024 * 1024) as (url, _):
        reply = RemoteRunner(url, TOKEN).profile("interpret", payload, timeout_s=400)
    assert reply["ok"], reply.get("error")
    result = reply["result"]
    assert result["ok"], result["errors"]
    assert [launch["kernel"] for launch in result["launches"]] == ["double_kernel"]
    assert sys.modules.get("helpers") is None
