"""Scaling of the cases issue 14 found super-linear (a benchmark, not a test).

1. `tritonlens check` on a file whose kernel calls a chain of N jit helpers (N = 100, 400, 800).
2. Against the real language server over stdio: `textDocument/codeLens` on a file of K kernels (K = 1,000, 3,000),
   and how long a hover on another (small) document waits when it is sent 0.1 s after that codeLens request.

    .venv/bin/python benchmarks/hardening_scaling.py [--python PATH] [--label after] [--quick]

`--python` picks the interpreter whose tritonlens is measured (e.g. an older checkout's .venv/bin/python, to get
"before" numbers). Prints a table and merges the numbers under `--label` into
benchmarks/results/hardening_scaling.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "hardening_scaling.json"
HOVER_DELAY_S = 0.1  # the hover on the other document is sent this long after the codeLens request

HEADER = "import triton\nimport triton.language as tl\n\n"


def helper_chain(n: int) -> str:
    """One kernel calling helper_0, which calls helper_1, ... helper_{n-1}."""
    parts = [HEADER]
    for i in range(n):
        call = f"    x = helper_{i + 1}(x)\n" if i + 1 < n else ""
        parts.append(f"@triton.jit\ndef helper_{i}(x):\n{call}    return x + {i}\n\n\n")
    parts.append(
        "@triton.jit\ndef kernel(X, N, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    x = helper_0(tl.load(X + offs, mask=offs < N))\n"
        "    tl.store(X + offs, x, mask=offs < N)\n"
    )
    return "".join(parts)


def many_kernels(k: int) -> str:
    """K small kernels, each with a launch (each gets lenses and a few findings)."""
    parts = [HEADER]
    for i in range(k):
        parts.append(
            f"@triton.jit\ndef k_{i}(X, Y, N, BLOCK: tl.constexpr):\n"
            "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
            "    x = tl.load(X + offs, mask=offs < N)\n"
            "    tl.store(Y + offs, x * 2, mask=offs < N)\n\n\n"
            f"def run_{i}(x, y):\n    k_{i}[(x.numel() // 100,)](x, y, x.numel(), BLOCK=100)\n\n\n"
        )
    return "".join(parts)


def time_check(python: str, path: Path) -> float:
    started = time.perf_counter()
    subprocess.run(
        [python, "-m", "tritonlens.server.cli", "check", str(path)],
        check=False,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=900,
    )
    return time.perf_counter() - started


async def lens_and_hover(python: str, workdir: Path, k: int) -> dict[str, Any]:
    client = LanguageClient("tritonlens-bench", "1")
    published: dict[str, int] = {}

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_publish(params: types.PublishDiagnosticsParams) -> None:
        published[params.uri] = params.version or 0

    await client.start_io(python, "-m", "tritonlens.server.cli", "serve")
    caps = types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True)
        )
    )
    await client.initialize_async(types.InitializeParams(capabilities=caps))
    client.initialized(types.InitializedParams())

    def open_doc(name: str, text: str) -> str:
        uri = (workdir / name).as_uri()
        item = types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        client.text_document_did_open(types.DidOpenTextDocumentParams(item))
        return uri

    async def analysed(uri: str) -> None:
        deadline = time.perf_counter() + 600
        while uri not in published and time.perf_counter() < deadline:
            await asyncio.sleep(0.02)

    small = open_doc("small.py", many_kernels(1))
    big = open_doc(f"big_{k}.py", many_kernels(k))
    await analysed(small)
    await analysed(big)
    sent = time.perf_counter()
    lens_task = asyncio.ensure_future(
        client.text_document_code_lens_async(types.CodeLensParams(text_document=types.TextDocumentIdentifier(big)))
    )
    await asyncio.sleep(HOVER_DELAY_S)  # the server is busy with the lenses by now
    hover_sent = time.perf_counter()
    await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(small), types.Position(4, 8))
    )
    hover_s = time.perf_counter() - hover_sent
    lenses = await lens_task
    lens_s = time.perf_counter() - sent
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return {"kernels": k, "lenses": len(lenses or []), "codelens_s": round(lens_s, 3), "hover_s": round(hover_s, 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", default=sys.executable, help="interpreter whose tritonlens is measured")
    parser.add_argument("--label", default="after", help="key under which the numbers are saved")
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    args = parser.parse_args()
    chains = [20, 50] if args.quick else [100, 400, 800]
    lens_sizes = [50] if args.quick else [1000, 3000]
    out: dict[str, Any] = {"python": args.python, "machine": platform.platform(), "cpus": os.cpu_count()}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        out["check_helper_chain"] = []
        for n in chains:
            path = work / f"chain_{n}.py"
            path.write_text(helper_chain(n))
            seconds = time_check(args.python, path)
            out["check_helper_chain"].append({"helpers": n, "check_s": round(seconds, 2)})
            print(f"check, kernel with {n:4d} chained helpers: {seconds:7.2f} s", flush=True)
        out["codelens"] = []
        for k in lens_sizes:
            row = asyncio.run(lens_and_hover(args.python, work, k))
            out["codelens"].append(row)
            print(
                f"codeLens on {k:5d} kernels: {row['codelens_s']:7.2f} s ({row['lenses']} lenses); "
                f"hover on another document sent behind it answered after {row['hover_s']:.2f} s",
                flush=True,
            )
    saved: dict[str, Any] = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    saved[args.label] = out
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(saved, indent=2) + "\n")
    print(f"saved under {args.label!r} in {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
