"""`# tritonlens: NAME=VALUE, ...` comments that pin a kernel's specialization by hand, and
`# tritonlens: ignore[TL127]` / `# tritonlens: ignore-file[TL127]` comments that silence findings (ruff's `noqa`).

A pragma belongs to the kernel whose `def` (or decorator block) it sits on or directly above:
a run of comment lines right above the first decorator, comments between decorators, or a trailing
comment on the `def` line. Values are Python literals (`1024`, `1e-5`, `True`, `"relu"`) or Triton
type spellings (`*fp16`, `i32`, `fp32`), so one pragma can give a constexpr's value or a pointer's dtype.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from typing import Any

from ..source.lines import source_lines

PRAGMA_RE = re.compile(r"#\s*tritonlens\s*:\s*(?P<body>.*)$")
# Triton's type spellings: optional `*` (pointer) then a scalar type.
TYPE_RE = re.compile(
    r"^\*?(?:i1|i8|i16|i32|i64|u1|u8|u16|u32|u64|fp8e4nv|fp8e5|fp8e4b15|fp16|bf16|fp32|fp64)$"
)
DTYPE_VALUE_RE = re.compile(r"^(?:tl|triton\.language)\.(?:u?int\d+|float\d+\w*|bfloat16|int1|float8\w+)$")
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAX_VALUE_CHARS = 1_000  # longer is garbage, not a specialization (and deep nesting crashes Python's parser)


@dataclass(frozen=True)
class TritonType:
    """A type given instead of a value, e.g. `x_ptr=*fp16`."""

    spelling: str

    @property
    def is_pointer(self) -> bool:
        return self.spelling.startswith("*")


@dataclass(frozen=True)
class PragmaEntry:
    name: str
    value: Any  # a Python literal or a TritonType
    line: int  # 1-based line of the comment
    col: int = 0  # 0-based column of the name


@dataclass(frozen=True)
class PragmaProblem:
    line: int
    col: int
    end_col: int
    message: str


@dataclass(frozen=True)
class Pragma:
    entries: tuple[PragmaEntry, ...]
    problems: tuple[PragmaProblem, ...]

    def as_dict(self) -> dict[str, PragmaEntry]:
        return {e.name: e for e in self.entries}


def parse_value(text: str) -> Any:
    """A pragma or pyproject value: a Triton type spelling or a Python literal; ValueError otherwise."""
    text = text.strip()
    if TYPE_RE.match(text):
        return TritonType(text)
    if DTYPE_VALUE_RE.match(text):
        return "tl." + text.rsplit(".", 1)[1]  # a dtype-valued constexpr: the runner turns it into the dtype
    if len(text) > MAX_VALUE_CHARS:
        raise ValueError(f"a value of {len(text):,} characters is too long (at most {MAX_VALUE_CHARS:,})")
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        # MemoryError/RecursionError: the parser's answer to deep nesting (`------1`, `1+1+...+1`)
        raise ValueError(
            f"{_short(text)!r} is neither a literal (1024, 1e-5, True) nor a Triton type (*fp16, i32)"
        ) from None
    if not _finite(value):
        raise ValueError(f"{_short(text)!r} is not a finite number")
    return value


def _short(text: str) -> str:
    return text if len(text) <= 60 else f"{text[:40]}...({len(text):,} characters)"


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, complex):
        return math.isfinite(value.real) and math.isfinite(value.imag)
    if isinstance(value, (tuple, list, set, frozenset)):
        return all(_finite(v) for v in value)
    if isinstance(value, dict):
        return all(_finite(k) and _finite(v) for k, v in value.items())
    return True


def comment_lines(source: str) -> dict[int, tuple[int, str]]:
    """line -> (column, text) of every `# tritonlens:` comment (a line scan: fast, and fine on half-typed code)."""
    out: dict[int, tuple[int, str]] = {}
    if "tritonlens" not in source:
        return out
    for n, line in enumerate(source_lines(source), start=1):
        if "tritonlens" not in line:
            continue
        match = _COMMENT_RE.search(line)
        if match and not _inside_string(line, match.start()):
            out[n] = (match.start(), line[match.start() :].rstrip())
    return out


_COMMENT_RE = re.compile(r"#\s*tritonlens\s*:")


def _inside_string(line: str, col: int) -> bool:
    """Whether `col` sits inside a one-line string literal (a quote opened before it and not closed)."""
    quote = ""
    for ch in line[:col]:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
    return bool(quote)


def _split_items(body: str) -> list[tuple[int, str]]:
    """Split `A=1, B="x,y", C=(1, 2)` at top-level commas; returns (offset in body, item)."""
    items: list[tuple[int, str]] = []
    depth, quote, start = 0, "", 0
    for i, ch in enumerate(body):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append((start, body[start:i]))
            start = i + 1
    items.append((start, body[start:]))
    return [(off, item) for off, item in items if item.strip()]


def _indent(source_lines: list[str] | None, line: int) -> int:
    """Column where the line's text starts (a comment after code does not count as a line of its own)."""
    if not source_lines or line > len(source_lines):
        return 0
    text = source_lines[line - 1]
    return len(text) - len(text.lstrip())


