"""A runner worker: started by file path under a runner environment's Python (`python -u main.py`).

Speaks JSON lines: one job envelope per line on stdin ({"schema", "id", "kind", "backend", "payload"}),
one result envelope per line on stdout ({"schema", "id", "ok", "kind", "result" | "error"}); logs go to
stderr. Anything else that writes to stdout (user code, Triton) is sent to stderr so it cannot corrupt
the channel. Stdlib only at import time; handlers import triton/torch lazily. Never imports tritonlens.
"""

from __future__ import annotations

import contextlib
import faulthandler
import functools
import importlib
import json
import os
import select
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any, TextIO

if os.path.dirname(os.path.abspath(__file__)) not in sys.path:  # its siblings, however it was loaded
    sys.path.append(os.path.dirname(os.path.abspath(__file__)))
try:
    import device_lock  # noqa: E402 (stdlib only: how long this process waited for the shared device)
except ModuleNotFoundError:  # a worker folder without it: no job here shares a device lock
    device_lock = None

SCHEMA_VERSION = 1
MEMORY_ENV = "TRITONLENS_WORKER_MEMORY_MB"  # address-space limit for this process, set by the pool
WARM_UP_ENV = "TRITONLENS_WORKER_WARMUP"  # comma-separated sibling modules whose warm_up() runs at start
TEST_HOOKS_ENV = "TRITONLENS_WORKER_TEST_HOOKS"  # "1" enables the fault-injection job kind (tests only)
CUDA_TARGETS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_100")

Handler = Callable[[str, dict[str, Any]], dict[str, Any]]


class JobError(Exception):
    """A job that cannot be done; `stage` says where (protocol, worker, or a compiler stage)."""

    def __init__(self, stage: str, message: str) -> None:
        super().__init__(message)
        self.stage = stage
        self.message = message


def _import_sibling(module: str, what: str) -> Any:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name == module:
            raise JobError(
                "worker", f"{what} is not available in this runner (worker/{module}.py is missing)"
            ) from None
        raise


def _triton_interpreted() -> bool:
    """Triton decides at import whether its library kernels (tl.sum, tl.max, ...) are interpreted: once this worker
    ran an interpret-backend job, kernels compiled here would call interpreted helpers and fail in the front end
    (e.g. "'ir.value' object has no attribute 'dtype'") for reasons that are not the kernel's."""
    standard = sys.modules.get("triton.language.standard")
    return standard is not None and type(getattr(standard, "sum", None)).__name__ == "InterpretedFunction"


def _compile_in_fresh_worker(payload: dict[str, Any]) -> dict[str, Any]:
    """The same compile job in a new worker process started without TRITON_INTERPRET (one envelope in and out)."""
    import subprocess

    drop = ("TRITON_INTERPRET", "TRITONLENS_WORKER_SCRATCH", WARM_UP_ENV)  # the scratch folder stays this worker's
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["TRITONLENS_PARENT_PID"] = str(os.getpid())  # its parent is this worker (the pool kills our group)
    job = {"schema": SCHEMA_VERSION, "id": "fresh", "kind": "compile", "payload": payload}
    proc = subprocess.run([sys.executable, "-u", os.path.abspath(__file__)], input=json.dumps(job) + "\n",
                          capture_output=True, text=True, env=env)
    line = next((x for x in proc.stdout.splitlines() if x.strip()), "")
    try:
        reply = json.loads(line)
    except ValueError:
        raise JobError("worker", f"the fresh compile worker failed (exit {proc.returncode}): "
                       f"{proc.stderr.strip()[-800:]}") from None
    if not reply.get("ok"):
        error = reply.get("error") or {}
        raise JobError(str(error.get("stage", "worker")), str(error.get("message", "compile failed")))
    return reply["result"]


CONFINED_ENV = "TRITONLENS_CONFINED"  # set in a confined worker: its jobs run there, not in another sandbox


