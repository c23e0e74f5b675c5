"""A verify job gets a worker that has run nothing and is not reused (issue 21: on the remote runner, one client's
job patched torch in a long-lived worker and another client's wrong candidate then passed). The local, remote and
Ray runners all run jobs through WorkerPool, so the pool is where this is shown."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tritonlens.ascend_runner.pool import PoolConfig, WorkerPool


def job(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"schema": 1, "id": uuid.uuid4().hex, "kind": kind, "backend": "cuda", "payload": payload}


@pytest.fixture()
def pool() -> Iterator[WorkerPool]:
    p = WorkerPool(PoolConfig(python=sys.executable, size=1, env={"TRITONLENS_WORKER_TEST_HOOKS": "1"}, name="t"))
    yield p
    p.close()


def pid_of(pool: WorkerPool) -> int:
    reply = pool.submit(job("_fault", {"action": "echo", "value": 1}), timeout_s=20)
    assert reply["ok"], reply
    return int(reply["result"]["pid"])


def test_each_verify_job_gets_a_fresh_worker_used_once(pool: WorkerPool) -> None:
    first = pid_of(pool)
    assert pid_of(pool) == first  # other jobs reuse their worker
    # A verify job (this one fails at once: this interpreter has no torch, or the file is missing) still runs.
    verify = job("verify", {"harness": {"mode": "kernelbench", "path": "/nonexistent/kb.py"}, "seeds": [0]})
    for _ in range(2):
        assert pool.submit(verify, timeout_s=60)["id"] == verify["id"]
    assert pool.started_workers == 3  # the used worker was not given the verify job, nor was the first verify's
    assert pid_of(pool) != first
    assert pool.started_workers == 4
