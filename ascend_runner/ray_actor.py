"""The runner worker as a Ray actor: one LocalRunner per actor, on whichever node Ray placed it.

Ray imports this module in its own worker processes (the Python that runs the cluster, with tritonlens
installed); the LocalRunner inside starts the usual JSON-lines workers under each environment's Python, so a
job runs exactly as it would on a local runner. Only plain JSON crosses the actor boundary.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from .local_runner import LocalRunner
from .protocol import compile_request_from


class RunnerActor:
    def __init__(self, config: dict[str, Any]) -> None:
        self.runner = LocalRunner(config)

    def where(self) -> dict[str, Any]:
        import ray

        return {
            "node_id": ray.get_runtime_context().get_node_id(),
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "gpus": ray.get_gpu_ids(),
        }

    def compile(self, request: dict[str, Any], timeout_s: float | None) -> dict[str, Any]:
        import dataclasses

        result = self.runner.compile(compile_request_from(request), timeout_s=timeout_s)
        return dataclasses.asdict(result)

    def submit(self, job: dict[str, Any], timeout_s: float | None) -> dict[str, Any]:
        return self.runner.submit(job, timeout_s=timeout_s)

    def close(self) -> None:
        self.runner.close()
