"""Level 1, pattern triage: fast AST rules over one file, run by the language server on every edit.

`triage(source, path)` parses the file once (`analysis.kernels.parse_module`), builds a `KernelContext` for each
jit function (kernels and helpers) and runs every registered check on it. Results are unfiltered: callers apply
`Settings`. A file that does not parse gets a single TL001 finding; a file without kernels gets none.
Each finding's `kernel` is the jit function that contains it (a helper's own name for helper code).
"""

from __future__ import annotations

import ast
import hashlib
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ..core.findings import Evidence, Finding, Span
from ..core.rules import checks, load_package
from ..kernels import ModuleInfo, parse_module, walk_statements
from ..source.lines import source_lines
from ..state.session import current

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TriageResult:
    findings: list[Finding] = field(default_factory=list)
    module: ModuleInfo = field(default_factory=lambda: ModuleInfo(source=""))


def triage(
    source: str, path: str = "<buffer>", *, strict: bool = False, between: Callable[[], None] | None = None
) -> TriageResult:
    """All level-1 findings for one file, sorted by position. `strict` re-raises a failing check (tests);
    `between` is called before each uncached function (a background caller pauses there for the editor)."""
    from .base import TRIAGE
    from .context import KernelContext

    load_package(__name__)  # every rule module of this family, once (again after rules.discover())
    module = parse_module(source)
    if module.syntax_error is not None:
        return _around_syntax_error(module, path, strict, between)
    findings: list[Finding] = []
    kernel_checks = checks(TRIAGE, discover=False)
    keys = _function_keys(module, path)
    # Findings per jit function, keyed by everything a check can read (_function_keys): an edit inside one kernel
    # re-runs the checks of that kernel only, which keeps per-keystroke triage of large files cheap.
    cache = current().triage
    for function in module.functions:
        key = keys[function.name, function.span.line]
        cached = None if strict else cache.get(key)
        if cached is not None:
            findings.extend(cached)
            continue
        if between is not None:
            between()
        own: list[Finding] = []
        try:
            ctx = KernelContext(module=module, kernel=function, path=path)
        except Exception:
            if strict:
                raise
            log.exception("triage could not analyze %s in %s", function.name, path)
            continue
        for check in kernel_checks:
            try:
                own.extend(check.run(ctx))
            except Exception:  # a broken rule must never take the editor's diagnostics down
                if strict:
                    raise
                log.exception("triage check %s failed on %s in %s", check.name, function.name, path)
        cache.put(key, tuple(own))
        findings.extend(own)
    from .lanes import one_per_cause

    unique: dict[tuple[object, ...], Finding] = {}
    for f in findings:
        unique.setdefault((f.code, f.span, f.kernel, f.message), f)
    ordered = sorted(one_per_cause(list(unique.values())), key=lambda f: (f.span.line, f.span.col, f.code))
    return TriageResult(ordered, module)


