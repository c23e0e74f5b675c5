"""Parse MLIR text (Triton TTIR/TTGIR, Ascend ttadapter) into ops with resolved source locations.

MLIR prints locations as aliases (`#loc3 = loc("f.py":12:16)`) or inline `loc(...)`. The forms Triton emits:
file locations `"file":line:col`, named `"x"(#loc3)` (the variable name on that line), call sites
`callsite(#callee at #caller)` (code inlined from triton/language/*.py at a user call), fused
`fused[#a, #b]`, and `unknown`. Every location resolves to a chain of frames, innermost first, so a caller
can pick the outermost frame that lies in the user's file.

Pure functions over text; no MLIR bindings.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SourceLoc:
    file: str
    line: int  # 1-based
    col: int  # as printed by MLIR (Triton uses the Python AST's 0-based column)


@dataclass(frozen=True)
class LocChain:
    """A resolved location: frames innermost first (callee ... caller) and the variable name if one was given."""

    frames: tuple[SourceLoc, ...] = ()
    name: str | None = None

    def user_frame(self, is_user: UserFiles) -> SourceLoc | None:
        """The innermost frame in the user's file; for inlined library code that is the user's call site."""
        for frame in self.frames:
            if is_user(frame.file):
                return frame
        return None


class UserFiles:
    """Decides whether a location's file is the user's file being analyzed.

    Workers compile from a temporary copy, so the IR may name another directory: an exact path match wins,
    otherwise the basename must match (and never a file under triton/language or another library path).
    """

    def __init__(self, paths: Iterable[str]) -> None:
        self.paths = {os.path.normpath(p) for p in paths if p}
        self.basenames = {os.path.basename(p) for p in self.paths}
        self._cache: dict[str, bool] = {}

    def __call__(self, file: str) -> bool:
        hit = self._cache.get(file)
        if hit is None:
            norm = os.path.normpath(file) if file else ""
            if norm in self.paths:
                hit = True
            elif _is_library(norm):
                hit = False
            else:
                hit = os.path.basename(norm) in self.basenames
            self._cache[file] = hit
        return hit

    def add(self, path: str) -> None:
        if path:
            norm = os.path.normpath(path)
            self.paths.add(norm)
            self.basenames.add(os.path.basename(norm))
            self._cache.clear()


_LIBRARY_PARTS = (
    f"{os.sep}triton{os.sep}language{os.sep}",
    f"{os.sep}site-packages{os.sep}",
    f"{os.sep}triton{os.sep}",
)


def _is_library(path: str) -> bool:
    return any(part in path for part in _LIBRARY_PARTS)


_ALIAS_RE = re.compile(r"^(#loc\d*)\s*=\s*loc\((.*)\)\s*$")
_FILE_LOC_RE = re.compile(r'^"((?:[^"\\]|\\.)*)":(\d+):(\d+)(?:\s+to\s+:?\d+:\d+)?$')
_NAMED_RE = re.compile(r'^"((?:[^"\\]|\\.)*)"\((.*)\)$')


class LocTable:
    """`#locN` aliases of one MLIR module, resolved lazily and memoized."""

    def __init__(self, aliases: dict[str, str]) -> None:
        self._raw = aliases
        self._resolved: dict[str, LocChain] = {}

    @classmethod
    def from_text(cls, text: str) -> LocTable:
        aliases: dict[str, str] = {}
        for line in text.splitlines():
            if line.startswith("#loc"):
                m = _ALIAS_RE.match(line.strip())
                if m:
                    aliases[m[1]] = m[2]
        return cls(aliases)

    def __len__(self) -> int:
        return len(self._raw)

    def resolve(self, expr: str) -> LocChain:
        """Resolve a location expression: an alias (`#loc3`), or the inside of `loc(...)`."""
        return self._resolve(expr.strip(), 0)

    def _resolve(self, expr: str, depth: int) -> LocChain:
        if depth > 64:  # aliases never nest this deep; protects against a malformed cycle
            return LocChain()
        if expr.startswith("#loc"):
            cached = self._resolved.get(expr)
            if cached is not None:
                return cached
            raw = self._raw.get(expr)
            chain = LocChain() if raw is None else self._resolve(raw.strip(), depth + 1)
            self._resolved[expr] = chain
            return chain
        if expr.startswith("loc(") and expr.endswith(")"):
            return self._resolve(expr[4:-1].strip(), depth + 1)
        if expr == "unknown" or not expr:
            return LocChain()
        m = _FILE_LOC_RE.match(expr)
        if m:
            return LocChain((SourceLoc(m[1], int(m[2]), int(m[3])),))
        if expr.startswith("callsite(") and expr.endswith(")"):
            callee, caller = _split_callsite(expr[len("callsite(") : -1])
            inner = self._resolve(callee, depth + 1)
            outer = self._resolve(caller, depth + 1)
            return LocChain(inner.frames + outer.frames, inner.name or outer.name)
        if expr.startswith("fused"):
            return self._resolve_fused(expr, depth)
        m = _NAMED_RE.match(expr)
        if m:
            inner = self._resolve(m[2], depth + 1)
            return LocChain(inner.frames, m[1])
        return LocChain()

    def _resolve_fused(self, expr: str, depth: int) -> LocChain:
        # fused<#meta>[a, b]: the first part with a file location carries the source position.
        start = expr.find("[")
        if start < 0 or not expr.endswith("]"):
            return LocChain()
        for part in _split_top(expr[start + 1 : -1], ","):
            chain = self._resolve(part, depth + 1)
            if chain.frames:
                return chain
        return LocChain()


def _split_top(text: str, sep: str) -> list[str]:
    """Split on `sep` outside brackets and strings."""
    parts: list[str] = []
    depth, in_str, start, i = 0, False, 0, 0
    while i < len(text):
        ch = text[i]
        if in_str:
            if ch == "\\":
                i += 1
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i].strip())
            start = i + len(sep)
        i += 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _split_callsite(body: str) -> tuple[str, str]:
    parts = _split_top(body, " at ")
    if len(parts) != 2:
        return body, ""
    return parts[0], parts[1]


@dataclass
class MlirOp:
    """One operation line of the module's body."""

    ir_line: int  # 1-based line in the stage text
    name: str  # "tt.load", "ttg.convert_layout", "scf.for", ...
    results: tuple[str, ...]  # SSA names without '%', "acc_50" for "%acc_50:9"
    operands: tuple[str, ...]  # SSA names used on the line (without '%'), in order, results excluded
    text: str  # the line without its trailing loc(...)
    loc: LocChain
    loops: tuple[int, ...] = ()  # ir_lines of the enclosing scf.for/while ops, outermost first
    func: str | None = None
    # Values bound by the region this op opens: an scf.for's induction variable then its iter_args, an
    # scf.while's "before" arguments.
    region_args: tuple[str, ...] = ()
    iter_args: tuple[tuple[str, str], ...] = ()  # (region argument, initial value)
    scope: tuple[int, ...] = ()  # ids of the enclosing regions, outermost first (then/else differ)

    @property
    def result_type(self) -> str:
        """The text after the last ':' of the line (the printed result or operand type)."""
        return self.text.rsplit(" : ", 1)[-1] if " : " in self.text else ""


