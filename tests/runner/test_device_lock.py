"""Timings of jobs sharing one device take turns (bench --jobs N): the lock that makes them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

WORKER = Path(__file__).resolve().parents[2] / "ascend_runner" / "worker"
sys.path.insert(0, str(WORKER))

import device_lock  # noqa: E402

from tritonlens.ascend_runner.client import DEVICE_LOCK_ENV, share_device  # noqa: E402

HOLDER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, sys.argv[1])
    import device_lock
    with device_lock.exclusive():
        start = time.time()
        print("held", start, flush=True)
        time.sleep(float(sys.argv[2]))
        print("released", time.time(), flush=True)
""")


def _holder(lock: Path, seconds: float, tmp_path: Path, name: str) -> subprocess.Popen[str]:
    script = tmp_path / f"{name}.py"
    script.write_text(HOLDER)
    env = {**os.environ, device_lock.ENV: str(lock)}
    return subprocess.Popen([sys.executable, str(script), str(WORKER), str(seconds)], env=env,
                            stdout=subprocess.PIPE, text=True)


def _spans(proc: subprocess.Popen[str], first_line: str = "") -> tuple[float, float]:
    assert proc.stdout is not None
    out = first_line + proc.stdout.read()
    proc.wait(timeout=60)
    said = dict(line.split() for line in out.splitlines() if line.startswith(("held", "released")))
    return float(said["held"]), float(said["released"])


def test_two_processes_never_hold_the_device_at_once(tmp_path: Path) -> None:
    lock = tmp_path / "device.lock"
    lock.touch()
    lock.chmod(0o444)  # opened read-only, as inside a candidate's read-only sandbox
    first = _holder(lock, 1.0, tmp_path, "a")
    assert first.stdout is not None
    held = first.stdout.readline()  # the first holds it now
    assert held.startswith("held")
    second = _holder(lock, 0.2, tmp_path, "b")
    spans = sorted([_spans(first, held), _spans(second)])
    assert spans[1][0] >= spans[0][1], f"the second held the device before the first let go: {spans}"


def test_without_a_named_lock_nothing_waits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(device_lock.ENV, raising=False)
    with device_lock.exclusive(), device_lock.exclusive():
        pass


def test_a_named_lock_that_cannot_be_opened_is_an_error_not_an_unlocked_timing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(device_lock.ENV, str(tmp_path / "absent" / "device.lock"))
    with pytest.raises(device_lock.DeviceLockUnavailable, match="cannot be opened"):
        with device_lock.exclusive():
            pass


def test_reentrant_within_a_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lock = tmp_path / "device.lock"
    lock.touch()
    monkeypatch.setenv(device_lock.ENV, str(lock))
    with device_lock.exclusive(), device_lock.exclusive():  # an interleaved series around its samples
        pass
    with device_lock.exclusive():  # released: taken again
        pass


def test_share_device_names_a_lock_file_and_keeps_a_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITONLENS_CACHE_DIR", str(tmp_path / "cache"))
    environ: dict[str, str] = {}
    path = share_device(environ)
    assert environ[DEVICE_LOCK_ENV] == path and Path(path).is_file()
    mine = tmp_path / "mine.lock"
    environ = {DEVICE_LOCK_ENV: str(mine)}
    assert share_device(environ) == str(mine) and mine.is_file()


def test_the_sandbox_passes_the_lock_to_candidates() -> None:
    import sandbox_exec

    env = sandbox_exec.allowed_environment({DEVICE_LOCK_ENV: "/x/device.lock", "API_TOKEN": "s"})
    assert env.get(DEVICE_LOCK_ENV) == "/x/device.lock" and "API_TOKEN" not in env


def test_a_wait_behind_another_jobs_hold_is_counted(tmp_path: Path) -> None:
    """A job's time waiting for the device is counted, so the client can leave it out of the task's time budget."""
    lock = tmp_path / "device.lock"
    lock.touch()
    first = _holder(lock, 1.0, tmp_path, "a")
    assert first.stdout is not None
    held = first.stdout.readline()
    assert held.startswith("held")
    script = tmp_path / "waiter.py"
    script.write_text(textwrap.dedent("""
        import sys
        sys.path.insert(0, sys.argv[1])
        import device_lock
        assert device_lock.waited_s() == 0.0
        with device_lock.exclusive():
            pass
        print(device_lock.waited_s())
    """))
    env = {**os.environ, device_lock.ENV: str(lock)}
    waited = subprocess.run([sys.executable, str(script), str(WORKER)], env=env, capture_output=True, text=True,
                            timeout=60, check=True)
    _spans(first, held)
    assert 0.3 < float(waited.stdout) < 30  # it waited for most of the holder's second


def test_a_jobs_reply_carries_its_wait_and_its_candidates(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("tl_worker_main_wait", WORKER / "main.py")
    main = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(main)

    def verify(kind: str, payload: dict) -> dict:
        device_lock._waited[0] += 2.0  # this process waited 2 s; its candidate's process reported 1.5 s
        return {"ok": True, "device_wait_s": 1.5}

    monkeypatch.setitem(main.HANDLERS, "verify", verify)
    monkeypatch.setattr(device_lock, "_waited", [0.0])
    reply = main.run_one({"schema": main.SCHEMA_VERSION, "id": "1", "kind": "verify", "backend": "interpret",
                          "payload": {"harness": {"mode": "kernelbench", "path": "k.py"}}})
    assert reply["ok"] and reply["result"]["device_wait_s"] == pytest.approx(3.5)
