"""Def-use walks over TTIR that explain *why* AxisInfo could not prove an address contiguous or aligned.

Triton's AxisInfo analysis tracks contiguity, divisibility and constancy of every integer tensor; the coalesce
pass and the load/store lowering pick vector widths from it. AxisInfo itself is not printed, so when the
compiled code shows narrow accesses these walks name the source operand that broke the proof: a loaded value
used as an offset (gather), a runtime multiplier on the contiguous dimension (stride), or a kernel argument
without `tt.divisibility` (alignment unknown).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..ir.mlir import FuncArg, MlirModule, MlirOp

_TENSOR_RE = re.compile(r"tensor<((?:\d+x)*)([^,>]+)")
_PASS_THROUGH = {
    "tt.splat",
    "tt.broadcast",
    "tt.expand_dims",
    "tt.reshape",
    "arith.extsi",
    "arith.extui",
    "arith.trunci",
    "arith.addi",
    "arith.subi",
    "arith.remsi",
    "arith.remui",
    "arith.divsi",
    "arith.divui",
    "arith.select",
    "ttg.convert_layout",
    "tt.addptr",
    "tt.advance",
}
# Ops whose results are produced by the regions they own (scf.yield inside), not by their operands.
_REGION_OPS = {"scf.if", "scf.for", "scf.while", "scf.execute_region", "scf.index_switch"}
_UNARY_WRAPPERS = {"tt.splat", "tt.broadcast", "tt.expand_dims", "arith.extsi", "arith.extui", "arith.trunci"}


def value_type(op: MlirOp) -> tuple[tuple[int, ...], str]:
    """(shape, element type) of the op's result; () for scalars."""
    text = op.text
    tail = text.rsplit(" -> ", 1)[-1] if " -> " in text else text.rsplit(" : ", 1)[-1]
    if " to " in tail:  # casts print `: tensor<32xi32> to tensor<32xi64>`: the result type comes last
        tail = tail.rsplit(" to ", 1)[-1]
    m = _TENSOR_RE.search(tail)
    if not m:
        return (), tail.strip().split(" ")[0]
    dims = tuple(int(d) for d in m[1].split("x") if d)
    return dims, m[2].strip()


def fast_dim_varies(shape: tuple[int, ...]) -> bool:
    """True when the innermost (contiguous, order[0] for row-major tiles) dimension has more than one element."""
    return bool(shape) and shape[-1] > 1


@dataclass
class AddressFacts:
    base: str | None = None
    gathered: list[str] = field(default_factory=list)  # loaded values used as offsets on the contiguous dim
    strided: list[str] = field(default_factory=list)  # runtime multipliers of the contiguous index
    unaligned: list[str] = field(default_factory=list)  # arguments without tt.divisibility in the address
    int64: list[str] = field(default_factory=list)  # i64 tensor values in the offset
    int64_ops: list[MlirOp] = field(default_factory=list)  # the ops that compute them
    multipliers: list[str] = field(default_factory=list)  # every runtime argument scaling an index, any dim


