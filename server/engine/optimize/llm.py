"""The LLM proposer: the evidence -> a prompt (analysis/rewrite/llm_prompt) -> an OpenAI-compatible endpoint
(llm_client) -> a parsed whole-file candidate (analysis/rewrite/llm_reply) -> the same gate as every candidate.

It iterates with feedback: the gate's verdicts on its earlier candidates (compile errors, mismatches, timings) and
the parser's reasons for replies it rejected go into the next prompt. Per `propose` it makes at most `attempts`
requests (a rejected reply is repaired at once), all within a token budget summed from the usage the server
reports. Nothing it receives is executed here; rejections are kept in `declined` with their reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ....analysis.rewrite.llm_prompt import Attempt, build_messages
from ....analysis.rewrite.llm_reply import Rejected, parse_reply
from ....analysis.rewrite.model import Candidate, RecipeContext, Verdict
from ....analysis.trust.model_text import markdown_literal, plain_line
from ...trust.secrets import redactor as process_redactor
from .evidence import roofline_of
from .llm_client import ChatClient, ClientSettings, LLMError
from .proposers import Declined

SETTING_TYPES: dict[str, type] = {
    "timeout_s": float, "retries": int, "backoff_s": float, "max_wait_s": float, "max_tokens": int,
    "temperature": float, "token_budget": int, "attempts": int,
}


@dataclass
class _Tried:
    candidate_id: str
    title: str
    source: str


class LLMProposer:
    def __init__(self, client: ChatClient, *, token_budget: int = 200_000, attempts: int = 2) -> None:
        self.client = client
        self.model = client.settings.model
        self.name = "llm"
        self.token_budget = token_budget
        self.attempts = attempts
        self.tokens_used = 0
        self.tokens_estimated = False
        self.requests = 0
        self.declined: list[Declined] = []
        self._tried: dict[str, list[_Tried]] = {}  # kernel -> candidates it produced, in order
        self._rejected: dict[str, list[Attempt]] = {}  # kernel -> replies the parser rejected

    def __repr__(self) -> str:  # never shows the client (which holds the key)
        return f"LLMProposer(model={self.model!r}, tokens_used={self.tokens_used}, requests={self.requests})"

    @property
    def producer(self) -> str:
        return self.model

    def _decline(self, kernel: str, reason: str) -> None:
        self.declined.append(Declined(f"llm:{self.model}", kernel, self.client.redact(reason)))

    def propose(self, ctx: RecipeContext, feedback: Sequence[Verdict]) -> list[Candidate]:
        roofline = roofline_of(ctx.profile, ctx.source, ctx.path)
        for _ in range(max(1, self.attempts)):
            remaining = self.token_budget - self.tokens_used
            if remaining <= 0:
                self._decline(ctx.kernel, f"token budget spent ({self.tokens_used} of {self.token_budget} tokens)")
                return []
            messages = build_messages(
                source=ctx.source, path=ctx.path, kernel=ctx.kernel, target=ctx.target, findings=ctx.findings,
                profile=ctx.profile, roofline=roofline, attempts=self._attempts(ctx.kernel, feedback),
            )
            secrets = process_redactor()  # what the model is sent never holds a key or token of this process
            messages = [{**m, "content": secrets.text(m["content"])} for m in messages]
            try:
                reply = self.client.chat(messages, max_tokens=min(self.client.settings.max_tokens, remaining))
            except LLMError as exc:
                self._decline(ctx.kernel, f"request failed: {exc}")
                return []
            self.requests += 1
            self.tokens_used += reply.tokens
            self.tokens_estimated |= reply.tokens_estimated
            parsed = parse_reply(reply.text, ctx.source, ctx.kernel, finish_reason=reply.finish_reason)
            if isinstance(parsed, Rejected):
                self._decline(ctx.kernel, f"reply rejected: {parsed.reason}")
                self._rejected.setdefault(ctx.kernel, []).append(Attempt("unparsed reply", f"reply rejected: {parsed.reason}"))
                continue
            if parsed.source == ctx.source:
                self._decline(ctx.kernel, "reply rejected: the file is unchanged")
                self._rejected.setdefault(ctx.kernel, []).append(Attempt(parsed.title, "reply rejected: unchanged file"))
                continue
            cand = Candidate(
                source=parsed.source, origin="llm", producer=self.model, kernel=ctx.kernel,
                title=plain_line(parsed.title), rationale=_rationale(self.model, parsed.reasoning), evidence=parsed.evidence,
                level=_level(ctx, parsed.evidence),
            )
            self._tried.setdefault(ctx.kernel, []).append(_Tried(cand.id, cand.title, cand.source))
            return [cand]
        return []

    def _attempts(self, kernel: str, feedback: Sequence[Verdict]) -> list[Attempt]:
        verdicts = {v.candidate_id: v for v in feedback}
        out = [Attempt(t.title, _outcome(verdicts.get(t.candidate_id)), t.source) for t in self._tried.get(kernel, [])]
        return out + self._rejected.get(kernel, [])

    def notes(self) -> list[str]:
        est = " (estimated: the server reported no usage)" if self.tokens_estimated else ""
        waits = f", waited {sum(self.client.waits):.1f} s over {len(self.client.waits)} retries" if self.client.waits else ""
        return [f"LLM {self.model}: {self.requests} replies, {self.tokens_used} of {self.token_budget} tokens{est}{waits}"]


def _outcome(v: Verdict | None) -> str:
    if v is None:
        return "not verified (budget or cancellation)"
    if v.accepted:
        extra = f" {v.speedup:.2f}x (spread {v.spread or 0:.0%})" if v.speedup else ""
        return f"accepted:{extra} {v.reason}"
    err = f" (max error {v.max_error:.3g})" if v.max_error is not None else ""
    return f"rejected at {v.stage or 'gate'}{err}: {v.reason}"


def _rationale(model: str, reasoning: str) -> str:
    """The model's reasoning as literal text: it cannot open a link, an image, HTML or a command in a hover."""
    return (f"Written by the LLM {markdown_literal(model, 200)} (verified by the gate like every candidate). Its "
            f"reasoning:\n\n{markdown_literal(reasoning)}")


