"""Issue 14, item 6: SIGTERM or SIGKILL to a CLI that started a worker takes the worker (and its children) too.

A real `tritonlens check --level ir` is started on a file whose top-level code spins forever, so its compile
worker is busy at 100% CPU when the CLI is killed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc")

SPINNING = """\
import triton
import triton.language as tl

while True:  # the compile worker runs top-level statements: it spins here
    pass


# tritonlens: x_ptr=*fp32, BLOCK=128
@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
"""


def _children_running(parent: int, marker: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_bytes()
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
        except OSError:
            continue
        fields = stat.rsplit(b")", 1)[1].split()
        if int(fields[1]) == parent and marker.encode() in cmdline and fields[0] not in (b"Z", b"X"):
            found.append(int(name))
    return found


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in (b"Z", b"X")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_worker_dies_with_the_cli(tmp_path: Path, cuda_python: str, sig: int) -> None:
    source = tmp_path / "spin.py"
    source.write_text(SPINNING)
    env = {**os.environ, "TRITONLENS_CUDA_PYTHON": cuda_python, "TRITONLENS_CACHE_DIR": str(tmp_path / "c")}
    cli = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tritonlens.server.cli",
            "check",
            "--level",
            "ir",
            "--target",
            "sm_90",
            str(source),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not workers and time.monotonic() < deadline and cli.poll() is None:
            workers = _children_running(cli.pid, "worker/main.py")
            time.sleep(0.1)
        assert workers, "the CLI never started a worker"
        time.sleep(1.0)  # let it reach the spinning statement
        cli.send_signal(sig)
        cli.wait(timeout=20)
        deadline = time.monotonic() + 10
        while not all(_gone(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(_gone(w) for w in workers), f"worker(s) {workers} outlived the CLI killed by {sig!r}"
    finally:
        if cli.poll() is None:
            cli.kill()
        for pid in workers:  # a failed run must not leave a spinning worker behind
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)