class Dataflow:
    def __init__(self, module: MlirModule, func: str | None = None) -> None:
        self.module = module
        self.defs: dict[str, MlirOp] = {}
        self.alias: dict[str, str] = {}
        self.loop_vars: set[str] = set()
        self._ops_by_line: dict[int, MlirOp] = {op.ir_line: op for op in module.ops}
        for op in module.ops:
            if func is not None and op.func != func:
                continue
            for r in op.results:
                self.defs[r] = op
            if op.name == "scf.for" and op.region_args:
                self.loop_vars.add(op.region_args[0])  # the induction variable
            for arg, init in op.iter_args:
                self.alias[arg] = init
        args = module.funcs.get(func) if func else None
        if args is None:
            args = [a for lst in module.funcs.values() for a in lst]
        self.args: dict[str, FuncArg] = {a.name: a for a in args}
        self._range: dict[str, bool] = {}
        self._canon: dict[str, str] = {}

    def resolve(self, value: str) -> str:
        seen = 0
        while value in self.alias and seen < 16:
            value = self.alias[value]
            seen += 1
        return value

    def display(self, value: str) -> str:
        """The source-level name of a value: the argument name or the variable named in its loc."""
        value = self.resolve(value)
        if value in self.args:
            return value
        op = self.defs.get(value)
        if op is not None and op.loc.name:
            return op.loc.name
        return re.sub(r"_\d+$", "", re.sub(r"\$\d+$", "", value))

    def depends_on_range(self, value: str, depth: int = 0) -> bool:
        value = self.resolve(value)
        cached = self._range.get(value)
        if cached is not None:
            return cached
        op = self.defs.get(value)
        result = False
        if op is not None and depth < 200:
            if op.name == "tt.make_range":
                result = True
            elif op.name != "tt.load":
                result = any(self.depends_on_range(o, depth + 1) for o in op.operands)
        self._range[value] = result
        return result

    def address(self, ptr: str, rank: int | None = None) -> AddressFacts:
        """What the address `ptr` is made of; `rank`: the access's tile rank, so that only a multiplier of the
        tile's own fastest axis counts as strided (in `x_row[:, None] + cs[None, :] * sxc`, `sxc`, not the
        `nb * sxn` of the 1-D rows before they were expanded)."""
        facts = AddressFacts()
        self._walk(ptr, facts, set(), 0, rank)
        return facts

    def _walk(self, value: str, facts: AddressFacts, seen: set[str], depth: int, rank: int | None = None) -> None:
        value = self.resolve(value)
        if value in seen or depth > 200:
            return
        seen.add(value)
        arg = self.args.get(value)
        if arg is not None:
            if arg.type.startswith("!tt.ptr") or arg.type.startswith("ptr"):
                facts.base = arg.name
                if arg.divisibility is None:
                    facts.unaligned.append(arg.name)
            elif arg.divisibility is None and arg.type.startswith("i"):
                facts.unaligned.append(arg.name)
            return
        op = self.defs.get(value)
        if op is None:
            return
        shape, elem = value_type(op)
        if op.name == "tt.load":
            if fast_dim_varies(shape):
                facts.gathered.append(self.display(value))
            return
        if elem == "i64" and shape and op.name.startswith("arith."):
            facts.int64_ops.append(op)
            name = self.display(value)
            if name not in facts.int64:
                facts.int64.append(name)
        if op.name == "arith.muli" and shape:
            for other in op.operands:
                peeled = self.peel(other)
                if peeled in self.args and not self.depends_on_range(other):
                    if peeled not in facts.multipliers:
                        facts.multipliers.append(peeled)
        if op.name == "arith.muli" and fast_dim_varies(shape) and (rank is None or len(shape) == rank):
            ranged = [o for o in op.operands if self.depends_on_range(o)]
            for other in op.operands:
                if other in ranged and len(ranged) == len(op.operands):
                    continue
                if other not in ranged and ranged and not self._is_constant(other):
                    name = self.expression(other) or self.display(self.peel(other))
                    if name not in facts.strided:
                        facts.strided.append(name)
        if op.name in _PASS_THROUGH or op.name == "arith.muli":
            for o in op.operands:
                self._walk(o, facts, seen, depth + 1, rank)

    def expression(self, value: str, depth: int = 0) -> str | None:
        """`H * W` for a scalar the kernel computes from its arguments and integer literals (through arith.muli and
        addi), read from the IR: the name in a computed value's loc is whatever statement CSE kept it for (a mask,
        a loaded tile), not the stride. None for anything else."""
        value = self.peel(value)
        if value in self.args:
            return value
        op = self.defs.get(value)
        if op is None or depth > 4:
            return None
        literal = re.fullmatch(r"%?c(\d+)_i(?:32|64)", value)
        if op.name == "arith.constant" and literal:
            return literal.group(1)
        symbol = {"arith.muli": " * ", "arith.addi": " + "}.get(op.name)
        if symbol is None or len(op.operands) != 2:
            return None
        parts = [self.expression(o, depth + 1) for o in op.operands]
        if None in parts:
            return None
        return symbol.join(f"({p})" if symbol == " * " and " + " in p else p for p in parts)

    def peel(self, value: str) -> str:
        """Strip splat/broadcast/expand_dims/extension wrappers to reach the value the source wrote."""
        value = self.resolve(value)
        for _ in range(16):
            op = self.defs.get(value)
            if op is None or op.name not in _UNARY_WRAPPERS or not op.operands:
                break
            value = self.resolve(op.operands[0])
        return value

    def _is_constant(self, value: str) -> bool:
        value = self.resolve(value)
        op = self.defs.get(value)
        if op is None:
            return False
        if op.name == "arith.constant":
            return True
        if op.name in ("tt.splat", "tt.broadcast", "tt.expand_dims") and op.operands:
            return self._is_constant(op.operands[0])
        return False

    def unaligned_args(self, value: str) -> list[str]:
        """Integer arguments without tt.divisibility anywhere in the expression (used for masks)."""
        out: list[str] = []
        stack, seen = [self.resolve(value)], set()
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            arg = self.args.get(v)
            if arg is not None:
                if arg.divisibility is None and arg.type.startswith("i") and arg.name not in out:
                    out.append(arg.name)
                continue
            op = self.defs.get(v)
            if op is not None and op.name != "tt.load":
                stack.extend(self.resolve(o) for o in op.operands)
        return out

    def canonical(self, value: str, depth: int = 0) -> str:
        """A structural key of an expression: equal keys compute the same value (used for redundant loads).

        Splats and broadcasts are dropped and chains of additions (addi/addptr) become a sorted sum, so
        `p + row * s + cols` and `p + cols + row * s` compare equal, as AxisInfo would treat them.
        """
        value = self.resolve(value)
        cached = self._canon.get(value)
        if cached is not None:
            return cached
        if value in self.args or depth > 100:
            key = f"arg:{value}"
        elif value in self.loop_vars:
            key = f"iv:{value}"
        else:
            op = self.defs.get(value)
            if op is None:
                key = f"?{value}"
            elif op.name == "arith.constant":
                key = "const:" + op.text.split("arith.constant", 1)[-1].split(":")[0].strip()
            elif op.name in ("tt.splat", "tt.broadcast") and op.operands:
                key = self.canonical(op.operands[0], depth + 1)
            elif op.name in ("arith.addi", "tt.addptr"):
                terms = sorted(self._terms(value, depth))
                key = "sum(" + ",".join(terms) + ")"
            else:
                attrs = re.sub(r"%[\w.$#-]+", "", op.text.split(" = ", 1)[-1]).split(" : ")[0]
                parts = ",".join(self.canonical(o, depth + 1) for o in op.operands)
                key = f"{attrs}({parts})"
        self._canon[value] = key
        return key

    def _terms(self, value: str, depth: int) -> list[str]:
        value = self.resolve(value)
        op = self.defs.get(value)
        while op is not None and op.name in ("tt.splat", "tt.broadcast") and op.operands and depth < 100:
            value = self.resolve(op.operands[0])
            op = self.defs.get(value)
            depth += 1
        if op is not None and op.name in ("arith.addi", "tt.addptr") and depth < 100:
            return [t for o in op.operands for t in self._terms(o, depth + 1)]
        return [self.canonical(value, depth + 1)]

    def varies_in_loop(self, value: str, loop: MlirOp, depth: int = 0) -> bool:
        """Does the value change between iterations of `loop`? True when it depends on the induction
        variable, a loop-carried value, a block argument of a region inside the loop, a load or a region
        op inside the loop, and whenever the def-use chain cannot be followed (never call a value
        invariant without proof)."""
        if depth > 200:
            return True
        if value in loop.region_args:
            return True
        owner = self.module.block_args.get(value)
        if owner is not None:
            if owner == loop.ir_line:
                return True
            owner_op = self._ops_by_line.get(owner)
            return owner_op is None or loop.ir_line in owner_op.loops
        op = self.defs.get(value)
        if op is None:
            return value not in self.args
        if loop.ir_line not in op.loops:
            return False  # defined before the loop
        if op.name == "tt.load" or op.name in _REGION_OPS:
            return True  # a region op's results come from its yields, which its operands do not show
        return any(self.varies_in_loop(o, loop, depth + 1) for o in op.operands)
