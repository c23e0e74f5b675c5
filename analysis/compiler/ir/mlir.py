"""MLIR text (TTIR, TTGIR, linalg) parsed into ops with results, operands, types, enclosing func and loops,
and each op's location chain (`parse_mlir` -> `MlirModule`); `line_map` pairs IR lines with source lines."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .mlir_loc import LocChain, LocTable, UserFiles, source_line_of, split_top


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
    for part in split_top(text, ","):
        m = _ARG_RE.match(part)
        if not m:
            continue
        div = _DIV_RE.search(m[3] or "")
        chain = locs.resolve(m[4]) if m[4] else LocChain()
        args.append(FuncArg(m[1], m[2].strip(), int(div[1]) if div else None, chain))
    return args


def line_map(module: MlirModule, is_user: UserFiles) -> list[tuple[int, int]]:
    """(source line, ir line) pairs for every op whose location reaches the user's file."""
    out: list[tuple[int, int]] = []
    for op in module.ops:
        line = source_line_of(op.loc, is_user)
        if line is not None:
            out.append((line, op.ir_line))
    return out