@dataclass
class FuncArg:
    name: str
    type: str
    divisibility: int | None
    loc: LocChain


@dataclass
class MlirModule:
    ops: list[MlirOp]
    locs: LocTable
    funcs: dict[str, list[FuncArg]] = field(default_factory=dict)
    func_locs: dict[str, LocChain] = field(default_factory=dict)
    attributes: dict[str, str] = field(default_factory=dict)  # module attributes, e.g. "ttg.num-warps": "4"
    aliases: dict[str, str] = field(default_factory=dict)  # non-loc attribute aliases: "#blocked" -> text
    # Block arguments (region_args, `^bb0(%a: ...)`) -> ir_line of the op that owns their region.
    block_args: dict[str, int] = field(default_factory=dict)

    def defs(self) -> dict[str, MlirOp]:
        """SSA name -> defining op (block arguments of scf.for map to the loop op)."""
        out: dict[str, MlirOp] = {}
        for op in self.ops:
            for r in op.results:
                out[r] = op
        return out

    def kernel_files(self) -> set[str]:
        return {c.frames[0].file for c in self.func_locs.values() if c.frames}


_TRAILING_LOC_RE = re.compile(r"\s+loc\((#loc\d*|.*)\)\s*$")
_RESULTS_RE = re.compile(r"^((?:%[\w.$-]+(?::\d+)?\s*,\s*)*%[\w.$-]+(?::\d+)?)\s*=\s*(.*)$")
_OPNAME_RE = re.compile(r'^"?([a-z_][\w]*\.[\w.]+)"?')
_SSA_RE = re.compile(r"%([\w.$-]+)")
_FUNC_RE = re.compile(
    r"^\s*(?:tt\.func|func\.func|llvm\.func)\s+(?:public\s+|private\s+)?@([\w.$-]+)\((.*)\)"
)
_ARG_RE = re.compile(r"%([\w.$-]+):\s*([^{]+?)\s*(\{[^}]*\})?\s*(?:loc\((.*?)\))?\s*$")
_DIV_RE = re.compile(r"tt\.divisibility\s*=\s*(\d+)")
_MODULE_ATTR_RE = re.compile(r'("?[\w.-]+"?)\s*=\s*("[^"]*"|[\w.-]+)(?:\s*:\s*\w+)?')
_ATTR_ALIAS_RE = re.compile(r"^(#(?!loc)[\w.]+)\s*=\s*(.*)$")
_LOOP_OPS = ("scf.for", "scf.while")
_MODULE_MARK = MlirOp(0, "builtin.module", (), (), "", LocChain())  # a region that is neither func nor op


