"""Language server latency and `tritonlens check` throughput (a benchmark, not a test).

Measures, against the real server subprocess over stdio, the time from sending `textDocument/didChange` to
receiving `textDocument/publishDiagnostics` for that version (the debounce is included), on generated files of
about 200 and 2,000 lines made of realistic Triton kernels (vector add, fused softmax, layer norm, matmul,
embedding gather, ...). Then times `tritonlens check` over a folder of such files.

    .venv/bin/python benchmarks/lsp_latency.py [--iterations 40] [--debounce-ms 150]
    .venv/bin/python benchmarks/lsp_latency.py --compare-with SHIM [--rounds 3]   # before/after, interleaved
    .venv/bin/python benchmarks/lsp_latency.py --first [--opens 12]   # didOpen -> first diagnostics, cold and warm

`--first` times `textDocument/didOpen` of a 2,000-line file (written to disk in the workspace, as a user's file
is) to its first `publishDiagnostics`: cold = a fresh server process per open (initialize, initialized, open),
warm = one server that opens a new file each time (kernel names changed so no cache answers). It records the
1-minute load average around each sample: the machine may be shared.

SHIM is a folder with a `tritonlens/` holding links to another checkout's server/, analysis/ and ascend_runner/
(e.g. a `git worktree` of the commit before a change): its server runs with SHIM first on PYTHONPATH.

Prints a table and writes benchmarks/results/lsp_latency.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parent.parent
SERVER_ARGS: list[str] = os.environ.get("TRITONLENS_BENCH_SERVER_ARGS", "").split()  # e.g. "--log-file s.log"
RESULTS = ROOT / "benchmarks" / "results" / "lsp_latency.json"

HEADER = '''"""Generated benchmark module: realistic Triton kernels and their launchers."""
import torch
import triton
import triton.language as tl

'''

# Kernels written the way people write them (tutorial style), with their launchers; {i} makes names unique.
TEMPLATES = [
    """
