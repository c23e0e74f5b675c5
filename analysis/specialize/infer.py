"""Argument types a kernel's own body implies, for arguments no launch, pragma or default describes.

Only types come from here (never values): `x_ptr + offs` reaching `tl.load`/`tl.store` makes `x_ptr` a
pointer; a value stored through `out_ptr` after `.to(tl.float16)` makes it `*fp16`; an argument used in
`range(...)`, in a comparison (a mask) or in offset arithmetic is an integer (`i32`, as the JIT types any
int that fits). Each answer carries the reason, shown to the user as provenance.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..source.safe_eval import call_name

POINTER_CALLS = {
    "load": 0,
    "store": 0,
    "atomic_add": 0,
    "atomic_max": 0,
    "atomic_min": 0,
    "atomic_cas": 0,
    "atomic_xchg": 0,
    "atomic_and": 0,
    "atomic_or": 0,
    "atomic_xor": 0,
    "make_block_ptr": 0,
    "make_tensor_descriptor": 0,
}
POINTER_KEYWORDS = ("pointer", "base")
# Methods of a tensor descriptor argument (`desc.load([m, k])`): the host passed a TensorDescriptor.
DESCRIPTOR_METHODS = (
    "load",
    "store",
    "atomic_add",
    "atomic_min",
    "atomic_max",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
    "gather",
    "scatter",
)
DESCRIPTOR_BLOCK = 64
DESCRIPTOR_GUESS = "block of 64 per dimension and fp16 elements assumed (nothing shows the descriptor)"
PASS_THROUGH_CALLS = ("advance", "multiple_of", "max_contiguous", "max_constancy")
LOOP_CALLS = ("range", "static_range", "cdiv")

# tl dtype attribute -> Triton's type spelling
TL_DTYPES = {
    "float16": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float64": "fp64",
    "int1": "i1",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "float8e4nv": "fp8e4nv",
    "float8e5": "fp8e5",
}
ANNOTATION_TYPES = {"int": "i32", "float": "fp32", "bool": "i1", **{k: v for k, v in TL_DTYPES.items()}}
FLOAT_NAMES = {
    "eps",
    "epsilon",
    "scale",
    "sm_scale",
    "alpha",
    "beta",
    "temperature",
    "momentum",
    "dropout_p",
    "p",
}


@dataclass(frozen=True)
class Inferred:
    type: str  # Triton spelling: "*fp32", "i32", "fp32"
    reason: str  # "inferred from tl.load at line 20"


class _BodyFacts:
    def __init__(self, fn: ast.FunctionDef, params: list[str]) -> None:
        self.fn = fn
        self.params = set(params)
        self.nodes = list(ast.walk(fn))
        self.locals: dict[str, ast.expr] = {}
        self.assigned: dict[str, list[ast.expr]] = {}  # every assignment, in line order
        self._loaded: dict[str, list[str]] = {}
        for node in self.nodes:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
            ):
                self.locals.setdefault(node.targets[0].id, node.value)
                self.assigned.setdefault(node.targets[0].id, []).append(node.value)
            elif (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.value is not None
            ):
                self.locals.setdefault(node.target.id, node.value)
                self.assigned.setdefault(node.target.id, []).append(node.value)
        self.pointer: dict[str, str] = {}  # param -> reason
        self.element: dict[str, tuple[str, str]] = {}  # pointer param -> (element type, reason)
        self.integer: dict[str, str] = {}
        self.weak_integer: dict[str, str] = {}  # `a * b` alone: could be float math too

    def base_params(self, expr: ast.AST, seen: frozenset[str] = frozenset()) -> list[str]:
        """Params reached through the additive spine of a pointer expression, leftmost first."""
        if isinstance(expr, ast.Name):
            if expr.id in self.params:
                return [expr.id]
            if expr.id in self.locals and expr.id not in seen:
                return self.base_params(self.value_at(expr), seen | {expr.id})
            return []
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
            left = self.base_params(expr.left, seen)
            right = self.base_params(expr.right, seen) if isinstance(expr.op, ast.Add) else []
            return left + [r for r in right if r not in left]
        if isinstance(expr, ast.Subscript):
            return self.base_params(expr.value, seen)
        if isinstance(expr, ast.IfExp):
            return self.base_params(expr.body, seen)
        if isinstance(expr, ast.Call) and call_name(expr.func) in PASS_THROUGH_CALLS and expr.args:
            return self.base_params(expr.args[0], seen)
        if isinstance(expr, ast.Call) and call_name(expr.func) == "make_block_ptr":
            arg = _pointer_arg(expr, "make_block_ptr")
            return self.base_params(arg, seen) if arg is not None else []
        return []

    def value_at(self, use: ast.Name) -> ast.expr:
        """The assignment of a reused local (`ptr = a_ptrs + i` ... `ptr = b_ptrs + i`) that a use reads: the
        latest one above it (the first one for uses before any, such as loop-carried reads)."""
        values = sorted(self.assigned.get(use.id) or [self.locals[use.id]], key=lambda v: v.lineno)
        above = [v for v in values if v.lineno < getattr(use, "lineno", 0)]
        return above[-1] if above else values[0]

    def loaded_from(self, expr: ast.AST, seen: frozenset[str] = frozenset()) -> list[str]:
        """Pointer params whose loaded values flow into `expr` (e.g. gather indices)."""
        found: list[str] = []
        for node in ast.walk(expr):
            if isinstance(node, ast.Call) and call_name(node.func) == "load":
                arg = _pointer_arg(node, "load")
                if arg is not None:
                    found.extend(self.choose_pointer(self.base_params(arg)))
            elif isinstance(node, ast.Name) and node.id in self.locals and node.id not in seen:
                if node.id not in self._loaded:  # memoized: locals are re-read many times in big kernels
                    # every assignment: `row = row + tl.load(extra_ptr + e)` makes extra_ptr's values offsets too
                    values = self.assigned.get(node.id) or [self.locals[node.id]]
                    self._loaded[node.id] = [q for v in values for q in self.loaded_from(v, seen | {node.id})]
                found.extend(self._loaded[node.id])
        return found

    def choose_pointer(self, candidates: list[str]) -> list[str]:
        # pointer + pointer is not valid Triton, so one candidate is the base: prefer *_ptr names, else leftmost.
        if not candidates:
            return []
        named = [c for c in candidates if "ptr" in c.lower()]
        return [named[0] if named else candidates[0]]


# Operators Triton only accepts on integers: floor division (`unexpected type fp32` on floats) and bitwise ops.
_INT_OPS = (ast.FloorDiv, ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift)
_CASTS = ("to", "cast", "bitcast")


def _value_loads(facts: _BodyFacts, expr: ast.AST, seen: frozenset[str] = frozenset()) -> list[str]:
    """Pointer params whose loaded *values* (not booleans derived from them, not casts of them) make `expr`."""
    if isinstance(expr, ast.Call):
        name = call_name(expr.func)
        if name == "load":
            arg = _pointer_arg(expr, "load")
            return facts.choose_pointer(facts.base_params(arg)) if arg is not None else []
        if name in _CASTS and isinstance(expr.func, ast.Attribute):
            return []  # `.to(tl.int32)`: the loaded type is not what the operator sees
        parts = expr.args[1:] if name == "where" else expr.args  # tl.where's condition is a mask
        return [p for a in parts for p in _value_loads(facts, a, seen)]
    if isinstance(expr, (ast.Compare, ast.BoolOp, ast.Constant)):
        return []
    if isinstance(expr, ast.Name):
        if expr.id in facts.locals and expr.id not in seen:
            return _value_loads(facts, facts.locals[expr.id], seen | {expr.id})
        return []
    if isinstance(expr, ast.IfExp):
        return _value_loads(facts, expr.body, seen) + _value_loads(facts, expr.orelse, seen)
    if isinstance(expr, (ast.BinOp, ast.UnaryOp, ast.Subscript, ast.Attribute)):
        return [p for c in ast.iter_child_nodes(expr) for p in _value_loads(facts, c, seen)]
    return []


def integer_loads(facts: _BodyFacts, width: str = "i32") -> dict[str, tuple[str, str]]:
    """Pointer params whose loaded values meet an integer-only operator (`//`, `&`, `<<`, `~`) or bound a
    `range`: their elements are integers of `width` (int32, what lengths, counts and flags are stored as,
    unless the kernel's index loads are guessed int64), int64 where a constant needs more than 32 bits
    (`x >> 32`, `& 0xFFFFFFFF00`). Values summed in a loop into a variable that starts as an int literal
    (`total = 0` ... `total += tl.sum(counts)`) are int32 whatever `width` says: a loop-carried value keeps
    its type."""
    out: dict[str, tuple[str, str]] = {}
    for line, operand in _int_dot_operands(facts):  # first: a dot into an int32 accumulator needs int8 operands
        for p in _value_loads(facts, operand):
            why = f"inferred: values loaded from it are operands of a tl.dot into an int32 accumulator at line {line}"
            out.setdefault(p, ("i8", f"{why} (integers; element type assumed i8)"))
    for name, node in _int_accumulations(facts):
        for p in _value_loads(facts, node.value):
            why = f"inferred: values loaded from it are summed into `{name}`, an int at first, at line {node.lineno}"
            out.setdefault(p, ("i32", f"{why} (integers; element type assumed i32)"))
    for node in facts.nodes:
        operands: list[ast.expr] = []
        if isinstance(node, ast.BinOp) and isinstance(node.op, _INT_OPS):
            operands, what = [node.left, node.right], _OP_TEXT.get(type(node.op), "an integer operator")
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
            operands, what = [node.operand], "`~`"
        elif isinstance(node, ast.Call) and call_name(node.func) in ("range", "static_range"):
            operands, what = list(node.args), "a range() bound"
        elif isinstance(node, ast.While) and isinstance(node.test, ast.Compare):
            operands, what = [node.test.left, *node.test.comparators], "a while-loop bound"
        elif isinstance(node, ast.Compare) or (isinstance(node, ast.BinOp) and isinstance(node.op, _INDEX_OPS)):
            # compared with, added to or subtracted from an index (`offs < seq_len`, `start + tl.arange(...)`)
            sides = [node.left, *node.comparators] if isinstance(node, ast.Compare) else [node.left, node.right]
            if any(_is_index(facts, side) for side in sides):
                operands = [side for side in sides if not _is_index(facts, side)]
                what = "a comparison with an index" if isinstance(node, ast.Compare) else "index arithmetic"
        if not operands:
            continue
        constants = [c.value for c in operands if isinstance(c, ast.Constant) and isinstance(c.value, int)]
        wide = any(abs(c) >= 2**31 for c in constants) or (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, (ast.LShift, ast.RShift))
            and any(c >= 32 for c in constants)
        )
        for operand in operands:
            for p in _value_loads(facts, operand):
                element = "i64" if wide else width
                why = f"inferred: values loaded from it meet {what} at line {node.lineno}"
                out.setdefault(p, (element, f"{why} (integers; element type assumed {element})"))
    return out


_INDEX_OPS = (ast.Add, ast.Sub)
_INDEX_CALLS = ("arange", "program_id", "num_programs")
_LOOP_RANGES = ("range", "static_range")
_FLOAT_CASTS = frozenset({"float16", "bfloat16", "float32", "float64"})


def _loop_indices(facts: _BodyFacts) -> set[str]:
    """Names bound by `for i in range(...)` / `tl.range` / `tl.static_range`: integers by construction."""
    if not hasattr(facts, "_loop_index_names"):
        names = {
            node.target.id
            for node in facts.nodes
            if isinstance(node, ast.For)
            and isinstance(node.target, ast.Name)
            and isinstance(node.iter, ast.Call)
            and call_name(node.iter.func) in _LOOP_RANGES
        }
        facts._loop_index_names = names  # type: ignore[attr-defined]
    return facts._loop_index_names  # type: ignore[attr-defined]


def _is_index(facts: _BodyFacts, expr: ast.AST, seen: frozenset[str] = frozenset()) -> bool:
    """An integer index: `tl.arange`, `tl.program_id` or a range() loop variable, on the additive spine of
    `expr` (`start + tl.arange(0, B)`, `pid * B + offs[:, None]`). Off that spine (a product, a call) an index
    counts only where no loaded value takes part (`slope * offs` with a loaded slope is float math); a load's
    result is never one by itself, nor a cast to a float."""
    if isinstance(expr, ast.Call):
        name = call_name(expr.func)
        if name in _INDEX_CALLS:
            return True
        if name == "load":
            return False
        if name in _CASTS and isinstance(expr.func, ast.Attribute):
            if expr.args and getattr(expr.args[0], "attr", None) in _FLOAT_CASTS:
                return False
            return _is_index(facts, expr.func.value, seen)
        return not _value_loads(facts, expr) and any(_is_index(facts, a, seen) for a in expr.args)
    if isinstance(expr, ast.Name):
        if expr.id in _loop_indices(facts):
            return True
        if expr.id in facts.locals and expr.id not in seen:
            return _is_index(facts, facts.value_at(expr), seen | {expr.id})
        return False
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, _INDEX_OPS):
        return _is_index(facts, expr.left, seen) or _is_index(facts, expr.right, seen)
    if isinstance(expr, ast.Subscript):
        return _is_index(facts, expr.value, seen)
    if isinstance(expr, ast.UnaryOp):
        return _is_index(facts, expr.operand, seen)
    if isinstance(expr, ast.BinOp):
        return not _value_loads(facts, expr) and any(_is_index(facts, c, seen) for c in (expr.left, expr.right))
    return False


def _int_dot_operands(facts: _BodyFacts) -> list[tuple[int, ast.expr]]:
    """(line, operand) of each `tl.dot(a, b, acc)` / `acc += tl.dot(a, b)` / `tl.dot(..., out_dtype=tl.int32)`
    whose accumulator is an int32 one (`acc = tl.zeros(..., dtype=tl.int32)`): Triton's integer dot takes
    int8 operands only."""
    int_accs = {
        n for n, values in facts.assigned.items() if any(_dtype_of_cast(v) in ("i32", "u32") for v in values)
    }

    def int_acc(expr: ast.AST | None) -> bool:
        return isinstance(expr, ast.Name) and expr.id in int_accs

    dots: list[ast.Call] = []
    for node in facts.nodes:
        if isinstance(node, ast.Call) and call_name(node.func) == "dot" and len(node.args) >= 2:
            acc = node.args[2] if len(node.args) > 2 else next((k.value for k in node.keywords if k.arg == "acc"), None)
            out_dtype = next((k.value for k in node.keywords if k.arg == "out_dtype"), None)
            if int_acc(acc) or getattr(out_dtype, "attr", None) in ("int32", "uint32"):
                dots.append(node)
        elif isinstance(node, (ast.AugAssign, ast.Assign)):
            targets = [node.target] if isinstance(node, ast.AugAssign) else node.targets
            if any(int_acc(t) for t in targets):
                dots += [c for c in ast.walk(node.value) if isinstance(c, ast.Call) and call_name(c.func) == "dot"]
    return [(d.lineno, a) for d in dict.fromkeys(dots) if len(d.args) >= 2 for a in d.args[:2]]


def _int_accumulations(facts: _BodyFacts) -> list[tuple[str, ast.AugAssign]]:
    """`x += v` inside a loop where `x` starts as an int literal (`x = 0`)."""
    starts = {
        n
        for n, v in facts.locals.items()
        if isinstance(v, ast.Constant) and isinstance(v.value, int) and not isinstance(v.value, bool)
    }
    found: list[tuple[str, ast.AugAssign]] = []
    for loop in facts.nodes:
        if isinstance(loop, (ast.For, ast.While)):
            for sub in ast.walk(loop):
                if isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name) and sub.target.id in starts:
                    found.append((sub.target.id, sub))
    return found


_OP_TEXT = {
    ast.FloorDiv: "`//`",
    ast.BitAnd: "`&`",
    ast.BitOr: "`|`",
    ast.BitXor: "`^`",
    ast.LShift: "`<<`",
    ast.RShift: "`>>`",
}


def pointer_arg(call: ast.Call, name: str) -> ast.expr | None:
    """The address argument of a tl.load/tl.store/atomic/make_block_ptr call."""
    return _pointer_arg(call, name)


BodyFacts = _BodyFacts  # how other specialization modules read a body (specialization_callees)


def _pointer_arg(call: ast.Call, name: str) -> ast.expr | None:
    index = POINTER_CALLS.get(name, 0)
    if len(call.args) > index:
        return call.args[index]
    for kw in call.keywords:
        if kw.arg in POINTER_KEYWORDS:
            return kw.value
    return None


def _dtype_of_cast(expr: ast.AST) -> str | None:
    """`v.to(tl.float16)` or `tl.zeros(..., dtype=tl.float16)` -> "fp16"."""
    if isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Attribute) and expr.func.attr == "to" and expr.args:
            target = expr.args[0]
            if isinstance(target, ast.Attribute) and target.attr in TL_DTYPES:
                return TL_DTYPES[target.attr]
        for kw in expr.keywords:
            if kw.arg == "dtype" and isinstance(kw.value, ast.Attribute) and kw.value.attr in TL_DTYPES:
                return TL_DTYPES[kw.value.attr]
    return None


def annotation_type(annotation: ast.expr | None) -> str | None:
    """`n: int` -> i32, `x: tl.float32` -> fp32 (Triton honours such annotations)."""
    if annotation is None:
        return None
    name = annotation.id if isinstance(annotation, ast.Name) else getattr(annotation, "attr", None)
    return ANNOTATION_TYPES.get(name) if isinstance(name, str) else None


def infer_types(fn: ast.FunctionDef, params: list[str]) -> dict[str, Inferred]:
    """Types implied by the body for the params it gives evidence about."""
    facts = _BodyFacts(fn, params)
    descriptors: dict[str, tuple[int, str]] = {}
    for node in facts.nodes:
        if not isinstance(node, ast.Call):
            continue
        name = call_name(node.func)
        line = node.lineno
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in DESCRIPTOR_METHODS
            and isinstance(func.value, ast.Name)
            and func.value.id in facts.params
        ):
            offsets = node.args[0] if node.args else None
            rank = len(offsets.elts) if isinstance(offsets, (ast.List, ast.Tuple)) else 2
            descriptors.setdefault(
                func.value.id, (rank, f"inferred: a TensorDescriptor (.{func.attr} at line {line})")
            )
            continue
        if name in POINTER_CALLS:
            arg = _pointer_arg(node, name)
            if arg is None:
                continue
            bases = facts.choose_pointer(facts.base_params(arg))
            for p in bases:
                facts.pointer.setdefault(p, f"inferred from tl.{name} at line {line}")
            for other in facts.base_params(arg):
                if other not in bases:
                    facts.integer.setdefault(other, f"inferred from the offset of tl.{name} at line {line}")
            for q in facts.loaded_from(arg):
                if q not in bases:
                    facts.element.setdefault(
                        q, ("i64", f"inferred: values loaded at line {line} are used as offsets")
                    )
            for sub in ast.walk(arg):
                if isinstance(sub, ast.Name) and sub.id in facts.params and sub.id not in bases:
                    facts.integer.setdefault(sub.id, f"inferred from the offset of tl.{name} at line {line}")
            if name == "store" and bases:
                value = (
                    node.args[1]
                    if len(node.args) > 1
                    else next((k.value for k in node.keywords if k.arg == "value"), None)
                )
                if isinstance(value, ast.Name) and value.id in facts.locals:
                    value = facts.locals[value.id]
                dtype = _dtype_of_cast(value) if value is not None else None
                if dtype:
                    facts.element.setdefault(
                        bases[0], (dtype, f"inferred from the value stored at line {line}")
                    )
        elif name in LOOP_CALLS:
            for sub in node.args:
                for leaf in ast.walk(sub):
                    if isinstance(leaf, ast.Name) and leaf.id in facts.params:
                        facts.integer.setdefault(leaf.id, f"inferred from {name}() at line {line}")
    # One width for every guessed integer load: a kernel mixing them makes loop-carried values change type.
    offsets_width = "i64" if any(e == "i64" for e, _ in facts.element.values()) else "i32"
    for param, (element, why) in integer_loads(facts, offsets_width).items():
        facts.element.setdefault(param, (element, why))
    for node in facts.nodes:
        if isinstance(node, ast.Compare):
            for leaf in [node.left, *node.comparators]:
                if isinstance(leaf, ast.Name) and leaf.id in facts.params:
                    facts.integer.setdefault(leaf.id, f"inferred from the comparison at line {node.lineno}")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.FloorDiv, ast.Mod)):
            for leaf in (node.left, node.right):
                if isinstance(leaf, ast.Name) and leaf.id in facts.params:
                    facts.weak_integer.setdefault(
                        leaf.id, f"inferred from index arithmetic at line {node.lineno}"
                    )

    out: dict[str, Inferred] = {}
    for arg in fn.args.args:
        p = arg.arg
        annotated = annotation_type(arg.annotation)
        if annotated:
            out[p] = Inferred(annotated, f"annotation at line {arg.lineno}")
        elif p in descriptors:
            rank, why = descriptors[p]
            block = ", ".join([str(DESCRIPTOR_BLOCK)] * rank)
            out[p] = Inferred(f"tensordesc<fp16[{block}]>", f"{why}; {DESCRIPTOR_GUESS}")
        elif p in facts.pointer or (p.endswith("_ptr") and p not in facts.integer):
            element, why = facts.element.get(
                p, ("fp32", "element type assumed fp32 (no launch shows the dtype)")
            )
            reason = facts.pointer.get(p, "name ends in _ptr")
            out[p] = Inferred(f"*{element}", f"{reason}; {why}")
        elif p in facts.integer:
            out[p] = Inferred("i32", facts.integer[p])
        elif p.lower() in FLOAT_NAMES:
            out[p] = Inferred("fp32", "assumed fp32 from the name")
        elif p in facts.weak_integer:
            out[p] = Inferred("i32", facts.weak_integer[p])
    return out
