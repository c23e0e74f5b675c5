"""Hostile load on loopback (issue 21, deliverable 5): tokenless connections that trickle their request heads
must not lock token holders out. Bounded: a few seconds, 127.0.0.1 only, stops by itself."""

from __future__ import annotations

import socket
import time

import requests
from remote_service import TOKEN, serve

AUTH = {"Authorization": f"Bearer {TOKEN}"}


def test_slow_tokenless_connections_past_the_cap_do_not_lock_out_token_holders(tmp_path):
    with serve(tmp_path, max_pending_connections=8) as (url, _):
        host, port = url.removeprefix("http://").split(":")
        slow = []
        for _ in range(20):  # more than the cap, each with half a request head
            s = socket.create_connection((host, int(port)), timeout=2)
            s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n")
            slow.append(s)
        time.sleep(0.2)
        try:
            slowest = 0.0
            for _ in range(20):
                started = time.perf_counter()
                reply = requests.get(f"{url}/v1/health", headers=AUTH, timeout=5)
                slowest = max(slowest, time.perf_counter() - started)
                assert reply.status_code == 200
                for s in slow[:2]:  # keep trickling, as an attacker would
                    try:
                        s.send(b"X")
                    except OSError:
                        pass
            assert slowest < 1.0
        finally:
            for s in slow:
                s.close()
