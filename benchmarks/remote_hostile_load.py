"""The runner service under hostile load on loopback (issue 21, deliverable 5; a benchmark, not a test).

A real service (uvicorn, the service's guards) on 127.0.0.1 in front of an echo runner, and three phases, each
bounded in time:
1. quiet: a token holder's health and submit requests, one new connection each;
2. slowloris: 100 (then 300, past the service's cap of 256 waiting connections) tokenless connections that trickle a request head one byte at a time, while the token holder
   sends the same requests;
3. crowd: 100 concurrent clients (50 tokenless, 50 token holders) each sending requests in a loop.
For the token holder's requests: count, failures (refused, reset, timed out, non-2xx) and p50/p99/max seconds.

    .venv/bin/python benchmarks/remote_hostile_load.py [--label after] [--seconds 8]

Merges the numbers under `--label` into benchmarks/results/remote_hostile_load.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import socket
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import requests

from tritonlens.ascend_runner.remote_gate import uvicorn_server
from tritonlens.ascend_runner.remote_server import ServerConfig, create_app

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "remote_hostile_load.json"
TOKEN = "bench-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


class EchoRunner:
    def submit(self, job: dict[str, Any], *, cancel=None, timeout_s=None, on_start=None) -> dict[str, Any]:
        if on_start is not None:
            on_start()
        return {"schema": 1, "id": job["id"], "ok": True, "kind": job["kind"], "result": {}}

    def health(self) -> dict[str, Any]:
        return {}

    def close(self) -> None:
        pass


def start_service(root: Path) -> tuple[Any, threading.Thread, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = ServerConfig(token=TOKEN, max_concurrency=4, max_queue=64, sandbox_root=root / "jobs")
    server = uvicorn_server(create_app(config, EchoRunner()), token=TOKEN, host="127.0.0.1", port=port,
                            log_level="critical")
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    if not server.started:
        raise SystemExit("the service did not start")
    return server, thread, f"http://127.0.0.1:{port}"


def one_request(url: str, which: str, headers: dict[str, str]) -> tuple[float, bool]:
    """One request on a fresh connection: (seconds, ok)."""
    started = time.perf_counter()
    try:
        if which == "health":
            r = requests.get(f"{url}/v1/health", headers=headers, timeout=5)
        else:
            body = {"schema": 1, "id": uuid.uuid4().hex, "kind": "run", "backend": "interpret", "payload": {}}
            r = requests.post(f"{url}/v1/jobs", json=body, headers=headers, timeout=5)
        ok = r.status_code < 300
    except requests.RequestException:
        ok = False
    return time.perf_counter() - started, ok


def holder(url: str, seconds: float, out: dict[str, list[tuple[float, bool]]], pause_s: float = 0.02) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for which in ("health", "submit"):
            out[which].append(one_request(url, which, AUTH))
        time.sleep(pause_s)


def summary(samples: list[tuple[float, bool]]) -> dict[str, Any]:
    times = sorted(t for t, _ in samples)
    if not times:
        return {"n": 0}

    def pct(p: float) -> float:
        return round(times[min(len(times) - 1, int(p * len(times)))], 4)

    return {"n": len(times), "failed": sum(1 for _, ok in samples if not ok), "p50_s": pct(0.5),
            "p99_s": pct(0.99), "max_s": round(times[-1], 4)}


def slowloris(url: str, n: int, seconds: float, stop: threading.Event) -> dict[str, int]:
    """n tokenless connections trickling a request head; each reopened when the service closes it."""
    host, port = url.removeprefix("http://").split(":")
    head = b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 4000
    socks: list[tuple[socket.socket, int]] = []
    opened = closed = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not stop.is_set():
        while len(socks) < n:
            try:
                s = socket.create_connection((host, int(port)), timeout=1)
                s.setblocking(False)
                socks.append((s, 0))
                opened += 1
            except OSError:
                break
        kept = []
        for s, sent in socks:
            try:
                s.send(head[sent:sent + 1] if sent < len(head) else b"a")
                kept.append((s, sent + 1))
            except OSError:
                closed += 1
                s.close()
        socks = kept
        time.sleep(0.2)
    for s, _ in socks:
        s.close()
    return {"opened": opened, "closed_by_service": closed}


def phase_quiet(url: str, seconds: float) -> dict[str, Any]:
    out: dict[str, list[tuple[float, bool]]] = {"health": [], "submit": []}
    holder(url, seconds, out)
    return {k: summary(v) for k, v in out.items()}


def phase_slowloris(url: str, seconds: float, n: int = 100) -> dict[str, Any]:
    stop = threading.Event()
    attack: dict[str, Any] = {}
    t = threading.Thread(target=lambda: attack.update(slowloris(url, n, seconds + 1, stop)), daemon=True)
    t.start()
    time.sleep(1.0)  # the 100 connections are open
    out: dict[str, list[tuple[float, bool]]] = {"health": [], "submit": []}
    holder(url, seconds, out)
    stop.set()
    t.join(timeout=10)
    return {"attack": attack, **{k: summary(v) for k, v in out.items()}}


def phase_crowd(url: str, seconds: float) -> dict[str, Any]:
    holders = [{"health": [], "submit": []} for _ in range(50)]
    strangers = [{"health": [], "submit": []} for _ in range(50)]

    def stranger(out: dict[str, list[tuple[float, bool]]]) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for which in ("health", "submit"):
                out[which].append(one_request(url, which, {"Authorization": "Bearer wrong"}))

    threads = [threading.Thread(target=holder, args=(url, seconds, o, 0.0), daemon=True) for o in holders]
    threads += [threading.Thread(target=stranger, args=(o,), daemon=True) for o in strangers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds + 30)
    merged = {k: [s for o in holders for s in o[k]] for k in ("health", "submit")}
    return {"clients": 100, **{k: summary(v) for k, v in merged.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="after")
    parser.add_argument("--seconds", type=float, default=8.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server, thread, url = start_service(Path(tmp))
        try:
            result = {
                "quiet": phase_quiet(url, args.seconds / 2),
                "slowloris_100": phase_slowloris(url, args.seconds),
                "slowloris_300": phase_slowloris(url, args.seconds, 300),  # past the cap of waiting connections
                "crowd_100": phase_crowd(url, args.seconds),
            }
        finally:
            server.should_exit = True
            thread.join(timeout=15)
    result["machine"] = {"python": platform.python_version(), "cpu": platform.processor() or platform.machine(),
                         "note": "loopback, service and load in one process; machine shared with other jobs"}
    print(json.dumps(result, indent=2))
    saved = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    saved[args.label] = result
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(saved, indent=2) + "\n")


if __name__ == "__main__":
    main()