class _Scopes:
    """SSA names per region. MLIR's printer reuses a name in sibling regions (two loops that both define
    `%cols`, then/else branches), so every definition gets a module-unique name (`cols$2` for the second
    `%cols`) and each use is resolved to the definition visible from its region."""

    def __init__(self) -> None:
        self.stack: list[tuple[int, int, dict[str, str]]] = [(0, 0, {})]  # (brace depth, id, names)
        self.used: set[str] = set()
        self.next_id = 1

    def push(self, depth: int) -> None:
        self.stack.append((depth, self.next_id, {}))
        self.next_id += 1

    def pop_to(self, depth: int) -> None:
        while len(self.stack) > 1 and self.stack[-1][0] > depth:
            self.stack.pop()

    def path(self) -> tuple[int, ...]:
        return tuple(s[1] for s in self.stack[1:])

    def define(self, name: str) -> str:
        unique, k = name, 1
        while unique in self.used:
            k += 1
            unique = f"{name}${k}"
        self.used.add(unique)
        self.stack[-1][2][name] = unique
        return unique

    def bind_as_is(self, name: str) -> None:
        self.used.add(name)
        self.stack[-1][2][name] = name

    def lookup(self, name: str) -> str:
        for _, _, names in reversed(self.stack):
            got = names.get(name)
            if got is not None:
                return got
        return name


_FOR_IV_RE = re.compile(r"^scf\.for\s+%([\w.$-]+)\s*=")
_BIND_RE = re.compile(r"%([\w.$-]+)\s*=\s*%([\w.$-]+)")
_BLOCK_RE = re.compile(r"^\^[\w.$-]+\s*\((.*)\)\s*:?\s*$")


def _region_bindings(name: str, rest: str) -> tuple[list[str], list[tuple[str, str]]]:
    """(region arguments, (argument, initial value) pairs) an scf.for / scf.while line binds."""
    args: list[str] = []
    pairs: list[tuple[str, str]] = []
    if name == "scf.for":
        iv = _FOR_IV_RE.match(rest)
        if iv:
            args.append(iv[1])
        if "iter_args(" in rest:
            pairs = _BIND_RE.findall(rest.split("iter_args(", 1)[1].split(")", 1)[0])
    elif name == "scf.while":
        m = re.match(r"^scf\.while\s*\(([^)]*)\)", rest)
        if m:
            pairs = _BIND_RE.findall(m[1])
    args.extend(a for a, _ in pairs)
    return args, pairs


