"""Fault injection for the pool's tests: a job kind that hangs, crashes, exits or eats memory on request.

Imported by main.py only when TRITONLENS_WORKER_TEST_HOOKS=1, and refuses to act otherwise, so a
production worker never exposes it.
"""

from __future__ import annotations

import ctypes
import os
import time
from typing import Any

_SLEEPER = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(120)"


def handle_fault(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    if os.environ.get("TRITONLENS_WORKER_TEST_HOOKS") != "1":
        raise RuntimeError("test hooks are disabled")
    action = payload.get("action")
    if action == "echo":
        return {
            "echo": payload.get("value"),
            "pid": os.getpid(),
            "triton_cache": os.environ.get("TRITON_CACHE_DIR"),
        }
    if action == "where":  # what a job can see of its process: folder and environment
        return {"cwd": os.getcwd(), "env": dict(os.environ)}
    if action == "sleep":
        time.sleep(float(payload.get("seconds", 0)))
        return {"slept": payload.get("seconds"), "pid": os.getpid()}
    if action == "hang":
        while True:
            time.sleep(1)
    if action == "detach":
        # A grandchild in its own session that keeps the worker's stderr open (optionally re-parented to
        # init by a double fork), then hang: the pool must still end the job at its timeout.
        import subprocess
        import sys

        if payload.get("double_fork"):
            code = "import os, subprocess, sys; subprocess.Popen([sys.executable, '-c', sys.argv[2], sys.argv[1]], start_new_session=True); os._exit(0)"
            argv = [sys.executable, "-c", code, str(payload["pid_file"]), _SLEEPER]
        else:
            argv = [sys.executable, "-c", _SLEEPER, str(payload["pid_file"])]
        subprocess.Popen(argv, start_new_session=True)
        while True:
            time.sleep(1)
    if action == "segfault":
        ctypes.string_at(0)  # reads address 0: SIGSEGV
    if action == "exit":
        os._exit(int(payload.get("code", 7)))
    if action == "allocate":
        blob = bytearray(int(payload.get("mb", 1)) * 1024 * 1024)
        return {"allocated_mb": len(blob) // (1024 * 1024)}
    if action == "hold":
        # Touch every page so the memory is resident, then wait for the pool's watchdog.
        blob = bytearray(b"x" * (int(payload.get("mb", 1)) * 1024 * 1024))
        time.sleep(float(payload.get("seconds", 5)))
        return {"held_mb": len(blob) // (1024 * 1024)}
    if action == "raise":
        raise ValueError(str(payload.get("message", "boom")))
    if action == "print":
        print("noise on stdout that must not reach the protocol channel")
        return {"printed": True}
    raise ValueError(f"unknown fault action {action!r}")
