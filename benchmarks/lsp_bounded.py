"""Language server memory and responsiveness under load (issue 21, item 7): a benchmark, not a test.

Against the real server subprocess over stdio (tests/hardening/raw_lsp.py), on generated files of realistic
Triton kernels (benchmarks/lsp_latency.generate):

- memory (VmRSS of the server) while typing: a 2,000-line file, one edit + hover per step, 40 steps; a
  50,000-line file, 12 steps (`--large`);
- memory over open/close cycles of distinct 2,000-line files (19 cycles);
- hover latency after a burst of 5,000 didChange (measured from the last write), after opening 200 documents
  (hover on the last one opened), and the `shutdown` answer right after a save of examples/matmul.py
  (trusted workspace: the save starts a compile).

    .venv/bin/python benchmarks/lsp_bounded.py [--python OTHER_PYTHON] [--label NAME] [--large]

`--python` runs another checkout's server (e.g. /work/main/.venv/bin/python for the code before a change).
Results are merged into benchmarks/results/lsp_bounded.json under the label.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "hardening"))

import raw_lsp  # noqa: E402
from raw_lsp import RawServer  # noqa: E402

from benchmarks.lsp_latency import generate  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "lsp_bounded.json"
TRUSTED = {"workspaceTrust": "trusted"}


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def hover(server: RawServer, uri: str, timeout: float = 120) -> float | None:
    started = time.monotonic()
    answer = server.request(
        "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 5, "character": 3}}, timeout
    )
    server.server_requests()
    return round(time.monotonic() - started, 3) if answer is not None else None


def open_doc(server: RawServer, uri: str, text: str) -> None:
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})


def typing(lines: int, steps: int) -> dict[str, Any]:
    server = RawServer()
    server.initialize(options=TRUSTED)
    try:
        text = generate(lines)
        uri = "file:///tmp/tritonlens-bench/typed.py"
        open_doc(server, uri, text)
        hover(server, uri)
        rss = [rss_mb(server.proc.pid)]
        count = text.count("\n")
        for version in range(2, steps + 2):
            line = (version * 37) % count
            change = {"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
                      "text": f"# edit {version}\n"}
            server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                     "contentChanges": [change]})
            hover(server, uri)
            rss.append(rss_mb(server.proc.pid))
        return {"lines": count + 1, "steps": steps, "rss_mb": rss}
    finally:
        server.close()


def open_close(lines: int, cycles: int) -> dict[str, Any]:
    server = RawServer()
    server.initialize(options=TRUSTED)
    try:
        text = generate(lines)
        rss = [rss_mb(server.proc.pid)]
        for cycle in range(cycles):
            uri = f"file:///tmp/tritonlens-bench/distinct_{cycle}.py"
            open_doc(server, uri, text.replace("_kernel_", f"_k{cycle}_"))
            hover(server, uri)
            server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
            rss.append(rss_mb(server.proc.pid))
        return {"lines": lines, "cycles": cycles, "rss_mb": rss}
    finally:
        server.close()


def load() -> dict[str, Any]:
    server = RawServer()
    server.initialize(options=TRUSTED)
    out: dict[str, Any] = {}
    try:
        text = generate(2000)
        uri = "file:///tmp/tritonlens-bench/burst.py"
        open_doc(server, uri, text)
        hover(server, uri)
        started = time.monotonic()
        for version in range(2, 5002):
            change = {"range": {"start": {"line": 1000, "character": 0}, "end": {"line": 1000, "character": 0}},
                      "text": "x"}
            server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                     "contentChanges": [change]})
        out["burst_5000_send_s"] = round(time.monotonic() - started, 3)
        out["hover_after_burst_s"] = hover(server, uri)
        for size in (200, 2000):
            small = generate(size)
            last = ""
            for n in range(200):
                last = f"file:///tmp/tritonlens-bench/open{size}_{n}.py"
                open_doc(server, last, small.replace("_kernel_", f"_o{n}_"))
            out[f"hover_after_200_opens_{size}_lines_s"] = hover(server, last)
        matmul = ROOT / "examples" / "matmul.py"
        muri = matmul.as_uri()
        open_doc(server, muri, matmul.read_text())
        hover(server, muri)
        server.notify("textDocument/didSave", {"textDocument": {"uri": muri}})
        time.sleep(1.0)
        server.server_requests()
        started = time.monotonic()
        rid = server.request_async("shutdown", None)
        answered = server.response(rid, 30)
        out["shutdown_after_save_s"] = round(time.monotonic() - started, 3) if answered else None
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default=sys.executable, help="the interpreter whose tritonlens server runs")
    parser.add_argument("--label", default="this checkout")
    parser.add_argument("--large", action="store_true", help="also type in a 50,000-line file (slow)")
    args = parser.parse_args()
    raw_lsp.SERVER_COMMAND[0] = args.python
    result: dict[str, Any] = {
        "python": args.python,
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": {"cpus": os.cpu_count(), "load_average": os.getloadavg(), "python": platform.python_version()},
        "typing_2000": typing(2000, 40),
        "open_close_2000": open_close(2000, 19),
        "load": load(),
    }
    if args.large:
        result["typing_50000"] = typing(50_000, 12)
    print(json.dumps(result, indent=1))
    saved = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    saved[args.label] = result
    RESULTS.write_text(json.dumps(saved, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
