"""Issue 14, item 5: a job whose process detaches a grandchild (setsid, double fork) still ends at its timeout,
the grandchild dies with it, health stays answerable meanwhile, and nothing blocks on the grandchild's pipes.

Workers run the fault-injection job kind under this interpreter (no runner environment needed).
"""

from __future__ import annotations

import os
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tritonlens.ascend_runner.client import LocalRunner
from tritonlens.ascend_runner.pool import PoolConfig, WorkerPool


def fault(action: str, **payload: Any) -> dict[str, Any]:
    return {
        "schema": 1,
        "id": uuid.uuid4().hex,
        "kind": "_fault",
        "backend": "cuda",
        "payload": {"action": action, **payload},
    }


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


def _wait_for_pid(path: Path, seconds: float = 20) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"the grandchild never wrote {path}")


@pytest.fixture()
def pool():
    p = WorkerPool(
        PoolConfig(python=sys.executable, size=1, env={"TRITONLENS_WORKER_TEST_HOOKS": "1"}, name="tree")
    )
    yield p
    p.close()


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc")
@pytest.mark.parametrize("double_fork", [False, True])
def test_timeout_kills_detached_grandchild_without_blocking(pool: WorkerPool, tmp_path: Path, double_fork):
    pid_file = tmp_path / "grandchild.pid"
    result: dict[str, Any] = {}

    def submit() -> None:
        result.update(
            pool.submit(fault("detach", pid_file=str(pid_file), double_fork=double_fork), timeout_s=3)
        )

    started = time.monotonic()
    thread = threading.Thread(target=submit)
    thread.start()
    grandchild = _wait_for_pid(pid_file)
    thread.join(timeout=20)
    elapsed = time.monotonic() - started
    assert not thread.is_alive(), "the job did not end: killing its worker blocked on the grandchild's pipes"
    assert result["error"]["reason"] == "timeout", result
    assert elapsed < 15, f"a 3 s job took {elapsed:.1f} s to end"
    deadline = time.monotonic() + 5
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild), "the detached grandchild outlived its job"
    # The pool is usable at once: the next job gets a fresh worker.
    reply = pool.submit(fault("echo", value=2), timeout_s=20)
    assert reply["ok"] and reply["result"]["echo"] == 2


def test_health_answers_while_every_worker_is_busy(tmp_path: Path) -> None:
    runner = LocalRunner(
        {
            "cuda": {"python": sys.executable},
            "ascend": {"python": sys.executable},
            "workers": 1,
            "warm_up": False,
            "cache": False,
            "worker_env": {"TRITONLENS_WORKER_TEST_HOOKS": "1"},
        }
    )
    try:
        assert runner.health()["backends"]["cuda"]["available"]
        busy = threading.Thread(
            target=runner._pool("cuda").submit, args=(fault("sleep", seconds=8),), kwargs={"timeout_s": 20}
        )
        busy.start()
        time.sleep(1.0)  # the only cuda worker now holds the sleeping job
        started = time.monotonic()
        cuda = runner.health()["backends"]["cuda"]
        took = time.monotonic() - started
        assert cuda["available"], cuda
        assert cuda["pool"]["busy"] == 1
        assert took < 5, f"health waited {took:.1f} s for a free worker"
        busy.join(timeout=30)
    finally:
        runner.close()


def test_on_start_is_called_only_when_a_worker_takes_the_job(pool: WorkerPool) -> None:
    """A job waiting for a worker is queued, not running: the pool says when a worker took it."""
    events: list[str] = []
    first = threading.Thread(
        target=pool.submit,
        args=(fault("sleep", seconds=2),),
        kwargs={"timeout_s": 20, "on_start": lambda: events.append("first")},
    )
    first.start()
    time.sleep(0.5)
    second = threading.Thread(
        target=pool.submit,
        args=(fault("echo", value=1),),
        kwargs={"timeout_s": 20, "on_start": lambda: events.append("second")},
    )
    second.start()
    time.sleep(0.5)
    assert events == ["first"], "the second job was reported started while it waited for the only worker"
    first.join(timeout=20)
    second.join(timeout=20)
    assert events == ["first", "second"]
