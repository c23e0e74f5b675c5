"""The local runner: compile and job requests served by worker pools, one per runner environment.

`Runner.compile` takes a CompileRequest and always returns a CompileResult (failures are StageErrors,
never exceptions, except ProtocolError for a malformed request). `Runner.submit` takes a job envelope
(protocol.new_job) and returns a result envelope; run/profile/verify use it. Everything that crosses the
interface is plain JSON, so a remote runner (HTTP) implements the same thing.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from .cache import ResultCache, compile_key
from .environments import (
    ENVIRONMENTS,
    Environment,
    EnvironmentUnavailable,
    environment_for_backend,
    environment_for_target,
    find_environment,
)
from .pool import PoolConfig, WorkerPool, failure
from .protocol import (
    SCHEMA_VERSION,
    CompileRequest,
    CompileResult,
    ProtocolError,
    StageError,
    check_job,
    compile_request_from,
    compile_result_from,
    new_job,
)
from .runner import JobMethods, Runner

DEFAULT_COMPILE_TIMEOUT_S = 120.0
# Worker modules whose warm_up() loads each environment's compiler as the worker starts.
WARM_UP_MODULES = {"cuda": "compile_cuda", "ascend": "compile_ascend"}


def worker_failure_result(req: CompileRequest, message: str, elapsed_s: float = 0.0) -> CompileResult:
    return CompileResult(
        ok=False, target=req.target, errors=[StageError("worker", message)], elapsed_s=elapsed_s
    )


class LocalRunner(JobMethods):
    """Runs jobs in worker processes on this machine, one pool per environment, with a result cache.

    config (all optional):
      "cuda" / "ascend": {"python": PATH}   interpreters (else $TRITONLENS_*_PYTHON, else <repo>/.envs/*)
      "workers": 1                          concurrent workers per environment
      "timeout_s": 120                      default wall timeout per job
      "memory_limit_mb": 16384              per worker; None for no limit
      "address_space_cap": None             RLIMIT_AS too (None: only where no GPU/NPU is visible)
      "max_jobs_per_worker": 500            recycle workers after this many jobs
      "cache": True, "cache_dir": PATH      compile result cache (default ~/.cache/tritonlens)
      "cache_max_mb": 512                   its bound on disk (least recently used entries go first)
      "warm_up": True                       load the compiler as each worker starts
      "worker_env": {...}                   extra environment variables for workers
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        self.config: dict[str, Any] = dict(config or {})
        self._pools: dict[str, WorkerPool] = {}
        self._envs: dict[str, Environment] = {}
        self._compilers: dict[str, str] = {}
        self._last_health: dict[str, Any] = {}  # per environment: what its worker last said
        self._lock = threading.Lock()
        self._closed = False
        use_cache = self.config.get("cache", True)
        self.cache = (
            ResultCache(self.config.get("cache_dir"), max_disk_mb=self.config.get("cache_max_mb", 512.0))
            if use_cache
            else None
        )

    # -- environments and pools -------------------------------------------------------------------------
    def environment(self, name: str) -> Environment:
        """The environment `name` (cached); raises EnvironmentUnavailable with setup advice."""
        with self._lock:
            env = self._envs.get(name)
        if env is None:
            env = find_environment(name, self.config)
            with self._lock:
                self._envs[name] = env
                self._compilers[name] = env.compiler_version()
        return env

    def _pool(self, name: str) -> WorkerPool:
        env = self.environment(name)
        with self._lock:
            if self._closed:
                raise RuntimeError("the runner is closed")
            pool = self._pools.get(name)
            if pool is None:
                pool = WorkerPool(
                    PoolConfig(
                        python=env.python,
                        size=int(self.config.get("workers", 1)),
                        memory_limit_mb=self.config.get("memory_limit_mb", 16384),
                        address_space_cap=self.config.get("address_space_cap"),
                        max_jobs=int(self.config.get("max_jobs_per_worker", 500)),
                        default_timeout_s=float(self.config.get("timeout_s", DEFAULT_COMPILE_TIMEOUT_S)),
                        env=self._worker_env(name),
                        name=name,
                    )
                )
                self._pools[name] = pool
        return pool

    def _worker_env(self, name: str) -> dict[str, str]:
        env = {"TRITONLENS_WORKER_WARMUP": WARM_UP_MODULES[name]} if self.config.get("warm_up", True) else {}
        env.update({str(k): str(v) for k, v in (self.config.get("worker_env") or {}).items()})
        return env

    def parallelism(self, kind: str = "run", backend: str = "cuda") -> int:
        """Jobs of one environment run at once: one per worker."""
        return max(1, int(self.config.get("workers", 1)))

    def prestart(self, name: str) -> None:
        """Start a worker for environment `name` ahead of the first job (ignored when unavailable)."""
        try:
            self._pool(name).prestart()
        except (EnvironmentUnavailable, RuntimeError, OSError):
            pass

    # -- Runner ------------------------------------------------------------------------------------------
    def compile(
        self,
        req: CompileRequest,
        *,
        cancel: threading.Event | None = None,
        timeout_s: float | None = None,
        function_sources: Mapping[str, str] | None = None,
        on_start: Callable[[], None] | None = None,
        cache_only: bool = False,
    ) -> CompileResult:
        """Compile through the cache (`cache_only`: answer from it or fail at stage "cache", never compile);
        function_sources ("name@line" -> text of the kernel and the helpers it
        calls, as cache.dependency_sources computes) keys the cache, defaulting to the server-side helper."""
        started = time.perf_counter()
        req.validate()
        name = environment_for_target(req.target)
        try:
            self.environment(name)
        except EnvironmentUnavailable as exc:
            return worker_failure_result(req, str(exc))
        key = compile_key(req, self._compilers[name], function_sources) if self.cache is not None else ""
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                if on_start is not None:
                    on_start()
                # Shallow copies: a caller that edits its result must not edit the cached entry.
                copied = {k: dict(v) if isinstance(v, dict) else v for k, v in hit.items()}
                result = compile_result_from(copied)
                result.cached = True
                result.elapsed_s = time.perf_counter() - started
                return result
        if cache_only:
            return CompileResult(
                ok=False,
                target=req.target,
                errors=[StageError("cache", "not in the compile cache")],
                compiler=self._compilers.get(name, ""),
                elapsed_s=time.perf_counter() - started,
            )
        backend = "cuda" if name == "cuda" else "ascend"
        reply = self.submit(
            new_job("compile", backend, req), cancel=cancel, timeout_s=timeout_s, on_start=on_start
        )
        if not reply.get("ok"):
            error = reply.get("error") or {}
            stage = str(error.get("stage", "worker"))
            return CompileResult(
                ok=False,
                target=req.target,
                errors=[StageError(stage, str(error.get("message", "the runner failed")))],
                compiler=self._compilers.get(name, ""),
                elapsed_s=time.perf_counter() - started,
            )
        try:
            result = compile_result_from(dict(reply.get("result") or {}))
        except (TypeError, ValueError) as exc:
            return worker_failure_result(req, f"the runner returned a malformed compile result: {exc}")
        if self.cache is not None and all(e.stage != "worker" for e in result.errors):
            result.metadata["cache_key"] = key  # lets callers memoize work derived from this result
            self.cache.put(key, dataclasses.asdict(result))
        result.elapsed_s = time.perf_counter() - started
        return result

    def submit(
        self,
        job: dict[str, Any],
        *,
        cancel: threading.Event | None = None,
        timeout_s: float | None = None,
        on_start: Callable[[], None] | None = None,
    ) -> dict[str, Any]:
        """Validate the envelope, route it to its environment's pool, return the result envelope.
        on_start: called when a worker takes the job (it is queued until then)."""
        check_job(job)
        if job["kind"] == "compile":
            compile_request_from(job["payload"])  # fail here, with the field's name, not in the worker
        name = environment_for_backend(job["backend"])
        try:
            pool = self._pool(name)
        except EnvironmentUnavailable as exc:
            return failure(job, str(exc), "unavailable")
        try:
            return pool.submit(job, cancel=cancel, timeout_s=timeout_s, on_start=on_start)
        except RuntimeError as exc:  # closed while waiting
            return failure(job, str(exc), "closed")

    def health(self) -> dict[str, Any]:
        """Per environment: available or why not, interpreter, compiler version, and what its worker sees."""
        backends: dict[str, Any] = {}
        for name in ENVIRONMENTS:
            try:
                env = self.environment(name)
            except EnvironmentUnavailable as exc:
                backends[name] = {"available": False, "message": str(exc)}
                continue
            entry: dict[str, Any] = {
                "available": True,
                "python": env.python,
                "found_by": env.found_by,
                "compiler": self._compilers.get(name, ""),
            }
            pool = self._pool(name)
            if pool.saturated():
                # Every worker holds a job: waiting for one would report a busy backend as unavailable.
                last = self._last_health.get(name) or {}
                entry.update(worker=last, busy=True, devices=last.get("devices", {}))
                entry["pool"] = pool.stats()
                backends[name] = entry
                continue
            reply = pool.submit(
                {
                    "schema": SCHEMA_VERSION,
                    "id": f"health-{name}",
                    "kind": "health",
                    "backend": name,
                    "payload": {},
                },
                timeout_s=30,
            )
            if reply.get("ok"):
                self._last_health[name] = reply.get("result")
                entry["worker"] = reply.get("result")
                entry["devices"] = (reply.get("result") or {}).get("devices", {})
            elif (reply.get("error") or {}).get("reason") == "timeout" and pool.saturated():
                entry["busy"] = True  # no worker came free: busy, not broken
                entry["message"] = "every worker is busy with a job"
            else:
                entry["available"] = False
                entry["message"] = (reply.get("error") or {}).get("message", "the worker did not answer")
            entry["pool"] = self._pools[name].stats()
            backends[name] = entry
        cache = None
        if self.cache is not None:
            cache = {"dir": str(self.cache.root), "hits": self.cache.hits, "misses": self.cache.misses}
        return {"runner": "local", "schema": SCHEMA_VERSION, "backends": backends, "cache": cache}

    def close(self) -> None:
        with self._lock:
            self._closed = True
            pools = list(self._pools.values())
            self._pools.clear()
        for pool in pools:
            pool.close()

    def __enter__(self) -> LocalRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = [
    "JobMethods",
    "LocalRunner",
    "ProtocolError",
    "Runner",
    "worker_failure_result",
]
