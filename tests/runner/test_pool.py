"""Worker pool fault handling: hangs, crashes, exits, memory blow-ups and cancellation.

The workers here run the fault-injection job kind, which needs only the standard library, so these
tests use this interpreter (no runner environment needed).
"""

from __future__ import annotations

import os
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tritonlens.ascend_runner.pool import PoolConfig, WorkerPool


def fault(action: str, **payload: Any) -> dict[str, Any]:
    return {
        "schema": 1,
        "id": uuid.uuid4().hex,
        "kind": "_fault",
        "backend": "cuda",
        "payload": {"action": action, **payload},
    }


@pytest.fixture()
def pool() -> Iterator[WorkerPool]:
    p = WorkerPool(
        PoolConfig(
            python=sys.executable,
            size=1,
            memory_limit_mb=1024,
            address_space_cap=True,  # the allocate fault relies on it, even on a machine with a GPU
            env={"TRITONLENS_WORKER_TEST_HOOKS": "1"},
            name="test",
        )
    )
    yield p
    p.close()


def echo_pid(pool: WorkerPool) -> int:
    reply = pool.submit(fault("echo", value=1), timeout_s=20)
    assert reply["ok"], reply
    return int(reply["result"]["pid"])


def test_workers_are_reused(pool: WorkerPool) -> None:
    first = echo_pid(pool)
    assert echo_pid(pool) == first
    assert pool.started_workers == 1


@pytest.mark.parametrize(
    ("action", "payload", "reason", "words"),
    [
        ("segfault", {}, "crash", "SIGSEGV"),
        ("exit", {"code": 7}, "crash", "status 7"),
        ("allocate", {"mb": 4096}, "memory", "out of memory"),
    ],
)
def test_dead_worker_fails_the_job_and_is_replaced(
    pool: WorkerPool, action: str, payload: dict[str, Any], reason: str, words: str
) -> None:
    before = echo_pid(pool)
    reply = pool.submit(fault(action, **payload), timeout_s=20)
    assert reply["ok"] is False
    assert reply["error"]["stage"] == "worker"
    assert reply["error"]["reason"] == reason
    assert words in reply["error"]["message"]
    after = echo_pid(pool)  # the next job works, on a new process
    assert after != before
    assert pool.started_workers == 2


def test_resident_memory_watchdog() -> None:
    # The address-space cap is off here (no limit passed to the worker): the pool's RSS watch must act.
    pool = WorkerPool(
        PoolConfig(
            python=sys.executable,
            memory_limit_mb=200,
            address_space_cap=False,
            env={"TRITONLENS_WORKER_TEST_HOOKS": "1"},
        )
    )
    try:
        before = echo_pid(pool)
        reply = pool.submit(fault("hold", mb=400, seconds=10), timeout_s=20)
        assert reply["ok"] is False and reply["error"]["reason"] == "memory"
        assert "over the 200 MB limit" in reply["error"]["message"]
        assert echo_pid(pool) != before
    finally:
        pool.close()


def test_timeout_kills_and_replaces(pool: WorkerPool) -> None:
    before = echo_pid(pool)
    started = time.monotonic()
    reply = pool.submit(fault("hang"), timeout_s=0.5)
    assert time.monotonic() - started < 5
    assert reply["ok"] is False and reply["error"]["reason"] == "timeout"
    assert "0.5 s timeout" in reply["error"]["message"]
    assert echo_pid(pool) != before


def test_handler_exception_keeps_the_worker(pool: WorkerPool) -> None:
    before = echo_pid(pool)
    reply = pool.submit(fault("raise", message="kaput"), timeout_s=20)
    assert reply["ok"] is False
    assert "ValueError: kaput" in reply["error"]["message"]
    assert echo_pid(pool) == before


def test_stdout_noise_does_not_break_the_channel(pool: WorkerPool) -> None:
    reply = pool.submit(fault("print"), timeout_s=20)
    assert reply["ok"] and reply["result"] == {"printed": True}


def test_cancellation_kills_the_running_job(pool: WorkerPool) -> None:
    before = echo_pid(pool)
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    reply = pool.submit(fault("hang"), cancel=cancel, timeout_s=30)
    assert time.monotonic() - started < 5
    assert reply["error"]["reason"] == "cancelled"
    assert echo_pid(pool) != before


def test_concurrent_jobs_share_a_bounded_pool() -> None:
    pool = WorkerPool(PoolConfig(python=sys.executable, size=2, env={"TRITONLENS_WORKER_TEST_HOOKS": "1"}))
    try:
        replies: list[dict[str, Any]] = []
        lock = threading.Lock()

        def work() -> None:
            reply = pool.submit(fault("sleep", seconds=0.2), timeout_s=30)
            with lock:
                replies.append(reply)

        threads = [threading.Thread(target=work) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert len(replies) == 6 and all(r["ok"] for r in replies)
        assert len({r["result"]["pid"] for r in replies}) <= 2
        assert pool.started_workers <= 2
    finally:
        pool.close()


def test_fault_kind_is_absent_without_the_test_switch() -> None:
    pool = WorkerPool(PoolConfig(python=sys.executable, env={"TRITONLENS_WORKER_TEST_HOOKS": "0"}))
    try:
        reply = pool.submit(fault("echo"), timeout_s=20)
        assert reply["ok"] is False
        assert "unknown job kind '_fault'" in reply["error"]["message"]
    finally:
        pool.close()


def test_missing_interpreter_is_a_clear_failure() -> None:
    pool = WorkerPool(PoolConfig(python="/nonexistent/python"))
    reply = pool.submit(fault("echo"), timeout_s=5)
    assert reply["ok"] is False
    assert "/nonexistent/python" in reply["error"]["message"]
    pool.close()


def test_worker_private_triton_cache_is_removed(pool: WorkerPool) -> None:
    reply = pool.submit(fault("echo"), timeout_s=20)
    folder = reply["result"]["triton_cache"]
    assert folder and os.path.isdir(folder) and "tritonlens-worker-" in folder
    pool.submit(fault("exit", code=1), timeout_s=20)  # a dead worker's folder goes with it
    assert not os.path.exists(folder)
    second = pool.submit(fault("echo"), timeout_s=20)["result"]["triton_cache"]
    assert second != folder and os.path.isdir(second)
    pool.close()
    assert not os.path.exists(second)


def test_prestart_gives_the_first_job_a_running_worker(pool: WorkerPool) -> None:
    pool.prestart()
    stats = pool.stats()
    assert stats["idle"] == 1 and stats["started"] == 1
    assert echo_pid(pool) == stats["idle_pids"][0]
    pool.prestart()  # already has a worker: starts nothing
    assert pool.started_workers == 1