@triton.jit
def add_kernel_{i}(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


def add_{i}(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = out.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
    add_kernel_{i}[grid](x, y, out, n, BLOCK_SIZE=1024)
    return out
""",
    """
@triton.jit
def softmax_kernel_{i}(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols, BLOCK_SIZE: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in range(row_start, n_rows, row_step):
        row_start_ptr = in_ptr + row_idx * in_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        out_row_start_ptr = out_ptr + row_idx * out_row_stride
        tl.store(out_row_start_ptr + col_offsets, softmax_output, mask=mask)


def softmax_{i}(x: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    y = torch.empty_like(x)
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    softmax_kernel_{i}[(n_rows,)](y, x, x.stride(0), y.stride(0), n_rows, n_cols, BLOCK_SIZE=BLOCK_SIZE)
    return y
""",
    """
@triton.jit
def layer_norm_fwd_{i}(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y, mask=mask)
""",
    """
@triton.jit
def matmul_kernel_{i}(a_ptr, b_ptr, c_ptr, M, N, K,
                   stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                   GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def matmul_{i}(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    M, K = a.shape
    K, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = lambda META: (triton.cdiv(M, META["BLOCK_SIZE_M"]) * triton.cdiv(N, META["BLOCK_SIZE_N"]),)
    matmul_kernel_{i}[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                         c.stride(0), c.stride(1), BLOCK_SIZE_M=128, BLOCK_SIZE_N=128, BLOCK_SIZE_K=32,
                         GROUP_SIZE_M=8)
    return c
""",
    """
@triton.jit
def embedding_kernel_{i}(ids_ptr, weight_ptr, out_ptr, n_tokens, dim, BLOCK_D: tl.constexpr):
    tok = tl.program_id(0)
    idx = tl.load(ids_ptr + tok)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < dim
    row = tl.load(weight_ptr + idx * dim + cols, mask=mask)
    tl.store(out_ptr + tok * dim + cols, row, mask=mask)


@triton.jit
def scale_kernel_{i}(x_ptr, n, scale):
    pid = tl.program_id(0)
    offs = pid * 1000 + tl.arange(0, 1024)
    x = tl.load(x_ptr + offs)
    tl.store(x_ptr + offs, x * scale)
""",
]


def generate(target_lines: int) -> str:
    """Kernels appended in turn until the file reaches about `target_lines` lines."""
    parts = [HEADER]
    lines = HEADER.count("\n")
    i = 0
    while lines < target_lines:
        block = TEMPLATES[i % len(TEMPLATES)].replace("{i}", str(i))
        parts.append(block)
        lines += block.count("\n")
        i += 1
    return "".join(parts)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


# Where the simulated typing happens: inside a kernel body (the common case while writing a kernel), or in host
# code (the launch's BLOCK_SIZE literal), which invalidates the cached triage of the kernels it launches.
# (text to find, offset of the digit that is retyped)
EDIT_SITES = {"kernel": ("tl.program_id(0)", 14), "host": ("BLOCK_SIZE=1024", 14)}


async def measure_latency(
    text: str,
    iterations: int,
    debounce_ms: int,
    workdir: Path,
    where: str = "host",
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    client = LanguageClient("tritonlens-bench", "1")
    arrivals: dict[int, float] = {}
    counts: dict[int, int] = {}
    event = asyncio.Event()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_publish(params: types.PublishDiagnosticsParams) -> None:
        if params.version is not None:
            arrivals.setdefault(params.version, time.perf_counter())
            counts[params.version] = len(params.diagnostics)
            event.set()

    @client.feature(types.WORKSPACE_CONFIGURATION)
    def on_config(params: types.ConfigurationParams) -> list[Any]:
        return [{"debounceMs": debounce_ms} for _ in params.items]

    await client.start_io(sys.executable, "-m", "tritonlens.server.cli", "serve", *SERVER_ARGS, env=env)
    caps = types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True)
        ),
        workspace=types.WorkspaceClientCapabilities(configuration=True),
    )
    await client.initialize_async(
        types.InitializeParams(
            capabilities=caps, workspace_folders=[types.WorkspaceFolder(uri=workdir.as_uri(), name="bench")]
        )
    )
    client.initialized(types.InitializedParams())
    path = workdir / "bench_kernels.py"
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )

    async def wait_version(version: int, timeout: float = 30.0) -> float:
        deadline = time.perf_counter() + timeout
        while version not in arrivals:
            event.clear()
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise TimeoutError(f"no diagnostics for version {version}")
            try:
                await asyncio.wait_for(event.wait(), remaining)
            except TimeoutError:
                pass
        return arrivals[version]

    await wait_version(1)
    # Typing-like edit: change one digit on a line near the end of the file (an incremental change).
    lines = text.split("\n")
    needle, digit = EDIT_SITES[where]
    target = next(i for i in range(len(lines) - 1, 0, -1) if needle in lines[i])
    col = lines[target].index(needle) + digit - 3  # the edit below replaces the character at col + 3
    samples: list[float] = []
    for n in range(iterations):
        version = n + 2
        digit = str(n % 10)
        change = types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(target, col + 3), types.Position(target, col + 4)), text=digit
        )
        sent = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[change],
            )
        )
        arrived = await wait_version(version)
        samples.append((arrived - sent) * 1000.0)
        await asyncio.sleep(0.05)  # a pause between keystroke bursts
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return {
        "lines": len(lines),
        "edit_in": where,
        "kernels": text.count("@triton.jit"),
        "diagnostics": counts.get(iterations + 1, 0),
        "debounce_ms": debounce_ms,
        "iterations": iterations,
        "p50_ms": round(percentile(samples, 0.5), 1),
        "p95_ms": round(percentile(samples, 0.95), 1),
        "max_ms": round(max(samples), 1),
        "mean_ms": round(statistics.fmean(samples), 1),
    }


async def _start(client: LanguageClient, workdir: Path, debounce_ms: int, env: dict[str, str] | None) -> None:
    @client.feature(types.WORKSPACE_CONFIGURATION)
    def on_config(params: types.ConfigurationParams) -> list[Any]:
        return [{"debounceMs": debounce_ms} for _ in params.items]

    await client.start_io(sys.executable, "-m", "tritonlens.server.cli", "serve", *SERVER_ARGS, env=env)
    caps = types.ClientCapabilities(
        text_document=types.TextDocumentClientCapabilities(
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True)
        ),
        workspace=types.WorkspaceClientCapabilities(configuration=True),
    )
    await client.initialize_async(
        types.InitializeParams(
            capabilities=caps, workspace_folders=[types.WorkspaceFolder(uri=workdir.as_uri(), name="bench")]
        )
    )
    client.initialized(types.InitializedParams())


async def _stop(client: LanguageClient) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


async def first_diagnostics(
    opens: int, debounce_ms: int, workdir: Path, cold: bool, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """didOpen -> first publishDiagnostics of that file, `opens` times (see the module docstring)."""
    base = generate(2000)
    samples: list[float] = []
    cpu_samples: list[float] = []  # the server process's CPU time (all threads) from didOpen to the publish
    start_samples: list[float] = []  # cold: spawn -> initialize answered (wall)
    start_cpu_samples: list[float] = []  # cold: the server's CPU time by then (its imports, features, warm-up)
    loads: list[float] = []
    counts: list[int] = []
    client: LanguageClient | None = None
    arrivals: dict[str, tuple[float, int]] = {}
    event = asyncio.Event()

    scanned = asyncio.Event()

    def new_client() -> LanguageClient:
        made = LanguageClient("tritonlens-bench", "1")

        @made.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: types.PublishDiagnosticsParams) -> None:
            if params.version == 1:
                arrivals.setdefault(params.uri, (time.perf_counter(), len(params.diagnostics)))
                event.set()

        @made.feature("tritonlens/kernelsChanged")
        def on_kernels(params: Any) -> None:
            scanned.set()

        @made.feature("tritonlens/status")
        def on_status(params: Any) -> None:
            pass

        return made

    if not cold:
        client = new_client()
        await _start(client, workdir, debounce_ms, env)
        # A warm server is an idle one: its start-up work (the workspace scan of the files already there) is done.
        try:
            await asyncio.wait_for(scanned.wait(), 60.0)
        except TimeoutError:
            pass
        await asyncio.sleep(0.5)
    for n in range(opens):
        if cold:
            client = new_client()
            spawned = time.perf_counter()
            await _start(client, workdir, debounce_ms, env)
            start_samples.append((time.perf_counter() - spawned) * 1000.0)
            start_cpu = _process_cpu_s(client)
            if start_cpu is not None:
                start_cpu_samples.append(start_cpu * 1000.0)
        assert client is not None
        # Distinct names per open: neither the server nor the triage caches can answer from an earlier open.
        text = base.replace("_kernel_", f"_kernel_o{n}{'c' if cold else 'w'}_")
        path = workdir / f"first_{'cold' if cold else 'warm'}_{n}.py"
        path.write_text(text, encoding="utf-8")
        uri = path.as_uri()
        loads.append(os.getloadavg()[0])
        cpu_before = _process_cpu_s(client)
        sent = time.perf_counter()
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))
        )
        deadline = sent + 60.0
        while uri not in arrivals:
            event.clear()
            try:
                await asyncio.wait_for(event.wait(), max(deadline - time.perf_counter(), 0.01))
            except TimeoutError:
                if time.perf_counter() >= deadline:
                    raise TimeoutError(f"no first diagnostics for {uri}") from None
        arrived, count = arrivals[uri]
        samples.append((arrived - sent) * 1000.0)
        cpu_after = _process_cpu_s(client)
        if cpu_before is not None and cpu_after is not None:
            cpu_samples.append((cpu_after - cpu_before) * 1000.0)
        counts.append(count)
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
        if cold:
            await _stop(client)
        else:
            await asyncio.sleep(0.3)
    if not cold and client is not None:
        await _stop(client)
    return {
        "server": "cold" if cold else "warm",
        "lines": len(base.split("\n")),
        "kernels": base.count("@triton.jit"),
        "diagnostics": counts[-1],
        "opens": opens,
        "p50_ms": round(percentile(samples, 0.5), 1),
        "p95_ms": round(percentile(samples, 0.95), 1),
        "max_ms": round(max(samples), 1),
        "samples_ms": [round(s, 1) for s in samples],
        # Load-independent: what the server itself spent (wall time on a loaded machine waits for a core).
        "server_cpu_p50_ms": round(percentile(cpu_samples, 0.5), 1) if cpu_samples else None,
        "server_cpu_p95_ms": round(percentile(cpu_samples, 0.95), 1) if cpu_samples else None,
        "server_cpu_ms": [round(s, 1) for s in cpu_samples],
        "load_average_1m": [round(x, 2) for x in loads],
        **(_start_figures(start_samples, start_cpu_samples) if cold else {}),
    }


def _start_figures(wall: list[float], cpu: list[float]) -> dict[str, Any]:
    """A cold server's start: spawn -> `initialize` answered (what an editor waits before its first didOpen)."""
    return {
        "start_p50_ms": round(percentile(wall, 0.5), 1),
        "start_p95_ms": round(percentile(wall, 0.95), 1),
        "start_ms": [round(s, 1) for s in wall],
        "start_cpu_p50_ms": round(percentile(cpu, 0.5), 1) if cpu else None,
        "start_cpu_p95_ms": round(percentile(cpu, 0.95), 1) if cpu else None,
        "start_cpu_ms": [round(s, 1) for s in cpu],
    }


def _process_cpu_s(client: LanguageClient) -> float | None:
    """User + system CPU seconds of the client's server process so far (Linux /proc), or None."""
    server = getattr(client, "_server", None)
    try:
        fields = Path(f"/proc/{server.pid}/stat").read_text().rsplit(")", 1)[1].split()  # type: ignore[union-attr]
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (AttributeError, OSError, IndexError, ValueError):
        return None


def run_first(args: argparse.Namespace) -> int:
    """Cold and warm; with --compare-with, the other version's server too, alternating (same load)."""
    rows = []
    versions: list[tuple[str, dict[str, str] | None]] = [("this", None)]
    if args.compare_with:
        path = os.pathsep.join([str(args.compare_with), os.environ.get("PYTHONPATH", "")])
        shim = {**os.environ, "PYTHONPATH": path}
        versions = [("before", shim), ("after", None)]
    with tempfile.TemporaryDirectory() as tmp:
        for cold in (True, False):
            for label, env in versions:
                folder = Path(tmp) / f"{label}-{'cold' if cold else 'warm'}"
                folder.mkdir()
                row = asyncio.run(first_diagnostics(args.opens, args.debounce_ms, folder, cold, env))
                row["version"] = label
                rows.append(row)
                print(
                    f"{label:>6} {row['server']:>5} server, {row['lines']} lines: first diagnostics "
                    f"p50 {row['p50_ms']} ms, p95 {row['p95_ms']} ms, max {row['max_ms']} ms "
                    f"({row['diagnostics']} diagnostics, load {min(row['load_average_1m'])}-"
                    f"{max(row['load_average_1m'])}); server CPU p50 {row['server_cpu_p50_ms']} ms, "
                    f"p95 {row['server_cpu_p95_ms']} ms"
                    + (
                        f"; start (spawn -> initialize answered) p50 {row['start_p50_ms']} ms, p95 "
                        f"{row['start_p95_ms']} ms, server CPU p50 {row['start_cpu_p50_ms']} ms"
                        if cold else ""
                    ),
                    flush=True,
                )
    if args.output == RESULTS:
        args.output = RESULTS.with_name("lsp_first_diagnostics.json")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent, capture_output=True,
                            text=True).stdout.strip()
    out = {"machine": machine(), "commit": commit, "first_diagnostics": rows}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


def measure_check(workdir: Path, files: int, lines_per_file: int) -> dict[str, Any]:
    folder = workdir / "check_corpus"
    folder.mkdir(exist_ok=True)
    text = generate(lines_per_file)
    for i in range(files):
        (folder / f"kernels_{i:03d}.py").write_text(text, encoding="utf-8")
    exe = [sys.executable, "-m", "tritonlens.server.cli", "check", str(folder)]
    started = time.perf_counter()
    proc = subprocess.run(exe, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"tritonlens check failed ({proc.returncode}): {proc.stderr[-2000:]}")
    # Start-up alone (one tiny file), to separate it from per-file cost.
    tiny = workdir / "tiny"
    tiny.mkdir(exist_ok=True)
    (tiny / "t.py").write_text("x = 1\n")
    started = time.perf_counter()
    subprocess.run([*exe[:-1], str(tiny)], capture_output=True, text=True)
    startup = time.perf_counter() - started
    return {
        "files": files,
        "lines_per_file": len(text.split("\n")),
        "elapsed_s": round(elapsed, 2),
        "startup_s": round(startup, 2),
        "files_per_s": round(files / elapsed, 1),
        "files_per_s_excl_startup": round(files / max(elapsed - startup, 1e-6), 1),
    }


def machine() -> dict[str, Any]:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return {
        "load_average_1m": round(load[0], 2),  # other work on the machine inflates the numbers
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def compare(args: argparse.Namespace) -> int:
    """Before/after on the same machine under the same load: the 2,000-line measurements alternate between
    the installed tritonlens and the one found first on `--compare-with` (a folder holding a `tritonlens`
    package of the other version, put first on PYTHONPATH of its server), round after round, each with the
    1-minute load average at its start."""
    before = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(args.compare_with), os.environ.get("PYTHONPATH", "")]),
    }
    rows: list[dict[str, Any]] = []
    text = generate(2000)
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            for label, env in (("before", before), ("after", None)):
                for where in EDIT_SITES:
                    load = os.getloadavg()[0]
                    row = asyncio.run(
                        measure_latency(text, args.iterations, args.debounce_ms, Path(tmp), where, env)
                    )
                    row.update(version=label, round=round_ + 1, load_average_1m=round(load, 2))
                    rows.append(row)
                    print(
                        f"round {round_ + 1} {label:>6} edit in {where:>6}: p50 {row['p50_ms']:>7} ms "
                        f"p95 {row['p95_ms']:>7} ms (load {load:.1f})",
                        flush=True,
                    )
    summary = {}
    for label in ("before", "after"):
        for where in EDIT_SITES:
            mine = [r for r in rows if r["version"] == label and r["edit_in"] == where]
            summary[f"{label} {where}"] = {
                "p95_ms_median_of_rounds": statistics.median(r["p95_ms"] for r in mine),
                "p50_ms_median_of_rounds": statistics.median(r["p50_ms"] for r in mine),
                "load_average_1m": [r["load_average_1m"] for r in mine],
            }
    out = {"machine": machine(), "compared_with": str(args.compare_with), "summary": summary, "rows": rows}
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    for key, value in summary.items():
        print(
            f"{key:>14}: p95 {value['p95_ms_median_of_rounds']} ms, p50 {value['p50_ms_median_of_rounds']} ms"
        )
    print(f"wrote {args.output}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--debounce-ms", type=int, default=150)
    parser.add_argument("--check-files", type=int, default=50)
    parser.add_argument("--output", type=Path, default=RESULTS, help="where to write the JSON results")
    parser.add_argument(
        "--compare-with",
        type=Path,
        help="a folder holding another version's `tritonlens` package: 2,000-line latency before/after, interleaved",
    )
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of --compare-with")
    parser.add_argument("--first", action="store_true", help="didOpen -> first diagnostics, cold and warm server")
    parser.add_argument("--opens", type=int, default=12, help="opens per server kind with --first")
    args = parser.parse_args()
    if args.first:
        return run_first(args)
    if args.compare_with and not args.first:
        if args.output == RESULTS:
            args.output = RESULTS.with_name("lsp_latency_compare.json")
        return compare(args)
    results: dict[str, Any] = {"machine": machine(), "latency": [], "check": None}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for size in (200, 2000):
            for where in EDIT_SITES:
                results["latency"].append(
                    asyncio.run(
                        measure_latency(generate(size), args.iterations, args.debounce_ms, workdir, where)
                    )
                )
        results["check"] = measure_check(workdir, args.check_files, 200)

    print(
        f"{'file':>10} {'edit in':>8} {'kernels':>8} {'diags':>6} {'debounce':>9} {'p50 ms':>8} {'p95 ms':>8} "
        f"{'max ms':>8}"
    )
    for row in results["latency"]:
        print(
            f"{row['lines']:>6} ln {row['edit_in']:>8} {row['kernels']:>8} {row['diagnostics']:>6} {row['debounce_ms']:>9} "
            f"{row['p50_ms']:>8} {row['p95_ms']:>8} {row['max_ms']:>8}"
        )
    c = results["check"]
    print(
        f"tritonlens check: {c['files']} files x {c['lines_per_file']} lines in {c['elapsed_s']} s "
        f"= {c['files_per_s']} files/s ({c['files_per_s_excl_startup']} files/s without {c['startup_s']} s start-up)"
    )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
