"""The runner's client API: everything the tritonlens server (CLI and language server) uses of the runner.

The server imports only this module and `protocol` (tests/test_layers.py holds it to that), so what a runner
offers its callers is read here, in one place: the `Runner` interface and its implementations (local worker
pools, a remote runner service over HTTP; a Ray pool through `get_runner`), making one from settings, the
runner environments, ordered fan-out, sharing one local device between jobs, and recording launches from a test or script.
"""

from .device_sharing import DEVICE_LOCK_ENV, share_device
from .environments import (
    EnvironmentUnavailable,
    available_environments,
    environment_for_backend,
    environment_for_target,
    find_environment,
)
from .factory import get_runner
from .fanout import in_order, parallelism
from .local_runner import LocalRunner
from .recording import RecordRun, record_command
from .remote_client import RemoteRunner, RemoteRunnerError, resolve_token
from .runner import Runner
from .settings import RunnerSettings, parse_runner_settings

__all__ = [
    "DEVICE_LOCK_ENV",
    "EnvironmentUnavailable",
    "LocalRunner",
    "RecordRun",
    "RemoteRunner",
    "RemoteRunnerError",
    "Runner",
    "RunnerSettings",
    "available_environments",
    "environment_for_backend",
    "environment_for_target",
    "find_environment",
    "get_runner",
    "in_order",
    "parallelism",
    "parse_runner_settings",
    "record_command",
    "resolve_token",
    "share_device",
]