def _compile_confined(payload: dict[str, Any]) -> dict[str, Any]:
    """An untrusted text's compile job (its module-level code runs) in a fresh worker confined by sandbox_exec."""
    import shutil
    import tempfile

    import sandbox_exec

    kind = sandbox_exec.mechanism()
    if kind == "none" and not payload.get("allow_unsandboxed"):
        raise JobError("worker", f"not compiled: {sandbox_exec.why_none()}; an LLM's text runs only confined unless "
                                 "the user opts in (--llm-allow-unsandboxed, tritonlens.llm.allowUnsandboxed)")
    root = tempfile.mkdtemp(prefix="tritonlens-compile-", dir=os.environ.get("TRITONLENS_WORKER_SCRATCH") or None)
    try:
        env = sandbox_exec.allowed_environment(os.environ, {
            CONFINED_ENV: "1", "TRITON_CACHE_DIR": os.path.join(root, "triton-cache"), "PYTHONDONTWRITEBYTECODE": "1"})
        env.pop("TRITON_INTERPRET", None)
        job = {"schema": SCHEMA_VERSION, "id": "confined", "kind": "compile", "payload": payload}
        out = sandbox_exec.run_confined(
            [sys.executable, "-u", os.path.abspath(__file__)], writable=root, env=env, timeout_s=300.0,
            stdin=(json.dumps(job) + "\n").encode(), kind=kind if kind != "none" else "plain")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    line = next((x for x in out.stdout.decode("utf-8", "replace").splitlines() if x.strip()), "")
    try:
        reply = json.loads(line)
    except ValueError:
        why = "ran past 300 s" if out.timed_out else f"exit {out.returncode}"
        raise JobError("worker", f"the confined compile worker failed ({why}): "
                                 f"{out.stderr.decode('utf-8', 'replace').strip()[-800:]}") from None
    if not isinstance(reply, dict) or not reply.get("ok") or not isinstance(reply.get("result"), dict):
        error = (reply.get("error") if isinstance(reply, dict) else None) or {}
        raise JobError(str(error.get("stage", "worker")), str(error.get("message", "compile failed")))
    return reply["result"]


