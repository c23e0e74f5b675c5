"""The one place a runner is made from its configuration: local worker pools, a remote service, or Ray.

Its own module, above every implementation, so none of them imports another through it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .local_runner import LocalRunner
from .runner import Runner


def get_runner(config: Mapping[str, Any] | None = None) -> Runner:
    """A LocalRunner, a RemoteRunner when config names a "url", or a RayRunner when it names a Ray
    "address" (`ray://HOST:PORT` or `ray:auto`)."""
    config = dict(config or {})
    if config.get("address"):
        from .ray_pool import RayRunner, is_ray_address

        if not is_ray_address(str(config["address"])):
            raise ValueError(f"a runner address must be ray://HOST:PORT or ray:auto, not {config['address']!r}")
        return RayRunner(config)
    if config.get("url"):
        from .remote_client import RemoteRunner

        return RemoteRunner.from_config(config)
    return LocalRunner(config)