def _level(ctx: RecipeContext, codes: Sequence[str]) -> int:
    levels = [int(f.level) for f in ctx.findings if f.code in codes]
    return max(levels, default=1)


def make_proposer(
    base_url: str, model: str, *, api_key_env: str | None = None, sleep: Callable[[float], None] | None = None,
    **settings: Any,
) -> LLMProposer:
    """The proposer for `tritonlens optimize --llm-*` and the editor's `tritonlens.llm` settings.

    `api_key_env` is the NAME of the environment variable holding the key. Other settings (timeout_s, retries,
    backoff_s, max_wait_s, max_tokens, temperature, token_budget, attempts) are optional; None means default.
    Raises LLMError (a plain message) for a missing key variable or a bad setting."""
    values: dict[str, Any] = {}
    for key, raw in settings.items():
        if raw is None:
            continue
        if key not in SETTING_TYPES:
            raise LLMError(f"unknown LLM setting {key!r} (known: {', '.join(sorted(SETTING_TYPES))})")
        try:
            values[key] = SETTING_TYPES[key](raw)
        except (TypeError, ValueError):
            raise LLMError(f"LLM setting {key}={raw!r} is not a number") from None
    budget, attempts = values.pop("token_budget", 200_000), values.pop("attempts", 2)
    client_settings = ClientSettings(base_url=base_url, model=model, api_key_env=api_key_env or None, **values)
    client = ChatClient(client_settings, **({"sleep": sleep} if sleep else {}))
    return LLMProposer(client, token_budget=budget, attempts=attempts)


__all__ = ["LLMError", "LLMProposer", "make_proposer"]
