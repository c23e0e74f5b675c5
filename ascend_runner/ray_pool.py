"""RayRunner: the Runner interface over a Ray cluster, with runner workers as actors placed by resources.

Addresses: `ray://HOST:PORT` (Ray Client) or `ray:auto` (the cluster in $RAY_ADDRESS, or the one running on
this machine). A job goes to an actor of its shape: compile jobs and the interpret backend to CPU actors,
`cuda` jobs to actors holding one GPU (`num_gpus=1`), `npu` jobs to actors holding one unit of the custom `NPU`
resource. Each actor runs a LocalRunner on its node (ray_actor.py), so jobs run exactly as they do locally.

Faults: an actor or node that dies mid-job is replaced and the job is retried on another actor, at most
`retries` times; every retry is reported in the result (`ray.attempts`), and a job yields exactly one result.
Cancelling a job kills its actor (the job's processes die with it) and the pool starts a fresh one on demand.

Safety: the driver always uses Ray's token authentication (`RAY_AUTH_MODE=token`; the token comes from
$RAY_AUTH_TOKEN, $RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token, never from settings) and never sends usage stats.
Ray itself binds its servers to all interfaces: `ray_cluster.py` starts local clusters inside a private
network namespace so nothing listens beyond this machine.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .pool import failure
from .protocol import CompileRequest, CompileResult, StageError, compile_result_from
from .runner import JobMethods

RAY_SCHEMES = ("ray://", "ray:auto")
PLACEMENT_TIMEOUT_S = 60.0
ACTOR_GRACE_S = 30.0  # beyond the job's own timeout, which the LocalRunner inside the actor enforces


def is_ray_address(spec: str) -> bool:
    return isinstance(spec, str) and spec.startswith(RAY_SCHEMES)


@dataclass(frozen=True)
class Shape:
    """What an actor holds; jobs of one shape share actors."""

    name: str  # "cpu" | "gpu" | "npu"
    resource: str  # the cluster resource that bounds how many such actors fit
    options: tuple[tuple[str, Any], ...]

    def actor_options(self) -> dict[str, Any]:
        return dict(self.options)


CPU = Shape("cpu", "CPU", (("num_cpus", 1),))
GPU = Shape("gpu", "GPU", (("num_cpus", 0), ("num_gpus", 1)))
NPU = Shape("npu", "NPU", (("num_cpus", 0), ("resources", {"NPU": 1})))


def shape_for(kind: str, backend: str) -> Shape:
    """Placement by resources: which actors may take a job of this kind on this backend."""
    if kind == "compile" or backend == "interpret":
        return CPU
    if backend == "npu":
        return NPU
    return GPU


class RayUnavailable(RuntimeError):
    """Ray is not installed, no cluster answers at the address, or no token is configured."""


def _token_configured() -> bool:
    if os.environ.get("RAY_AUTH_TOKEN"):
        return True
    path = os.environ.get("RAY_AUTH_TOKEN_PATH") or os.path.expanduser("~/.ray/auth_token")
    return os.path.isfile(path)


def connect(address: str) -> None:
    """ray.init for the driver, with token authentication and no usage stats; clear errors otherwise."""
    os.environ["RAY_AUTH_MODE"] = "token"
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    try:
        import ray
    except ImportError:
        raise RayUnavailable(
            "Ray is not installed in tritonlens's Python: `pip install 'tritonlens[ray]'` "
            "(scripts/bootstrap --all installs it)"
        ) from None
    if not _token_configured():
        raise RayUnavailable(
            "no Ray token: set RAY_AUTH_TOKEN (or RAY_AUTH_TOKEN_PATH) to the cluster's token; tritonlens "
            "only talks to Ray clusters with token authentication"
        )
    if ray.is_initialized():
        return
    target = "auto" if address == "ray:auto" else address
    try:
        ray.init(address=target, namespace="tritonlens", log_to_driver=False, logging_level="ERROR")
    except (ConnectionError, RuntimeError, ValueError) as exc:
        hint = (
            "start one with `tritonlens-runner ray-local -- COMMAND` or point RAY_ADDRESS at it"
            if target == "auto"
            else "check the address and that its Ray Client server (port 10001 by default) is up"
        )
        raise RayUnavailable(f"no Ray cluster answered at {address}: {exc}; {hint}") from None


class _ActorPool:
    """Actors of one shape: idle ones in a list, at most `limit` alive, created on demand."""

    def __init__(self, shape: Shape, limit: int, actor_cls: Any, config: dict[str, Any]) -> None:
        self.shape = shape
        self.limit = limit
        self._actor_cls = actor_cls
        self._config = config
        self._idle: list[tuple[Any, dict[str, Any]]] = []
        self._alive = 0
        self._cond = threading.Condition()
        self.busy: dict[int, tuple[Any, dict[str, Any]]] = {}  # id(handle) -> (handle, where)

    def acquire(self, cancel: threading.Event | None, deadline: float) -> tuple[Any, dict[str, Any]]:
        import ray

        with self._cond:
            while True:
                if self._idle:
                    actor = self._idle.pop()
                    break
                if self._alive < self.limit:
                    self._alive += 1
                    actor = None
                    break
                if (cancel is not None and cancel.is_set()) or time.monotonic() > deadline:
                    raise TimeoutError("no free actor")
                self._cond.wait(0.2)
        if actor is None:
            try:
                handle = self._actor_cls.options(**self.shape.actor_options()).remote(self._config)
                ref = handle.where.remote()
                ready, _ = ray.wait([ref], timeout=PLACEMENT_TIMEOUT_S)
                if not ready:
                    ray.kill(handle, no_restart=True)
                    raise TimeoutError(
                        f"no node could host a {self.shape.name} actor within {PLACEMENT_TIMEOUT_S:.0f} s"
                    )
                actor = (handle, ray.get(ref))
            except BaseException:
                with self._cond:
                    self._alive -= 1
                    self._cond.notify()
                raise
        self.busy[id(actor[0])] = actor
        return actor

    def release(self, actor: tuple[Any, dict[str, Any]]) -> None:
        with self._cond:
            self.busy.pop(id(actor[0]), None)
            self._idle.append(actor)
            self._cond.notify()

    def discard(self, actor: tuple[Any, dict[str, Any]]) -> None:
        import ray

        try:
            ray.kill(actor[0], no_restart=True)
        except Exception:  # already dead: nothing to kill
            pass
        with self._cond:
            self.busy.pop(id(actor[0]), None)
            self._alive -= 1
            self._cond.notify()

    def close(self) -> None:
        import ray

        with self._cond:
            actors = self._idle + list(self.busy.values())
            self._idle, self.busy, self._alive = [], {}, 0
        for handle, _ in actors:
            try:
                ray.kill(handle, no_restart=True)
            except Exception:
                pass


class RayRunner(JobMethods):
    """config: {"address": "ray://HOST:PORT" | "ray:auto", "retries": 2, "actors": {"cpu": N, "gpu": N,
    "npu": N} (default: as many as the cluster's resources allow), "runner": {LocalRunner config for each
    actor}}."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = dict(config)
        self.address = str(self.config.get("address") or "ray:auto")
        self.retries = int(self.config.get("retries", 2))
        connect(self.address)
        import ray

        from .ray_actor import RunnerActor

        self._actor_cls = ray.remote(max_restarts=0, max_task_retries=0)(RunnerActor)
        self._pools: dict[str, _ActorPool] = {}
        self._lock = threading.Lock()
        self._closed = False

    # -- pools ----------------------------------------------------------------------------------------------
    def _limit(self, shape: Shape) -> int:
        import ray

        wanted = (self.config.get("actors") or {}).get(shape.name)
        available = int(ray.cluster_resources().get(shape.resource, 0))
        return int(wanted) if wanted is not None else available

    def _pool(self, shape: Shape) -> _ActorPool:
        with self._lock:
            if self._closed:
                raise RuntimeError("the runner is closed")
            pool = self._pools.get(shape.name)
            if pool is None:
                pool = _ActorPool(shape, self._limit(shape), self._actor_cls, dict(self.config.get("runner") or {}))
                self._pools[shape.name] = pool
            return pool

    def parallelism(self, kind: str = "run", backend: str = "cuda") -> int:
        """How many jobs of this kind the cluster takes at once (callers size their fan-out by it)."""
        return max(1, self._pool(shape_for(kind, backend)).limit)

    def actors(self) -> list[dict[str, Any]]:
        """Where each busy actor runs (node, pid): what fault tests and `health` show."""
        with self._lock:
            pools = list(self._pools.values())
        return [{"shape": p.shape.name, **where} for p in pools for _, where in list(p.busy.values())]

    # -- one call with retries --------------------------------------------------------------------------------
    def _call(
        self, shape: Shape, method: str, payload: dict[str, Any], cancel: threading.Event | None, timeout_s: float | None
    ) -> tuple[dict[str, Any] | None, str, str, dict[str, Any]]:
        """(result, failure message, failure reason, placement record). Exactly one result per call."""
        import ray
        from ray.exceptions import GetTimeoutError, RayActorError, RayError

        attempts: list[dict[str, Any]] = []
        started = time.monotonic()
        budget = (timeout_s or 600.0) + ACTOR_GRACE_S
        pool = self._pool(shape)
        if pool.limit < 1:
            return None, f"the Ray cluster has no {shape.resource} resource for this job", "placement", {}
        for _attempt in range(self.retries + 1):
            deadline = started + budget
            try:
                actor = pool.acquire(cancel, deadline)
            except TimeoutError as exc:
                reason = "cancelled" if cancel is not None and cancel.is_set() else "placement"
                return None, str(exc), reason, {"attempts": attempts}
            handle, where = actor
            ref = getattr(handle, method).remote(payload, timeout_s)
            try:
                while True:
                    if cancel is not None and cancel.is_set():
                        pool.discard(actor)
                        return None, "cancelled", "cancelled", {"attempts": attempts, **where}
                    if time.monotonic() > deadline:
                        pool.discard(actor)
                        return None, f"no answer from the actor within {budget:.0f} s", "timeout", {
                            "attempts": attempts,
                            **where,
                        }
                    ready, _ = ray.wait([ref], timeout=0.2)
                    if ready:
                        break
                result = ray.get(ref, timeout=ACTOR_GRACE_S)
            except (RayActorError, GetTimeoutError) as exc:
                # The actor (or its node) died mid-job: replace it and run the job again elsewhere.
                pool.discard(actor)
                attempts.append({**where, "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"})
                continue
            except RayError as exc:
                pool.release(actor)
                return None, f"Ray failed the job: {exc}", "ray", {"attempts": attempts, **where}
            pool.release(actor)
            return result, "", "", {"attempts": attempts, **where}
        return None, f"the job's actor died {len(attempts)} times", "actor-died", {"attempts": attempts}

    # -- Runner -----------------------------------------------------------------------------------------------
    def compile(
        self, req: CompileRequest, *, cancel: threading.Event | None = None, timeout_s: float | None = None
    ) -> CompileResult:
        req.validate()
        started = time.perf_counter()
        result, message, _reason, _where = self._call(CPU, "compile", dataclasses.asdict(req), cancel, timeout_s)
        if result is None:
            return CompileResult(
                ok=False,
                target=req.target,
                errors=[StageError("worker", message)],
                elapsed_s=time.perf_counter() - started,
            )
        return compile_result_from(result)

    def submit(
        self, job: dict[str, Any], *, cancel: threading.Event | None = None, timeout_s: float | None = None
    ) -> dict[str, Any]:
        shape = shape_for(str(job.get("kind")), str(job.get("backend")))
        result, message, reason, where = self._call(shape, "submit", job, cancel, timeout_s)
        if result is None:
            result = failure(job, message, reason)
        result = dict(result)
        result["ray"] = {"shape": shape.name, **where}
        return result

    def health(self) -> dict[str, Any]:
        import ray

        nodes = [n for n in ray.nodes() if n.get("Alive")]
        return {
            "ok": True,
            "kind": "ray",
            "address": self.address,
            "nodes": len(nodes),
            "resources": {k: v for k, v in ray.cluster_resources().items() if not k.startswith("node:")},
            "actors": {name: pool.limit for name, pool in self._pools.items()},
        }

    def close(self) -> None:
        with self._lock:
            self._closed = True
            pools = list(self._pools.values())
            self._pools.clear()
        for pool in pools:
            pool.close()
