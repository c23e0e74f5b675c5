"""Which findings the user silenced, and which of their ignores silence nothing (ruff's conventions).

Three sources, honoured the same way by `tritonlens check`, the language server and the workspace rows:
- `# tritonlens: ignore[TL127]` on the line where a finding starts (bare `ignore` silences every code there);
- `# tritonlens: ignore-file[TL127]` anywhere in the file (bare `ignore-file` silences the whole file);
- `[tool.tritonlens] ignore = [...]` and `[tool.tritonlens.per-file-ignores] "glob" = [...]` in pyproject.toml,
  globs relative to the pyproject's folder (a glob without `/` also matches the file name alone).
Codes are rule codes or prefixes (`TL1`). An ignore comment naming a level-1 code that silences nothing in that
run is reported as a TL006 hint with a fix that removes it; codes of later levels are never called unused (their
findings appear only after a compile or a profile), and a code no rule has is reported as unknown.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from ..core.findings import Finding, Fix, Level, Span, TextEdit
from ..specialize.pragmas import IgnoreComment, ignore_comment_text, ignore_comments

PER_FILE_KEY = "per-file-ignores"


@dataclass(frozen=True)
class Ignores:
    comments: tuple[IgnoreComment, ...] = ()
    project: tuple[str, ...] = ()  # pyproject `ignore` plus the per-file-ignores that match this file

    @classmethod
    def of(cls, source: str, project: Iterable[str] = ()) -> Ignores:
        return cls(ignore_comments(source), tuple(project))

    def __bool__(self) -> bool:
        return bool(self.comments or self.project)

    def _silencer(self, f: Finding) -> IgnoreComment | str | None:
        if any(f.code.startswith(p) for p in self.project):
            return "project"
        for c in self.comments:
            if (c.whole_file or c.line == f.span.line) and c.covers(f.code):
                return c
        return None

    def apply(self, findings: Iterable[Finding]) -> list[Finding]:
        """`findings` minus the silenced ones, then a TL006 hint for each unused level-1 ignore."""
        kept: list[Finding] = []
        used: dict[tuple[int, str], bool] = {}  # (comment line, code or "") -> silenced something
        for f in findings:
            who = self._silencer(f)
            if who is None:
                kept.append(f)
            elif isinstance(who, IgnoreComment):
                for code in who.codes or ("",):
                    if not code or f.code.startswith(code):
                        used[who.line, code] = True
        kept.extend(self._unused(used))
        return kept

    def _unused(self, used: Mapping[tuple[int, str], bool]) -> list[Finding]:
        from ..core.front_rules import UNUSED_IGNORE
        from ..core.rules import all_rules, registered

        out: list[Finding] = []
        for c in self.comments:
            for i, code in enumerate(c.codes):
                if used.get((c.line, code)):
                    continue
                # Level 1's rules are loaded; only a code outside them needs every level's (an import on the
                # editor's path, so not done for the common case).
                matching = [r.level for r in registered() if r.code.startswith(code)]
                if not matching:
                    matching = [r.level for r in all_rules() if r.code.startswith(code)]
                if matching and any(lv != Level.TRIAGE for lv in matching):
                    continue  # a later level's finding may still come: not known to be unused
                where = "in this file" if c.whole_file else "on this line"
                why = f"no rule has code {code}" if not matching else f"no {code} finding {where}"
                col, end = c.code_spans[i] if i < len(c.code_spans) else (c.col, c.end_col)
                out.append(
                    UNUSED_IGNORE.finding(
                        f"unused tritonlens ignore: {why}",
                        Span(c.line, col, c.line, end),
                        fix=_removal(c, code),
                        data={"ignore_code": code},
                    )
                )
        return out


def _removal(c: IgnoreComment, code: str) -> Fix:
    """Drop `code` from the comment, or the whole comment when it is its only code."""
    rest = [k for k in c.codes if k != code]
    if rest:
        edit = TextEdit(Span(c.line, c.col, c.line, c.end_col), ignore_comment_text(rest, c.whole_file))
    elif c.own_line:
        edit = TextEdit(Span(c.line, 0, c.line + 1, 0), "")
    else:
        edit = TextEdit(Span(c.line, c.space_col, c.line, c.end_col), "")
    return Fix(f"Remove unused ignore of {code}", (edit,))


def _code_list(value: Any, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [v for v in value.split(",") if v.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"[tool.tritonlens] {key} must be a list of rule codes")
    return tuple(v.strip().upper() for v in value)


def project_codes(table: Mapping[str, Any] | None, relative_path: str) -> tuple[str, ...]:
    """The codes `[tool.tritonlens]` ignores for the file at `relative_path` (posix, relative to the pyproject's
    folder): `ignore` plus every matching `per-file-ignores` entry. Bad values raise ValueError."""
    if not table:
        return ()
    codes = list(_code_list(table.get("ignore") or (), "ignore"))
    per_file = table.get(PER_FILE_KEY) or {}
    if not isinstance(per_file, Mapping):
        raise ValueError(f"[tool.tritonlens.{PER_FILE_KEY}] must map file globs to lists of rule codes")
    rel = PurePosixPath(relative_path.replace("\\", "/"))
    for pattern, value in per_file.items():
        if _matches(str(pattern), rel):
            codes.extend(_code_list(value, f"{PER_FILE_KEY}.{pattern!r}"))
    return tuple(dict.fromkeys(codes))


def _matches(pattern: str, rel: PurePosixPath) -> bool:
    pattern = pattern[2:] if pattern.startswith("./") else pattern
    text = str(rel)
    if fnmatch.fnmatchcase(text, pattern) or fnmatch.fnmatchcase(text, pattern.rstrip("/") + "/*"):
        return True
    return "/" not in pattern and fnmatch.fnmatchcase(rel.name, pattern)


__all__ = ["Ignores", "PER_FILE_KEY", "project_codes"]
