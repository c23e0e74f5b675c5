"""One chat-completions call to an OpenAI-compatible endpoint through the `openai` SDK, with our own timeouts,
retries with exponential backoff, 429 / Retry-After handling and token accounting.

The API key is read from the environment variable NAMED in settings, held only by the SDK client, and removed
from every message this module produces (errors are re-raised as `LLMError` with the key redacted).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...trust.secrets import register_secret_name


class LLMError(ValueError):
    """A request that failed for good (after retries); the message never contains the API key."""


@dataclass(frozen=True)
class ChatReply:
    text: str | None
    finish_reason: str | None
    tokens: int  # what the server reported (usage.total_tokens), or an estimate when it reported none
    tokens_estimated: bool


@dataclass
class ClientSettings:
    base_url: str
    model: str
    api_key_env: str | None = None
    timeout_s: float = 120.0
    retries: int = 3  # further tries after the first, for 429, 5xx, timeouts and connection errors
    backoff_s: float = 2.0  # first wait; doubles each retry
    max_wait_s: float = 60.0  # cap on any wait, Retry-After included
    max_tokens: int = 8192
    temperature: float = 0.2


@dataclass
class ChatClient:
    settings: ClientSettings
    sleep: Callable[[float], None] = time.sleep
    waits: list[float] = field(default_factory=list)  # every backoff wait, in order (shown in notes and tests)
    log: list[str] = field(default_factory=list)  # one line per failed try (redacted)
    _key: str = field(default="", repr=False)
    _client: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        name = self.settings.api_key_env
        if name:
            value = os.environ.get(name, "")
            if not value:
                raise LLMError(f"the environment variable {name} named by apiKeyEnv / --llm-api-key-env is not set")
            register_secret_name(name)  # its value is redacted from every verdict, report, log and prompt
            self._key = value

    def _sdk(self) -> Any:
        """The SDK client, made on first use (in the optimize worker thread, never on the editor's event loop)."""
        if self._client is None:
            import openai

            # Local servers often need no key; the SDK insists on one, so a placeholder is sent then.
            self._client = openai.OpenAI(
                base_url=self.settings.base_url, api_key=self._key or "no-key", timeout=self.settings.timeout_s,
                max_retries=0,
            )
        return self._client

    def redact(self, text: str) -> str:
        return text.replace(self._key, "***") if len(self._key) >= 4 else text

    def chat(self, messages: list[dict[str, str]], max_tokens: int) -> ChatReply:
        import openai

        s = self.settings
        for attempt in range(s.retries + 1):
            try:
                resp = self._sdk().chat.completions.create(
                    model=s.model, messages=messages, max_tokens=max_tokens, temperature=s.temperature
                )
            except openai.RateLimitError as exc:
                wait = _retry_after(exc) or s.backoff_s * 2**attempt
                why = "rate limited (429)"
            except openai.APITimeoutError:
                wait, why = s.backoff_s * 2**attempt, f"no reply within {s.timeout_s:g} s"
            except openai.APIConnectionError as exc:
                wait, why = s.backoff_s * 2**attempt, f"connection failed: {self.redact(str(exc))}"
            except openai.APIStatusError as exc:
                if exc.status_code < 500 and exc.status_code != 408:
                    hint = " (check the key in the variable named by apiKeyEnv)" if exc.status_code in (401, 403) else ""
                    raise LLMError(f"HTTP {exc.status_code} from {s.base_url}{hint}: {self.redact(_body(exc))}") from None
                wait, why = s.backoff_s * 2**attempt, f"HTTP {exc.status_code}"
            else:
                return _reply(resp, messages)
            self.log.append(f"try {attempt + 1}: {why}")
            if attempt == s.retries:
                raise LLMError(f"{why}; gave up after {s.retries + 1} tries")
            wait = min(wait, s.max_wait_s)
            self.waits.append(wait)
            self.sleep(wait)
        raise AssertionError("unreachable")


def _reply(resp: Any, messages: list[dict[str, str]]) -> ChatReply:
    choices = getattr(resp, "choices", None) or []
    if not choices:
        return ChatReply(None, None, _estimate(messages, ""), True)
    choice = choices[0]
    text = getattr(choice.message, "content", None)
    usage = getattr(resp, "usage", None)
    total = getattr(usage, "total_tokens", None) if usage is not None else None
    if isinstance(total, int) and total >= 0:
        return ChatReply(text, choice.finish_reason, total, False)
    return ChatReply(text, choice.finish_reason, _estimate(messages, text or ""), True)


def _estimate(messages: list[dict[str, str]], text: str) -> int:
    """~4 characters a token: used only when the server reports no usage, and named as an estimate."""
    return (sum(len(m["content"]) for m in messages) + len(text)) // 4 + 1


def _retry_after(exc: Any) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    raw = headers.get("retry-after")
    try:
        return max(0.0, float(raw)) if raw is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff


def _body(exc: Any) -> str:
    text = str(getattr(exc, "message", "") or exc)
    return text if len(text) <= 300 else text[:300] + " ..."