def handle_compile(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    target = payload.get("target")
    if not isinstance(target, str):
        raise JobError("protocol", "compile payload needs a string 'target'")
    if payload.get("untrusted") and os.environ.get(CONFINED_ENV) != "1":
        return _compile_confined(payload)
    if _triton_interpreted():
        return _compile_in_fresh_worker(payload)
    if target in CUDA_TARGETS:
        module = _import_sibling("compile_cuda", "compiling for CUDA targets")
    elif target.startswith("ascend"):
        module = _import_sibling("compile_ascend", "compiling for Ascend targets")
    else:
        raise JobError("protocol", f"unknown target {target!r}")
    global _COMPILES
    _COMPILES += 1
    result = module.compile_kernel(payload)
    if _COMPILES > 1 and not result.get("ok", True) and _import_failed(result):
        # An earlier job of this worker imported user code: state that survives the module cache (torch's
        # operator registry: "Tried to register an operator ... multiple times") can fail a package import
        # that works in a new process. The verdict is the fresh process's.
        return _compile_in_fresh_worker(payload)
    return result


_COMPILES = 0  # compile jobs this worker has run


def _import_failed(result: dict[str, Any]) -> bool:
    """Whether a top-level import of the file (or of its package) failed during this compile."""
    warnings = (result.get("metadata") or {}).get("module_warnings") or []
    return any(
        isinstance(w, dict) and (w.get("package") or w.get("import")) and not w.get("stand_in") for w in warnings
    )  # a module that is not installed (a stand-in) fails the same way in any process


def _run_job(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return _import_sibling("run_job", f"the {kind!r} job").handle(kind, payload)


def handle_health(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    """Interpreter, compiler version and visible devices, without importing torch (slow)."""
    info: dict[str, Any] = {
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "pid": os.getpid(),
    }
    try:
        import triton

        info["triton"] = triton.__version__
        info["backends"] = sorted(getattr(triton.backends, "backends", {}))
    except Exception as exc:
        info["triton_error"] = f"{type(exc).__name__}: {exc}"
    devices = {"cuda": sorted(d for d in os.listdir("/dev") if d.startswith("nvidia") and d[6:].isdigit())}
    devices["npu"] = sorted(d for d in os.listdir("/dev") if d.startswith("davinci") and d[7:].isdigit())
    if not devices["cuda"]:
        devices["cuda_driver"] = _driver_device_count()
    info["devices"] = devices
    return info


@functools.cache  # asked once per worker: devices do not appear while it runs
def _driver_device_count() -> int:
    """GPUs the CUDA driver reports, asked in a child process (this worker must not initialise CUDA: its jobs may
    start children): the confirmation, for a machine whose /dev lists no nvidiaN, that it truly has none."""
    probe = ("import ctypes\ntry:\n    lib = ctypes.CDLL('libcuda.so.1')\nexcept OSError:\n    print(0)\nelse:\n"
             "    n = ctypes.c_int(0)\n    ok = lib.cuInit(0) == 0 and lib.cuDeviceGetCount(ctypes.byref(n)) == 0\n"
             "    print(n.value if ok else 0)\n")
    try:
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=20)
        return int(out.stdout.strip() or 0)
    except (OSError, ValueError, subprocess.SubprocessError):
        return 0


# Job kind -> handler. Other modules extend this table (HANDLERS["name"] = fn) before serve() runs.
HANDLERS: dict[str, Handler] = {
    "compile": handle_compile,
    "run": _run_job,
    "profile": _run_job,
    "verify": _run_job,
    "health": handle_health,
}


def _install_test_hooks() -> None:
    """Fault injection for the pool's tests; only when the environment variable asks for it."""
    if os.environ.get(TEST_HOOKS_ENV) != "1":
        return
    from test_hooks import handle_fault

    HANDLERS["_fault"] = handle_fault


def _limit_memory() -> None:
    raw = os.environ.get(MEMORY_ENV)
    if not raw:
        return
    import resource

    limit = int(float(raw) * 1024 * 1024)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _die_with_parent() -> None:
    """Never outlive the process that started this worker (a CLI killed by SIGTERM/SIGKILL included), and
    take everything this worker started along (compilers, job processes: its process group).

    Two guards: PR_SET_PDEATHSIG asks Linux to send SIGTERM when the parent goes (the pool starts workers
    from a long-lived thread, which that signal is tied to), and its handler kills the group; a watchdog
    thread wakes when stdin (the pipe only the parent writes) hangs up and, once the parent is gone, does the
    same, also while a job keeps the main thread busy. A parent that closes stdin but lives (a test feeding
    a fixed list of jobs) gets every answer.
    """
    import signal

    parent = os.environ.get("TRITONLENS_PARENT_PID", "")
    parent_pid = int(parent) if parent.isdigit() else os.getppid()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            signal.signal(signal.SIGTERM, lambda *_: _kill_own_group())
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError, ValueError):
            pass
    if os.getppid() != parent_pid:
        _kill_own_group()  # orphaned before the guards were in place
    threading.Thread(target=_watch_parent, args=(parent_pid,), name="parent-watchdog", daemon=True).start()


def _watch_parent(parent_pid: int) -> None:
    poller = select.poll()
    poller.register(sys.stdin.fileno(), 0)  # no events asked: poll reports only hang-up and errors
    while not poller.poll():
        pass
    while os.getppid() == parent_pid:  # hung up, but the parent may still be reading our answers
        time.sleep(0.25)
    _kill_own_group()


def _kill_own_group() -> None:
    import signal

    _remove_private_cache()
    try:
        if os.getpgrp() == os.getpid():  # the pool makes each worker lead its own group
            os.killpg(os.getpgrp(), signal.SIGKILL)
    finally:
        os._exit(5)


def _warm_up() -> None:
    """Load the compiler before the first job arrives; jobs sent meanwhile wait in the pipe."""
    for name in filter(None, os.environ.get(WARM_UP_ENV, "").split(",")):
        started = time.perf_counter()
        try:
            getattr(importlib.import_module(name.strip()), "warm_up", lambda: None)()
        except Exception as exc:  # a failed warm-up only costs time; the real job reports real errors
            print(f"[worker {os.getpid()}] warm-up {name} failed: {exc}", file=sys.stderr)
            continue
        print(f"[worker {os.getpid()}] warm-up {name} {time.perf_counter() - started:.3f}s", file=sys.stderr)


def run_one(job: Any) -> dict[str, Any]:
    """One envelope in, one envelope out; never raises."""
    if not isinstance(job, dict):
        return _reply(None, None, error=("protocol", "a job must be a JSON object"))
    job_id, kind = job.get("id"), job.get("kind")
    if job.get("schema") != SCHEMA_VERSION:
        return _reply(
            job_id, kind, error=("protocol", f"schema {job.get('schema')!r} is not {SCHEMA_VERSION}")
        )
    handler = HANDLERS.get(kind) if isinstance(kind, str) else None
    if handler is None:
        return _reply(job_id, kind, error=("protocol", f"unknown job kind {kind!r}"))
    payload = job.get("payload")
    if not isinstance(payload, dict):
        return _reply(job_id, kind, error=("protocol", "payload must be a JSON object"))
    if kind in ("run", "profile", "verify") and payload.get("backend") is None:  # a typed request sends None
        payload = {**payload, "backend": job.get("backend")}  # run_job picks cuda / npu / interpret from it
    started = time.perf_counter()
    waited = device_lock.waited_s() if device_lock else 0.0
    try:
        with _in_job_folder(payload.get("workdir")):
            result = handler(kind, payload)
        if kind in ("run", "profile", "verify") and isinstance(result, dict) and device_lock:
            result = _with_device_wait(result, device_lock.waited_s() - waited)
    except JobError as exc:
        return _reply(job_id, kind, error=(exc.stage, exc.message))
    except MemoryError:
        return _reply(
            job_id, kind, error=("worker", "the job ran out of memory (worker memory limit)"), fatal=True
        )
    except Exception as exc:
        tb = traceback.format_exc(limit=-6)
        print(tb, file=sys.stderr)
        return _reply(job_id, kind, error=("worker", f"{type(exc).__name__}: {exc}"))
    print(f"[worker {os.getpid()}] {kind} {job_id} {time.perf_counter() - started:.3f}s", file=sys.stderr)
    return _reply(job_id, kind, result=result)


def _with_device_wait(result: dict[str, Any], here: float) -> dict[str, Any]:
    """The job's result with the seconds it waited for other jobs' holds on the shared device (this process's and,
    for a verify job, its candidate process's): the client's time budget leaves them out."""
    total = here + float(result.get("device_wait_s") or 0.0)
    return {**result, "device_wait_s": round(total, 3)} if total > 0 else result


@contextlib.contextmanager
def _in_job_folder(workdir: Any) -> Iterator[None]:
    """A job with its own folder (the runner service's `workdir`) runs there, not in the service's folder."""
    if not (isinstance(workdir, str) and workdir and os.path.isdir(workdir)):
        yield
        return
    home = os.getcwd()
    os.chdir(workdir)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.chdir(home)


def _reply(
    job_id: Any, kind: Any, result: Any = None, error: tuple[str, str] | None = None, fatal: bool = False
) -> dict[str, Any]:
    out: dict[str, Any] = {"schema": SCHEMA_VERSION, "id": job_id, "kind": kind, "ok": error is None}
    if error is None:
        out["result"] = result
    else:
        out["error"] = {"stage": error[0], "message": error[1]}
    if fatal:
        out["fatal"] = True  # the worker exits after this reply; its state is not trustworthy
    return out


def serve(channel_in: TextIO, channel_out: TextIO) -> None:
    for line in channel_in:
        if not line.strip():
            continue
        try:
            job = json.loads(line)
        except ValueError as exc:
            reply = _reply(None, None, error=("protocol", f"not JSON: {exc}"))
        else:
            reply = run_one(job)
        try:
            text = json.dumps(reply, default=str)
        except (TypeError, ValueError) as exc:
            text = json.dumps(
                _reply(reply.get("id"), reply.get("kind"), error=("worker", f"unserializable: {exc}"))
            )
        channel_out.write(text + "\n")
        channel_out.flush()
        if reply.get("fatal"):
            os._exit(3)


def _remove_private_cache() -> None:
    """The pool gave this worker a private scratch folder (Triton's cache, snapshots): leave nothing behind."""
    if os.environ.get("TRITONLENS_WORKER_SCRATCH"):
        import shutil

        shutil.rmtree(os.environ["TRITONLENS_WORKER_SCRATCH"], ignore_errors=True)


def main() -> None:
    # Keep the real stdout for the protocol; point file descriptor 1 (and sys.stdout) at stderr.
    channel_out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    faulthandler.enable(sys.stderr)  # a segfault in a compiler pass leaves a Python stack in the log
    sys.dont_write_bytecode = True  # the user's modules are imported from their folder: no __pycache__ there
    _die_with_parent()
    _limit_memory()
    _install_test_hooks()
    # Warm up only when idle: a worker started for a waiting job would just make that job wait longer.
    if not select.select([sys.stdin], [], [], 0.05)[0]:
        _warm_up()
    try:
        serve(sys.stdin, channel_out)
    finally:
        _remove_private_cache()


if __name__ == "__main__":
    main()