def parse_comment(line: int, col: int, comment: str) -> tuple[list[PragmaEntry], list[PragmaProblem]]:
    match = PRAGMA_RE.match(comment)
    if not match or IGNORE_RE.match(comment):  # an ignore comment pins nothing
        return [], []
    entries: list[PragmaEntry] = []
    problems: list[PragmaProblem] = []
    body_col = col + match.start("body")
    for off, item in _split_items(match.group("body")):
        item_col = body_col + off + (len(item) - len(item.lstrip()))
        name, sep, value_text = item.strip().partition("=")
        name = name.strip()
        end_col = item_col + len(item.strip())
        if not sep or not NAME_RE.match(name):
            problems.append(
                PragmaProblem(line, item_col, end_col, f"expected NAME=VALUE, got {item.strip()!r}")
            )
            continue
        try:
            entries.append(PragmaEntry(name, parse_value(value_text), line, item_col))
        except ValueError as exc:
            problems.append(PragmaProblem(line, item_col, end_col, f"{name}: {exc}"))
    return entries, problems


def pragma_for(
    comments: dict[int, tuple[int, str]],
    first_line: int,
    def_line: int,
    source_lines: list[str] | None = None,
) -> Pragma:
    """The pragma of a function whose decorators start at first_line and whose `def` is on def_line.

    Comment lines directly above the decorators count, across blank lines but never across code."""
    lines = [n for n in range(first_line, def_line + 1) if n in comments]
    above = first_line - 1
    while above >= 1:
        if above in comments and comments[above][0] == _indent(source_lines, above):
            lines.insert(0, above)
        elif not (source_lines and above <= len(source_lines) and not source_lines[above - 1].strip()):
            break
        above -= 1
    entries: list[PragmaEntry] = []
    problems: list[PragmaProblem] = []
    for n in sorted(lines):
        col, text = comments[n]
        got, bad = parse_comment(n, col, text)
        entries.extend(got)
        problems.extend(bad)
    return Pragma(tuple(entries), tuple(problems))


# -- ignore comments -----------------------------------------------------------------------------------------
# `ignore` alone silences every code on its line (ruff's bare `noqa`); codes are rule codes or prefixes (TL1).
IGNORE_RE = re.compile(r"#\s*tritonlens\s*:\s*ignore(?P<file>-file)?\b\s*(?:\[(?P<codes>[^\]]*)\])?")
CODE_RE = re.compile(r"^TL\d{0,3}$")


@dataclass(frozen=True)
class IgnoreComment:
    line: int  # 1-based line of the comment
    col: int  # 0-based column of its `#`
    end_col: int
    codes: tuple[str, ...]  # empty: every code
    whole_file: bool
    code_spans: tuple[tuple[int, int], ...] = ()  # (col, end_col) of each code, in the order of `codes`
    space_col: int = 0  # where the blank run before the `#` starts (removing the comment removes it too)
    own_line: bool = False  # nothing but the comment on its line

    def covers(self, code: str) -> bool:
        return not self.codes or any(code.startswith(c) for c in self.codes)


def ignore_comments(source: str) -> tuple[IgnoreComment, ...]:
    """Every `# tritonlens: ignore[...]` and `# tritonlens: ignore-file[...]` comment of the file."""
    out: list[IgnoreComment] = []
    comments = comment_lines(source)
    lines = source_lines(source) if comments else []
    for line, (col, text) in comments.items():
        match = IGNORE_RE.match(text)
        if match is None:
            continue
        codes: list[str] = []
        spans: list[tuple[int, int]] = []
        if match.group("codes") is not None:
            base = col + match.start("codes")
            for off, item in _split_items(match.group("codes")):
                code = item.strip().upper()
                if code and code not in codes:
                    start = base + off + len(item) - len(item.lstrip())
                    codes.append(code)
                    spans.append((start, start + len(item.strip())))
        before = lines[line - 1][:col] if line <= len(lines) else ""
        out.append(
            IgnoreComment(
                line,
                col,
                col + match.end(),
                tuple(codes),
                bool(match.group("file")),
                tuple(spans),
                len(before.rstrip()),
                not before.strip(),
            )
        )
    return tuple(out)


def ignore_comment_text(codes: list[str] | tuple[str, ...], whole_file: bool) -> str:
    kind = "ignore-file" if whole_file else "ignore"
    return f"# tritonlens: {kind}[{', '.join(codes)}]"
