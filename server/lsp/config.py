"""The `tritonlens` configuration section as the language server sees it, per workspace folder.

Keys: target, select, ignore, severity (see analysis.settings), debounceMs, and pass-through dicts (runners,
escalation, llm) that later levels read without the server having to know their shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...analysis.core.settings import Settings

SECTION = "tritonlens"
DEFAULT_DEBOUNCE_MS = 150
MAX_DEBOUNCE_MS = 10_000
PASS_THROUGH = ("runners", "escalation", "llm")


@dataclass(frozen=True)
class ServerConfig:
    settings: Settings = field(default_factory=Settings)
    debounce_ms: int = DEFAULT_DEBOUNCE_MS
    extra: dict[str, dict[str, Any]] = field(default_factory=dict)  # runners / escalation / llm, as given
    raw: dict[str, Any] = field(default_factory=dict)


def parse_config(raw: Any) -> tuple[ServerConfig, list[str]]:
    """Build a config from a client's section; bad values fall back to defaults, with one message each."""
    problems: list[str] = []
    if raw is None:
        return ServerConfig(), problems
    if not isinstance(raw, dict):
        return ServerConfig(), [f"the `{SECTION}` setting must be an object, got {type(raw).__name__}"]
    try:
        settings = Settings.from_mapping(
            {k: raw[k] for k in ("target", "select", "ignore", "severity") if k in raw}
        )
    except (ValueError, TypeError) as exc:
        problems.append(f"{SECTION}: {exc}; using the default rule settings")
        settings = Settings()
    debounce = raw.get("debounceMs", DEFAULT_DEBOUNCE_MS)
    if (
        isinstance(debounce, bool)
        or not isinstance(debounce, (int, float))
        or not 0 <= debounce <= MAX_DEBOUNCE_MS
    ):
        problems.append(f"{SECTION}.debounceMs must be a number of milliseconds in 0..{MAX_DEBOUNCE_MS}")
        debounce = DEFAULT_DEBOUNCE_MS
    extra: dict[str, dict[str, Any]] = {}
    for key in PASS_THROUGH:
        value = raw.get(key)
        if value is None:
            continue
        if isinstance(value, dict):
            extra[key] = value
        else:
            problems.append(f"{SECTION}.{key} must be an object")
    return ServerConfig(settings=settings, debounce_ms=int(debounce), extra=extra, raw=dict(raw)), problems


class ConfigStore:
    """Configuration per workspace folder (multi-root), with a global fallback for files outside folders."""

    def __init__(self) -> None:
        self.global_config = ServerConfig()
        self.folders: dict[str, ServerConfig] = {}  # folder URI (no trailing slash) -> config

    def for_uri(self, uri: str) -> ServerConfig:
        best = self.folder_for(uri)
        return self.folders[best] if best else self.global_config

    def folder_for(self, uri: str) -> str | None:
        """The workspace folder URI that holds `uri` (the innermost), or None outside every folder."""
        best = ""
        for folder in self.folders:
            if (uri == folder or uri.startswith(folder.rstrip("/") + "/")) and len(folder) > len(best):
                best = folder
        return best or None

    def replace(self, global_config: ServerConfig, folders: dict[str, ServerConfig]) -> None:
        self.global_config = global_config
        self.folders = {uri.rstrip("/"): cfg for uri, cfg in folders.items()}
