"""Parse an LLM reply into a candidate file, or say exactly why it is rejected. Pure; never runs the code.

Only the code block of the `<<<FILE>>>` section is kept (titles and reasoning are shown as text, never acted on).
The file must parse, stay within a size bound, still define the kernel and the KernelBench names the original
had, and import/call nothing the original does not (no `os`, `subprocess`, `open`, `exec`, ...). This screen is a
first filter only (`torch.os.system` or `_o = open` pass it): the wall is the runner's sandbox, where the gate
compiles and runs every LLM candidate (ascend_runner/worker/sandbox_exec.py).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from .llm_prompt import MARK_END, MARK_EVIDENCE, MARK_FILE, MARK_REASONING, MARK_TITLE

KERNELBENCH_NAMES = ("Model", "ModelNew", "get_inputs", "get_init_inputs")
ALWAYS_ALLOWED_IMPORTS = frozenset({"triton", "torch", "math"})
FORBIDDEN_CALLS = frozenset(
    {"eval", "exec", "compile", "open", "__import__", "breakpoint", "input", "globals", "locals", "vars", "setattr",
     "delattr"}
)
MAX_CHARS = 200_000


@dataclass(frozen=True)
class Reply:
    title: str
    evidence: tuple[str, ...]
    reasoning: str
    source: str


@dataclass(frozen=True)
class Rejected:
    reason: str


def parse_reply(text: str | None, original: str, kernel: str, *, finish_reason: str | None = None) -> Reply | Rejected:
    if finish_reason == "length":
        return Rejected("truncated: the reply hit the model's output limit (finish_reason=length)")
    if not text or not text.strip():
        return Rejected(f"empty reply (finish_reason={finish_reason})")
    sections = _sections(text)
    if isinstance(sections, Rejected):
        return sections
    code = _code_block(sections[MARK_FILE])
    if isinstance(code, Rejected):
        return code
    problem = check_source(code, original, kernel)
    if problem:
        return Rejected(problem)
    title = " ".join(sections[MARK_TITLE].split())[:160] or "LLM rewrite"
    codes = tuple(sorted(set(re.findall(r"\bTL\d{3}\b", sections[MARK_EVIDENCE]))))
    return Reply(title, codes, sections[MARK_REASONING].strip()[:4000], code)


def _sections(text: str) -> dict[str, str] | Rejected:
    marks = (MARK_TITLE, MARK_EVIDENCE, MARK_REASONING, MARK_FILE, MARK_END)
    positions = []
    for mark in marks:
        count = text.count(mark)
        if count == 0:
            what = "truncated or off-format" if mark == MARK_END else "off-format"
            return Rejected(f"{what}: the reply has no {mark} marker")
        if count > 1:
            return Rejected(f"off-format: {mark} appears {count} times")
        positions.append(text.index(mark))
    if positions != sorted(positions):
        return Rejected("off-format: the markers are not in the order TITLE, EVIDENCE, REASONING, FILE, END")
    out: dict[str, str] = {}
    for i, mark in enumerate(marks[:-1]):
        out[mark] = text[positions[i] + len(mark) : positions[i + 1]]
    return out


def _code_block(section: str) -> str | Rejected:
    blocks = re.findall(r"^(`{3,})[ \t]*(?:python|py)?[ \t]*\n(.*?)^\1[ \t]*$", section, re.S | re.M)
    if len(blocks) != 1:
        return Rejected(f"off-format: the {MARK_FILE} section must hold exactly one fenced code block ({len(blocks)})")
    return blocks[0][1]


def check_source(code: str, original: str, kernel: str) -> str | None:
    """Why `code` cannot be a candidate for `original`, or None."""
    limit = min(MAX_CHARS, 4 * len(original) + 20_000)
    if len(code) > limit:
        return f"too large: {len(code)} characters (limit {limit})"
    if re.search(r"^\s*\d+\| ", code, re.M):
        return "the file kept the prompt's line numbers ('  12| ...')"
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return f"does not parse: line {exc.lineno}: {exc.msg}"
    from ..kernels import parse_module

    before = {n.name for n in ast.parse(original).body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    after = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    missing = [n for n in KERNELBENCH_NAMES if n in before and n not in after]
    if missing:
        return f"drops {', '.join(missing)}, which the original defines"
    jitted = {k.name for k in parse_module(code).kernels} | {k.name for k in parse_module(code).helpers}
    if kernel not in jitted:
        return f"no longer defines the @triton.jit kernel {kernel!r}"
    allowed = ALWAYS_ALLOWED_IMPORTS | _imports(ast.parse(original))
    extra = sorted(_imports(tree) - allowed)
    if extra:
        return f"imports {', '.join(extra)}, which the original does not (only its imports and triton/torch/math)"
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
            return f"calls {node.func.id}() (line {node.lineno}): candidates may not read, write or execute anything"
        if isinstance(node, ast.Attribute) and node.attr.startswith("__") and node.attr.endswith("__"):
            if node.attr not in ("__init__", "__name__"):
                return f"uses {node.attr} (line {node.lineno}): dunder access is not allowed in candidates"
    return None


def _imports(tree: ast.AST) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module.split(".")[0])
    return out
