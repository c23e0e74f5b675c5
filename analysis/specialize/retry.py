"""The next most likely guess when the compile of a guessed specialization fails because of the guess.

Nothing showed some argument types or constexpr values, so the pipeline compiled labeled guesses
(`specialization_guess`, `specialization_infer`). When the front end rejects a guess (an fp32 pointer dotted
with an fp16 operand, an integer used as a pointer, a tile over Triton's element limit), the error says which
guess to change; `retry_guess` returns the specialization with only the guessed arguments implicated by the
error changed, or None when the error names no guess. The caller bounds the attempts and says which guess
compiled (the changed arguments stay labeled as guesses, never presented as facts).
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from .dtype_ties import tied_pointers
from .guess import ASSUMED_TYPICAL
from .infer import DESCRIPTOR_GUESS
from .variant import Specialization

MAX_RETRIES = 3
RETRIED = "retried"  # provenance marker of an argument a retry changed

_DTYPES = {
    "fp16": "fp16",
    "bf16": "bf16",
    "fp32": "fp32",
    "fp8e4nv": "fp8e4nv",
    "fp8e5": "fp8e5",
    "int8": "i8",
}
_SAME_DTYPE = re.compile(r"[Bb]oth operands must be (?:the )?same dtype\. Got (\w+) and (\w+)")
_POINTER_INT = re.compile(
    r"pointer<(\w+)>.*\b(?:triton\.language\.)?int(?:32|64)\b|\bint(?:32|64)\b.*pointer<(\w+)>"
)
_POINTER_FLOAT = re.compile(r"pointer<(\w+)>.*\bfloat\d+\b")
_FLOAT_BITWISE = re.compile(
    r"invalid operands of type (?:triton\.language\.)?float\d+ and (?:triton\.language\.)?float\d+"
    r"|unexpected type fp\d+"  # a bitwise operator on floats (triton-ascend's wording)
)
_INT_WIDTH = re.compile(r"is of type int32, but .* (?:redefines|as) .*int64|int32.*int64")
_LOOP_CARRIED = re.compile(
    r"Loop-carried variable (\w+) has initial type (int\d+) but is re-assigned to fp\d+"
)
_TO_POINTER = re.compile(r"cannot cast \w+\[\] to pointer<")
_ADDRESS_LOAD = re.compile(
    r"\bload\(\s*([A-Za-z_]\w*)[^()]*(?:\([^()]*\)[^()]*)*\)\s*\.to\(\s*(?:tl\.)?pointer_type"
)
_BITCAST = re.compile(r"Cannot bitcast data-type of size (\d+) to data-type of size (\d+)")
_OF_SIZE = {8: "i8", 16: "fp16", 32: "fp32", 64: "i64"}
_NUMEL = re.compile(r"numel \((\d+)\) exceeds triton maximum tensor numel \((\d+)\)")
_QUOTED = re.compile(r"[`'\"]?\b([A-Za-z_]\w*)\b[`'\"]?")


def _guessed_pointer(spec: Specialization, arg: str) -> bool:
    why = spec.provenance.get(arg, "")
    return spec.signature.get(arg, "").startswith("*") and "element type assumed" in why


def _guessed_int(spec: Specialization, arg: str) -> bool:
    why = spec.provenance.get(arg, "")
    return spec.signature.get(arg) in ("i32", "i64") and why.startswith("assumed i32")


def _flow(tree: ast.Module) -> dict[str, set[str]]:
    """name -> the names its assignments read (any function of the module: kernel and helpers alike); a
    helper's parameter reads what its call sites pass."""
    out: dict[str, set[str]] = {}
    functions = {f.name: f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions:
            params = [a.arg for a in functions[node.func.id].args.args]
            passed = list(zip(params, node.args, strict=False)) + [
                (k.arg, k.value) for k in node.keywords if k.arg
            ]
            for param, value in passed:
                out.setdefault(param, set()).update(n.id for n in ast.walk(value) if isinstance(n, ast.Name))
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            reads = {n.id for n in ast.walk(node.value) if isinstance(n, ast.Name)} if node.value else set()
            for target in targets:
                for n in ast.walk(target):
                    if isinstance(n, ast.Name):
                        out.setdefault(n.id, set()).update(reads)
    return out


def implicated(
    source: str, line: int | None, message: str, args: Sequence[str], through_args: bool = True
) -> list[str]:
    """Kernel arguments the failing line (or a variable the message names) reads, following assignments
    (`through_args=False`: not through what an argument is reassigned from, `X = X + offsets`)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    lines = source.splitlines()
    seeds: set[str] = set()
    if line and 0 < line <= len(lines):
        seeds |= set(re.findall(r"[A-Za-z_]\w*", lines[line - 1]))
    flow = _flow(tree)
    seeds |= {m for m in _QUOTED.findall(message) if m in args or m in flow}  # variables the message names
    seen: set[str] = set()
    todo = list(seeds)
    while todo and len(seen) < 500:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if through_args or name not in args:
            todo.extend(flow.get(name, ()))
        stripped = re.sub(r"_\d+$", "", name)  # the front end renames loop-carried values (`x_1`)
        if stripped != name:
            todo.append(stripped)
    return [a for a in args if a in seen]


def _changed(
    spec: Specialization, signature: Mapping[str, str], constants: Mapping[str, Any], what: str
) -> Specialization:
    provenance = dict(spec.provenance)
    for arg in signature:
        if signature[arg] != spec.signature.get(arg):
            provenance[arg] = f"{provenance.get(arg, '')}; {RETRIED} as {signature[arg]} after {what}"
    divisibility = tuple(d for d in spec.divisibility if not signature.get(d, "").startswith("tensordesc"))
    return replace(
        spec,
        signature=dict(signature),
        constants=dict(constants),
        divisibility=divisibility,
        provenance=provenance,
        label=f"{spec.label}, {RETRIED}: {what}",
    )


def retry_guess(spec: Specialization, source: str, message: str, line: int | None) -> Specialization | None:
    """`spec` with the guesses the front-end error implicates changed to the next most likely ones."""
    args = list(spec.signature)
    near = implicated(source, line, message, args)
    lines = source.splitlines()
    direct = set(re.findall(r"[A-Za-z_]\w*", lines[line - 1])) if line and 0 < line <= len(lines) else set()
    sig = dict(spec.signature)
    consts = dict(spec.constants)
    same = _SAME_DTYPE.search(message)
    if same:
        other = next((d for d in same.groups() if d != "fp32" and d in _DTYPES), None)
        pointers = [a for a in args if _guessed_pointer(spec, a)]
        chosen = [a for a in pointers if a in near] or pointers
        chosen += tied_pointers(spec.provenance, chosen)  # `o = empty_like(q)`: O's dtype is Q's
        if other and chosen:
            sig.update({a: f"*{_DTYPES[other]}" for a in chosen})
            return _changed(spec, sig, consts, f"the {other} operand met a guessed fp32 one")
    if "pointer<" in message and _POINTER_FLOAT.search(message) and not _POINTER_INT.search(message):
        # a value loaded through a guessed fp32 pointer is added to a pointer: that pointer holds indices
        indices = [a for a in _index_pointers(source, spec) if a in near or not line]
        if indices:
            sig.update({a: "*i64" for a in indices})
            return _changed(
                spec, sig, consts, "values loaded through a guessed fp32 pointer are used as offsets"
            )
    if "pointer<" in message and (_POINTER_INT.search(message) or "Mismatched type" in message):
        ints = [a for a in near if _guessed_int(spec, a)]
        element = _POINTER_INT.search(message) or _POINTER_FLOAT.search(message)
        dtype = next((g for g in (element.groups() if element else ()) if g), "fp32")
        if ints:
            sig.update({a: f"*{dtype}" for a in ints})
            return _changed(spec, sig, consts, "a guessed integer was used as a pointer")
        # the pointer the line reads through another variable, not the one it names (`COS + offsets`)
        via = implicated(source, line, message, args, through_args=False)
        pointers = [a for a in via if _guessed_pointer(spec, a) and a not in direct]
        if pointers:
            sig.update({a: "i32" for a in pointers})
            return _changed(spec, sig, consts, "a guessed pointer was used as an integer")
    if "Unsupported ptr type" in message or (not line and not near and "def " in message):
        # an integer guess reached a load/store address (in a helper whose error the front end nests)
        ints = [a for a in _address_args(source) if _guessed_int(spec, a) and (a in near or not near)]
        if not ints and "called here" in message:  # the helper is in another file: what the call passes
            ints = [a for a in _call_args(lines[line - 1] if line else "") if a in args and _guessed_int(spec, a)]
        if ints:
            sig.update({a: "*fp32" for a in ints})
            return _changed(spec, sig, consts, "a guessed integer is a load/store address")
    if _FLOAT_BITWISE.search(message):
        pointers = [a for a in near if _guessed_pointer(spec, a)] or [
            a for a in args if _guessed_pointer(spec, a)
        ]
        if pointers:
            sig.update({a: "*i8" for a in pointers})
            return _changed(
                spec, sig, consts, "integer operations on values loaded through guessed fp32 pointers"
            )
    bitcast = _BITCAST.search(message)
    if bitcast and int(bitcast.group(2)) in _OF_SIZE:  # a bitcast needs loaded values of the target's width
        pointers = [a for a in near if _guessed_pointer(spec, a)]
        if pointers:
            sig.update({a: f"*{_OF_SIZE[int(bitcast.group(2))]}" for a in pointers})
            return _changed(
                spec, sig, consts, f"values loaded through them are bitcast to {bitcast.group(2)} bits"
            )
    carried = _LOOP_CARRIED.search(message)
    if carried:  # an integer accumulator sums values loaded through guessed float pointers: they hold ints
        reach = implicated(source, None, f"`{carried.group(1)}`", args)
        pointers = [a for a in reach if _guessed_pointer(spec, a)]
        if pointers:
            width = "i64" if carried.group(2) == "int64" else "i32"
            sig.update({a: f"*{width}" for a in pointers})
            return _changed(
                spec, sig, consts, f"an {carried.group(2)} accumulator sums values loaded through them"
            )
    if _TO_POINTER.search(message):  # values loaded and cast to pointers: the argument holds addresses
        holders = [
            a for a in dict.fromkeys(_ADDRESS_LOAD.findall(source)) if a in args and _guessed_pointer(spec, a)
        ]
        if holders:
            sig.update({a: "*i64" for a in holders})
            return _changed(spec, sig, consts, "values loaded through them are cast to pointers")
    if _INT_WIDTH.search(message):
        indices = [a for a in near if sig[a] == "*i64" and "used as offsets" in spec.provenance.get(a, "")]
        if indices:  # index tensors were taken as int64; the kernel's own values are int32
            sig.update({a: "*i32" for a in indices})
            return _changed(spec, sig, consts, "int32 values met indices guessed as int64")
        ints = [a for a in args if _guessed_int(spec, a) and sig[a] == "i32"]
        if ints:
            sig.update({a: "i64" for a in ints})
            return _changed(spec, sig, consts, "an int32 guess met an int64 value")
    numel = _NUMEL.search(message)
    if numel:
        # a tile well under the limit (a tile at the limit compiles for minutes): TILE_BUDGET elements
        budget = max(int(numel.group(2)) // 32, 16)
        typical = [
            a for a in args if spec.provenance.get(a) == ASSUMED_TYPICAL and isinstance(consts.get(a), int)
        ]
        big = [a for a in typical if not isinstance(consts[a], bool) and consts[a] > 8]
        if big:
            largest = max(consts[a] for a in big)
            rank = max(1, round(math.log(int(numel.group(1))) / math.log(largest)))  # guessed dims multiplied
            side = max(2 ** int(math.log2(budget) // rank), 8)
            consts.update({a: min(consts[a], side) for a in big})
        for a in args:  # guessed descriptor blocks: the same per-dimension bound
            m = _DESCRIPTOR.match(sig[a])
            if m and DESCRIPTOR_GUESS in spec.provenance.get(a, ""):
                dims = [int(d) for d in m.group(2).split(",")]
                side = max(2 ** int(math.log2(budget) // len(dims)), 8)
                if side < max(dims):
                    sig[a] = f"tensordesc<{m.group(1)}[{', '.join([str(side)] * len(dims))}]>"
        if consts != spec.constants or sig != spec.signature:
            return _changed(
                spec, sig, consts, "the guessed block sizes made a tile over Triton's element limit"
            )
    ints = [a for a in near if _guessed_int(spec, a)]
    known = [sig[a] for a in near if not _guessed_int(spec, a) and not _guessed_pointer(spec, a)]
    like = next((t for t in known if t.startswith("tensordesc<")), None) or next(
        (t for t in known if t.startswith("*")), None
    )
    if ints and like:  # passed where another argument of a known non-integer type goes (a helper parameter)
        sig.update({a: like for a in ints})
        return _changed(spec, sig, consts, f"guessed integers go where a {like} argument goes")
    return None


_DESCRIPTOR = re.compile(r"tensordesc<(\w+)\[([\d, ]+)\]>")


def _address_args(source: str) -> set[str]:
    """Names whose values reach the address of a tl.load / tl.store (through assignments and helper calls)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    flow = _flow(tree)
    todo: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            if node.func.attr in ("load", "store", "atomic_add", "atomic_max", "atomic_min", "atomic_cas"):
                todo += [n.id for n in ast.walk(node.args[0]) if isinstance(n, ast.Name)]
    seen: set[str] = set()
    while todo and len(seen) < 2000:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(flow.get(name, ()))
    return seen


def _index_pointers(source: str, spec: Specialization) -> list[str]:
    """Guessed fp32 pointers whose loaded values flow into another pointer argument's address."""
    try:
        flow = _flow(ast.parse(source))
    except SyntaxError:
        return []
    out: list[str] = []
    for q in spec.signature:
        if not spec.signature[q].startswith("*"):
            continue
        seen: set[str] = set()
        todo = [n for n in flow.get(q, ()) if n != q]
        while todo and len(seen) < 500:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo.extend(flow.get(name, ()))
        out += [
            p for p in spec.signature if p != q and p in seen and _guessed_pointer(spec, p) and p not in out
        ]
    return out


def _call_args(text: str) -> list[str]:
    """Names passed directly (positionally or by keyword) to the calls on one source line."""
    try:
        tree = ast.parse(text.strip())
    except SyntaxError:
        return re.findall(r"[(,]\s*([A-Za-z_]\w*)\s*(?=[,)])", text)  # a line of a longer statement
    return [
        v.id
        for call in ast.walk(tree)
        if isinstance(call, ast.Call)
        for v in [*call.args, *(k.value for k in call.keywords)]
        if isinstance(v, ast.Name)
    ]