def parse_mlir(text: str) -> MlirModule:
    """Parse a printed MLIR module (with `mlir-print-debuginfo` style locations) into ops."""
    locs = LocTable.from_text(text)
    ops: list[MlirOp] = []
    funcs: dict[str, list[FuncArg]] = {}
    func_locs: dict[str, LocChain] = {}
    attributes: dict[str, str] = {}
    aliases: dict[str, str] = {}
    block_args: dict[str, int] = {}
    scopes = _Scopes()
    # Ops that opened a region, with the brace depth inside it: scf.for/tt.reduce print their loc on the
    # closing "} loc(...)" line, and loops give each op its enclosing loops.
    regions: list[tuple[int, MlirOp | None]] = []
    depth = 0
    func: str | None = None
    for idx, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("//"):
            continue
        if line.startswith("#"):
            m = _ATTR_ALIAS_RE.match(line)
            if m and not line.startswith("#loc"):
                aliases[m[1]] = m[2]
            continue
        opens, closes = _brace_delta(line)
        net = opens - closes
        if line.startswith("}"):
            # "} else {" / "} do {" close one region and open its sibling: names do not carry over.
            scopes.pop_to(depth - closes)
            if opens > 0:
                scopes.push(depth - closes + opens)
            if net < 0:
                depth += net
                closing: MlirOp | None | str = "none"
                while regions and regions[-1][0] > depth:
                    closing = regions.pop()[1]
                chain = _loc_of(line, locs)
                if (
                    isinstance(closing, MlirOp)
                    and closing is not _MODULE_MARK
                    and not closing.loc.frames
                    and chain.frames
                ):
                    closing.loc = chain
                if func is not None and closing is None and not any(r[1] is None for r in regions):
                    if chain.frames:
                        func_locs.setdefault(func, chain)
                    func = None
            continue
        if line.startswith("module"):
            for m in _MODULE_ATTR_RE.finditer(line.partition("attributes")[2]):
                attributes[m[1].strip('"')] = m[2].strip('"')
            if net > 0:
                depth += net
                regions.append((depth, _MODULE_MARK))
                scopes.push(depth)
            continue
        fm = _FUNC_RE.match(line)
        if fm:
            func = fm[1]
            funcs[func] = _parse_args(fm[2], locs)
            if net > 0:
                depth += net
                regions.append((depth, None))
                scopes.push(depth)
                for arg in funcs[func]:
                    scopes.bind_as_is(arg.name)  # messages name arguments: never renamed
            continue
        bm = _BLOCK_RE.match(_cut_loc(line)[0]) if line.startswith("^") else None
        if bm:
            owner = next((r[1] for r in reversed(regions) if isinstance(r[1], MlirOp)), None)
            for name in re.findall(r"%([\w.$-]+)\s*:", bm[1]):
                unique = scopes.define(name)
                if owner is not None and owner is not _MODULE_MARK:
                    block_args[unique] = owner.ir_line
            continue
        body, _, loc_expr = _cut_loc(line)
        chain = locs.resolve(loc_expr) if loc_expr else LocChain()
        results: tuple[str, ...] = ()
        rest = body
        rm = _RESULTS_RE.match(body)
        if rm:
            results = tuple(r.strip().lstrip("%").split(":")[0] for r in rm[1].split(","))
            rest = rm[2]
        nm = _OPNAME_RE.match(rest)
        op: MlirOp | None = None
        bound: list[str] = []
        pairs: list[tuple[str, str]] = []
        if nm:
            bound, pairs = _region_bindings(nm[1], rest)
            # Uses resolve in the enclosing scope; the op's results are defined there too, while its
            # region arguments live in the region it opens.
            operands = tuple(
                scopes.lookup(s) for s in _SSA_RE.findall(rest) if s not in results and s not in bound
            )
            uniq_results = tuple(scopes.define(r) for r in results)
            loops = tuple(
                r[1].ir_line for r in regions if isinstance(r[1], MlirOp) and r[1].name in _LOOP_OPS
            )
            op = MlirOp(idx, nm[1], uniq_results, operands, body, chain, loops, func, scope=scopes.path())
            ops.append(op)
        if net > 0:
            depth += net
            regions.append((depth, op if op is not None else _MODULE_MARK))
            scopes.push(depth)
            if op is not None and bound:
                inits = {a: scopes.lookup(i) for a, i in pairs}  # still the enclosing scope's names
                op.region_args = tuple(scopes.define(a) for a in bound)
                renamed = dict(zip(bound, op.region_args, strict=True))
                op.iter_args = tuple((renamed[a], inits[a]) for a, _ in pairs)
                # iv and iter_args stay listed as operands (as before) under their unique names
                op.operands = op.operands + op.region_args
                for a in op.region_args:
                    block_args[a] = op.ir_line
    return MlirModule(ops, locs, funcs, func_locs, attributes, aliases, block_args)


def _brace_delta(line: str) -> tuple[int, int]:
    # Braces inside attribute dictionaries ({tt.divisibility = 16}) balance on the line, so the net count
    # tracks region nesting.
    no_str = re.sub(r'"(?:[^"\\]|\\.)*"', "", line)
    return no_str.count("{"), no_str.count("}")


def _cut_loc(line: str) -> tuple[str, str, str]:
    m = _TRAILING_LOC_RE.search(line)
    if not m:
        return line, "", ""
    return line[: m.start()], "loc", m[1]


def _loc_of(line: str, locs: LocTable) -> LocChain:
    _, _, expr = _cut_loc(line)
    return locs.resolve(expr) if expr else LocChain()


def _parse_args(text: str, locs: LocTable) -> list[FuncArg]:
    args: list[FuncArg] = []
    for part in _split_top(text, ","):
        m = _ARG_RE.match(part)
        if not m:
            continue
        div = _DIV_RE.search(m[3] or "")
        chain = locs.resolve(m[4]) if m[4] else LocChain()
        args.append(FuncArg(m[1], m[2].strip(), int(div[1]) if div else None, chain))
    return args


def source_line_of(chain: LocChain, is_user: UserFiles) -> int | None:
    frame = chain.user_frame(is_user)
    return frame.line if frame else None


def line_map(module: MlirModule, is_user: UserFiles) -> list[tuple[int, int]]:
    """(source line, ir line) pairs for every op whose location reaches the user's file."""
    out: list[tuple[int, int]] = []
    for op in module.ops:
        line = source_line_of(op.loc, is_user)
        if line is not None:
            out.append((line, op.ir_line))
    return out
