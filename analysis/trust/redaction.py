"""Secrets never leave: the values of key and token variables replaced in any text or JSON-like data.

Pure: the caller passes the environment (the server's `os.environ`) and the names it knows hold secrets (an LLM's
`apiKeyEnv`, a remote runner's `tokenEnv`); every variable whose name says key, token, secret, password or
credential counts too. Values shorter than 8 characters are left alone (they would redact ordinary words).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION", re.I)
MIN_LENGTH = 8


def secret_values(environ: Mapping[str, str], names: Iterable[str | None] = ()) -> tuple[str, ...]:
    """The values to redact, longest first (a key that contains another is replaced whole)."""
    named = {n for n in names if n}
    found = {v.strip() for k, v in environ.items() if (k in named or SECRET_NAME.search(k)) and v}
    return tuple(sorted((v for v in found if len(v) >= MIN_LENGTH), key=len, reverse=True))


class Redactor:
    """Replaces each secret value with `[redacted]`, in text and recursively in dicts, lists and tuples."""

    def __init__(self, values: Iterable[str]) -> None:
        self.values = tuple(sorted({v for v in values if len(v) >= MIN_LENGTH}, key=len, reverse=True))

    @classmethod
    def from_environment(cls, environ: Mapping[str, str], names: Iterable[str | None] = ()) -> Redactor:
        return cls(secret_values(environ, names))

    def text(self, value: str) -> str:
        for secret in self.values:
            if secret in value:
                value = value.replace(secret, "[redacted]")
        return value

    def data(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.data(k) if isinstance(k, str) else k: self.data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self.data(v) for v in value)
        return value

    def __bool__(self) -> bool:
        return bool(self.values)
