"""Hover text for findings: the rule's explanation, the finding's evidence chain and its estimated gain.

A finding that confirms lower-level ones (analysis.escalation) lists them and shows its chain in order:
the symptoms they saw, the IR excerpts, the compiler's decision (the message), then the rewrite.
"""

from __future__ import annotations

from ...analysis.core import rules
from ...analysis.core.findings import Evidence, Finding, Level

MAX_EXCERPT_LINES = 12


def _fence(text: str) -> str:
    lines = text.rstrip("\n").split("\n")
    if len(lines) > MAX_EXCERPT_LINES:
        lines = lines[:MAX_EXCERPT_LINES] + [f"... ({len(lines) - MAX_EXCERPT_LINES} more lines)"]
    body = "\n".join(lines)
    ticks = "````" if "```" in body else "```"
    return f"{ticks}text\n{body}\n{ticks}"


def _evidence(i: int, ev: Evidence, said: set[str]) -> str:
    """One evidence item; a summary that repeats what the hover already said (`said`) is left out."""
    where = f"{ev.kind}" + (f" · {ev.stage}" if ev.stage else "")
    lines = ""
    if ev.ir_lines:
        shown = ", ".join(str(n) for n in ev.ir_lines[:8]) + (", ..." if len(ev.ir_lines) > 8 else "")
        lines = f" (IR lines {shown})"
    summary = "" if ev.summary.strip() in said else f": {ev.summary}"
    out = f"{i}. *{where}*{summary}{lines}"
    if ev.excerpt:
        out += "\n\n" + "\n".join("   " + line for line in _fence(ev.excerpt).split("\n"))
    return out


def finding_markdown(f: Finding, with_message: bool = True) -> str:
    """`with_message=False` for clients that show the diagnostic's message in the same hover (VS Code): the
    hover then adds only what the diagnostic does not say."""
    rule = rules.get(f.code)
    title = rule.title if rule else f.code
    name = f" `{rule.name}`" if rule else ""
    parts = [f"**{f.code}**{name} · {title}"] + ([f.message] if with_message else [])
    platforms = ", ".join(f.platforms) if f.platforms else "all platforms"
    meta = f"Level {int(f.level)} ({f.level.name.lower()}) · {platforms}"
    if f.kernel:
        meta += f" · kernel `{f.kernel}`"
    parts.append(f"*{meta}*")
    confirmed = _confirmed(f)
    if confirmed:
        parts.append("**Confirms**\n\n" + "\n".join(confirmed))
    if f.evidence:
        heading = "**Evidence chain**" if confirmed else "**Evidence**"
        said = {title.strip(), f.message.strip()}
        items = "\n".join(_evidence(i, ev, said) for i, ev in enumerate(f.evidence, 1))
        parts.append(heading + "\n\n" + items)
    rewrite = f.data.get("rewrite") if isinstance(f.data, dict) else None
    if isinstance(rewrite, str) and rewrite:
        parts.append(f"**Rewrite:** {rewrite}")
    if f.estimated_gain:
        parts.append(f"**Estimated gain:** {f.estimated_gain}")
    if f.fix is not None:
        parts.append(f"**Quick fix available:** {f.fix.title}")
    if rule is not None:
        parts.append(f"**Why**\n\n{rule.rationale}")
        links = [r for r in rule.references if r.startswith(("http://", "https://"))]
        if links:
            parts.append("**References:** " + " · ".join(f"<{u}>" for u in links))
    return "\n\n".join(parts)


def _confirmed(f: Finding) -> list[str]:
    """One bullet per lower-level finding this one confirms (recorded by analysis.escalation.merge)."""
    rows = f.data.get("confirmed") if isinstance(f.data, dict) else None
    if not isinstance(rows, list):
        return []
    out: list[str] = []
    for row in rows:
        if not isinstance(row, dict) or not isinstance(row.get("code"), str):
            continue
        rule = rules.get(row["code"])
        name = f" `{rule.name}`" if rule else ""
        level = row.get("level")
        where = f"level {level} ({Level(level).name.lower()})" if level in set(Level) else "lower level"
        line = f" on line {row['line']}" if isinstance(row.get("line"), int) else ""
        out.append(f"- **{row['code']}**{name}, {where}{line}: {row.get('message', '')}")
    return out


def hover_markdown(findings: list[Finding], with_message: bool = True) -> str:
    return "\n\n---\n\n".join(finding_markdown(f, with_message) for f in findings)


def client_shows_diagnostics_in_hover(init_options: object) -> bool:
    """The client said (initializationOptions `hoverShowsDiagnostics: true`) that its hover already shows the
    diagnostics under the cursor, as VS Code does; Neovim's does not, so by default the hover repeats nothing
    only where it must say the message itself."""
    return isinstance(init_options, dict) and init_options.get("hoverShowsDiagnostics") is True