# Line breaks for str.splitlines other than "\n": where one occurs, splitlines' lines are not ast's lines.
_OTHER_BREAKS = re.compile("[\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def _function_keys(module: ModuleInfo, path: str) -> dict[tuple[str, int], str]:
    """Key of each jit function: everything its checks can read, with positions. That is its own text, the
    jit functions it calls or is called by, the module's top-level statements (imports, constants, module-level
    launches), the host functions that launch it or its relatives, and where every jit function sits.
    Conservative: an edit that moves lines invalidates every function below it."""
    lines = source_lines(module.source, keepends=True)  # ast's lines, not splitlines'

    def digest_of(start: int, end: int) -> str:
        text = f"{start}:" + "".join(lines[start - 1 : end])
        return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()

    functions = module.functions
    defs: dict[str, list[str]] = {}
    top: list[str] = []
    for stmts, memo in _chunks(module, cacheable=not _OTHER_BREAKS.search(module.source)):
        parts = memo.get(_KEYS_MEMO)
        if parts is None:
            parts = _chunk_digests(stmts, digest_of)
            memo[_KEYS_MEMO] = parts
        for name, digest in parts[0]:
            defs.setdefault(name, []).append(digest)
        top.extend(parts[1])
    ranges = sorted((f.span.line, f.span.end_line) for f in functions)
    # TL122 reads whether any host code of the file makes float64 data (hygiene._host_float64), a function that
    # need not launch the kernel; the count of such words changes whenever that code is added or removed
    float64_words = len(_FLOAT64_WORDS.findall(module.source))
    context = hashlib.blake2b(f"{path}\0{ranges}\0{top}\0{float64_words}".encode(), digest_size=16)
    launchers: dict[str, set[str]] = {}
    for site in module.launches:
        if site.function:
            launchers.setdefault(site.kernel, set()).add(site.function)
    callers: dict[str, set[str]] = {}
    for g in functions:
        for helper in g.helpers:
            callers.setdefault(helper, set()).add(g.name)
    # Each name's part of a key is encoded once: in a long call chain every function relates to every other.
    parts: dict[str, bytes] = {}

    def part(name: str) -> bytes:
        got = parts.get(name)
        if got is None:
            got = parts[name] = f"|{name}:{','.join(defs.get(name, []))}".encode()
        return got

    keys: dict[tuple[str, int], str] = {}
    for f in functions:
        related = sorted({f.name, *f.helpers, *callers.get(f.name, ())})
        hosts = sorted({host for name in related for host in launchers.get(name, ())})
        digest = context.copy()
        digest.update(digest_of(f.span.line, f.span.end_line).encode())
        digest.update(b"".join(part(name) for name in (*related, "\0", *hosts)))
        keys[f.name, f.span.line] = digest.hexdigest()
    return keys


_KEYS_MEMO = ("triage.function_keys",)
_FLOAT64_WORDS = re.compile(r"\b(?:float64|double)\b")
_Digests = tuple[list[tuple[str, str]], list[str]]


def _chunks(
    module: ModuleInfo, *, cacheable: bool
) -> Iterator[tuple[tuple[ast.stmt, ...], dict[object, object]]]:
    """The module's top-level statements in parsed chunks, each with the memo where its digests are kept.
    A chunk's digests read its own lines only when line numbers mean the same for ast and splitlines."""
    if module.tree is None:
        return
    chunks = module._chunks
    if cacheable and chunks and sum(len(c.stmts) for c in chunks) == len(module.tree.body):
        for chunk in chunks:
            yield chunk.stmts, chunk.memo
    else:
        yield tuple(module.tree.body), {}


def _chunk_digests(stmts: tuple[ast.stmt, ...], digest_of: Callable[[int, int], str]) -> _Digests:
    """(name, digest) of every def, nested ones included, in the statement walker's (deterministic) order;
    digests of the other top-level statements (classes aside)."""
    defs: list[tuple[str, str]] = []
    top: list[str] = []
    for node, *_ in walk_statements(ast.Module(body=list(stmts), type_ignores=[])):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            defs.append((node.name, digest_of(start, node.end_lineno or node.lineno)))
    for stmt in stmts:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            top.append(digest_of(stmt.lineno, stmt.end_lineno or stmt.lineno))
    return defs, top


# a jit decorator as written (`@triton.jit`, `@jit`, `@triton.jit(...)`): counted in text, since the file does not parse
_JIT_DECORATOR = re.compile(r"^[ \t]*@[ \t]*(?:[A-Za-z_][A-Za-z_0-9]*[ \t]*\.[ \t]*)?jit\b", re.MULTILINE)


def _around_syntax_error(module: ModuleInfo, path: str, strict: bool,
                         between: Callable[[], None] | None) -> TriageResult:
    """TL001, and the findings of the file's kernels when the error sits outside every @triton.jit function (a bad
    import, host code half typed): that one line is blanked, line numbers kept, and the rest is triaged if it then
    parses. An error inside a jit function stops there: its findings would describe code that is not there."""
    error = module.syntax_error
    assert error is not None
    alone = TriageResult([_syntax_finding(module)], module)
    lines = module.source.splitlines(keepends=True)
    if not 1 <= error.line <= len(lines) or not _JIT_DECORATOR.search(module.source):
        return alone  # no kernel to save
    ending = lines[error.line - 1][len(lines[error.line - 1].rstrip("\r\n")):]
    patched = "".join([*lines[: error.line - 1], ending or "\n", *lines[error.line:]])
    rest_module = parse_module(patched)
    if rest_module.syntax_error is not None:  # a statement over several lines, a block left empty
        return alone
    if any(f.span.line <= error.line <= f.span.end_line for f in rest_module.functions):
        return alone
    rest = triage(patched, path, strict=strict, between=between)
    # the module stays the file as written (its syntax error included): later levels wait for a file that parses
    return TriageResult(sorted([_syntax_finding(module, around=True), *rest.findings],
                               key=lambda f: (f.span.line, f.span.col, f.code)), module)


def _syntax_finding(module: ModuleInfo, around: bool = False) -> Finding:
    from ..core.front_rules import SYNTAX_ERROR

    error = module.syntax_error
    assert error is not None
    kernels = len(_JIT_DECORATOR.findall(module.source))
    plural = "s are" if kernels > 1 else " is"
    if around:  # the rest of the file parsed without this line
        unread = f" (the file's {kernels} @triton.jit function{plural} checked with line {error.line} left out)"
    else:
        unread = f" (the file's {kernels} @triton.jit function{plural} not analysed until it parses)" if kernels else ""
    return SYNTAX_ERROR.finding(
        f"syntax error: {error.message}{unread}",
        Span(error.line, error.col, error.end_line, error.end_col),
        evidence=(Evidence(kind="ast", summary="Python parser error", excerpt=error.message),),
    )


__all__ = ["TriageResult", "triage"]
