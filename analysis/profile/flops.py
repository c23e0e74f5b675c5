"""FLOPs per program counted from a kernel's TTIR (or TTGIR) text: the roofline's numerator.

Pure function over compiler output: `count_flops(ir, scalars)`. Floating-point operations are counted per result
element (`arith.addf`/`mulf`/... 1 each, `math.fma` 2, `tt.dot` 2*M*N*K, transcendentals 1 each, kept apart),
(`tt.dot`, Hopper's `ttng.warp_group_dot`) multiplied by the trip counts of the `scf.for` loops around them. A trip count comes from the loop's bounds when
they are constants or kernel arguments whose launch values are given (`scalars`, by parameter name), through the
integer arithmetic of the function body; otherwise the loop counts once and the count is marked a lower bound.
Reductions (`tt.reduce`) count their combine region once per input element. Both branches of an `scf.if`
count (an upper bound for that part). Integer and pointer arithmetic are not FLOPs.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

_FLOAT_OPS = {
    "arith.addf": 1,
    "arith.subf": 1,
    "arith.mulf": 1,
    "arith.divf": 1,
    "arith.remf": 1,
    "arith.maximumf": 1,
    "arith.minimumf": 1,
    "arith.maxnumf": 1,
    "arith.minnumf": 1,
    "math.fma": 2,
}
_TRANSCENDENTAL = {
    f"math.{name}"
    for name in ("exp", "exp2", "log", "log2", "log1p", "sqrt", "rsqrt", "tanh", "erf", "sin", "cos", "expm1")
}
_INT_OPS = {
    "arith.addi": lambda a, b: a + b,
    "arith.subi": lambda a, b: a - b,
    "arith.muli": lambda a, b: a * b,
    "arith.divsi": lambda a, b: int(a / b) if b else None,
    "arith.divui": lambda a, b: a // b if b else None,
    "arith.ceildivsi": lambda a, b: -(-a // b) if b else None,
    "arith.minsi": min,
    "arith.maxsi": max,
}
_ASSIGN = re.compile(r"^\s*(%[\w.#:]+)\s*=\s*\"?([\w.]+)\"?(.*)$")
_CONST = re.compile(r"arith\.constant\s+(-?\d+)\s*:\s*i\d+")
_FOR = re.compile(r"scf\.for\s+%[\w.]+\s*=\s*(%[\w.#]+)\s+to\s+(%[\w.#]+)\s+step\s+(%[\w.#]+)")
_ARG = re.compile(r"%([A-Za-z_][\w]*):\s*(i\d+|f\d+|!tt\.ptr)")
_TENSOR = re.compile(r"tensor<((?:\d+x)+)([a-z0-9]+)")
_SHAPE2 = re.compile(r"<(\d+)x(\d+)x([a-z][a-z0-9]*)")
# Matrix-unit ops: tt.dot (TTIR), ttng.warp_group_dot (Hopper TTGIR); their types read "A * B -> C".
_DOT_OPS = {"tt.dot", "ttng.warp_group_dot", "tt.dot_scaled"}
_REDUCE_END = re.compile(r"^\s*\}\)\s*:\s*\(([^)]*)\)")


@dataclass
class FlopCount:
    """FLOPs one program executes."""

    dot: float = 0.0  # tt.dot multiply-adds x 2 (tensor-core eligible)
    elementwise: float = 0.0  # arith float ops and math.fma on the FMA / vector units
    transcendental: float = 0.0  # math.exp & co. (special-function units)
    dot_dtype: str | None = None  # operand element type of the (first) tt.dot, e.g. "f16"
    exact: bool = True  # False when a loop's trip count was unknown (counted once)
    unknown_loops: list[str] = field(default_factory=list)  # "line N: scf.for to %x" whose trips are unknown
    loop_products: int = 0  # multiply-then-accumulate pairs of 2-D float tensors inside loops (no tt.dot)

    @property
    def total(self) -> float:
        return self.dot + self.elementwise + self.transcendental

    @property
    def matmul_without_dot(self) -> bool:
        """Matrix-product work on the FMA units: 2-D multiply-accumulates in a loop and no tt.dot at all."""
        return self.dot == 0 and self.loop_products > 0

    def scaled(self, programs: int) -> FlopCount:
        return FlopCount(
            self.dot * programs,
            self.elementwise * programs,
            self.transcendental * programs,
            self.dot_dtype,
            self.exact,
            list(self.unknown_loops),
            self.loop_products,
        )


def count_flops(ir: str, scalars: dict[str, float] | None = None) -> FlopCount:
    """FLOPs per program of the first function in `ir` (TTIR or TTGIR text)."""
    lines = ir.splitlines()
    reduce_sizes = _reduce_regions(lines)
    values: dict[str, float] = {}
    for name, value in (scalars or {}).items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            values[f"%{name}"] = value
    out = FlopCount()
    stack: list[float] = []  # multiplier contributed by each open region
    loops: list[bool] = []  # whether each open region is a loop
    for number, raw in enumerate(lines, start=1):
        cut = raw.rfind(" loc(")
        line = raw[:cut] if cut >= 0 and raw.rstrip().endswith(")") else raw
        stripped = line.strip()
        if not stripped or stripped.startswith(("#loc", "//")):
            continue
        closes = stripped.startswith("}")
        if closes and stack:
            stack.pop()
            loops.pop()
        multiplier = math.prod(stack) if stack else 1.0
        opens = stripped.endswith("{")
        m = _ASSIGN.match(line)
        op = m.group(2) if m else stripped.split(" ", 1)[0].strip('"')
        if m:
            _track_int(m.group(1), op, m.group(3), values)
        if "scf.for" in stripped:
            trips = _trips(stripped, values)
            if trips is None:
                out.exact = False
                out.unknown_loops.append(f"line {number}: {stripped[: stripped.find(' iter_args')][:80]}")
                trips = 1.0
            if opens:
                stack.append(trips)
                loops.append(True)
            continue
        if "scf.while" in stripped and opens:
            out.exact = False
            out.unknown_loops.append(f"line {number}: scf.while")
            stack.append(1.0)
            loops.append(True)
            continue
        if op == "tt.reduce" and opens:
            stack.append(float(reduce_sizes.get(number, 1)))
            loops.append(False)
            continue
        if opens:  # scf.if, "} else {", tt.func, other regions: no multiplier of their own
            stack.append(1.0)
            loops.append(False)
        if op in _DOT_OPS:
            shapes = _SHAPE2.findall(stripped.split(" : ", 1)[-1])
            if len(shapes) >= 2:
                (m_, k_, dtype), (_, n_, _) = shapes[0], shapes[1]
                out.dot += 2.0 * int(m_) * int(n_) * int(k_) * multiplier
                out.dot_dtype = out.dot_dtype or dtype
            continue
        cost = _FLOAT_OPS.get(op)
        if cost is not None:
            elements = _elements(stripped)
            out.elementwise += cost * elements * multiplier
            if op in ("arith.mulf", "math.fma") and any(loops) and _rank(stripped) >= 2:
                out.loop_products += 1
        elif op in _TRANSCENDENTAL:
            out.transcendental += _elements(stripped) * multiplier
    return out


def _reduce_regions(lines: list[str]) -> dict[int, int]:
    """Line of each `tt.reduce` opening -> elements of its input (read on the line closing its region)."""
    out: dict[int, int] = {}
    open_lines: list[int] = []
    for number, raw in enumerate(lines, start=1):
        if '"tt.reduce"' in raw or " tt.reduce(" in raw:
            if raw.rstrip().split(" loc(")[0].endswith("{"):
                open_lines.append(number)
        end = _REDUCE_END.match(raw)
        if end and open_lines:
            start = open_lines.pop()
            tensors = _TENSOR.findall(end.group(1))
            out[start] = math.prod(int(d) for d in tensors[0][0].rstrip("x").split("x")) if tensors else 1
    return out


def _track_int(name: str, op: str, rest: str, values: dict[str, float]) -> None:
    """Integer scalars the loop bounds are computed from: constants and arithmetic on known values."""
    if op == "arith.constant":
        c = _CONST.search(f"arith.constant{rest}")
        if c:
            values[name] = int(c.group(1))
        return
    fn = _INT_OPS.get(op)
    if fn is None or "tensor<" in rest:
        return
    operands = re.findall(r"%[\w.#]+", rest)[:2]
    if len(operands) == 2 and all(o in values for o in operands):
        result = fn(values[operands[0]], values[operands[1]])
        if result is not None:
            values[name] = result


def _trips(line: str, values: dict[str, float]) -> float | None:
    m = _FOR.search(line)
    if not m:
        return None
    lb, ub, step = (values.get(x) for x in m.groups())
    if lb is None or ub is None or not step:
        return None
    return float(max(0, math.ceil((ub - lb) / step)))


def _elements(line: str) -> int:
    """Elements of the op's result: the last tensor type on the line, 1 for a scalar."""
    types = _TENSOR.findall(line)
    if not types:
        return 1
    return math.prod(int(d) for d in types[-1][0].rstrip("x").split("x"))


def _rank(line: str) -> int:
    types = _TENSOR.findall(line)
    return len(types[-1][0].rstrip("x").split("x")) if types else 0


def kernel_params(ir: str) -> list[str]:
    """Names of the scalar and pointer arguments of the IR's kernel, in order (what the launch passes at run time;
    constexprs are not among them)."""
    head = next((line for line in ir.splitlines() if "tt.func" in line), "")
    return [m.group(1) for m in _ARG.finditer(head)]


_NCU_FP32 = re.compile(r"executes ([\d,]+) fused and ([\d,]+) non-fused FP32 instructions")


def ncu_fp32_flops(details: str) -> float | None:
    """FP32 FLOPs of a launch from Nsight Compute's details page: its FP32 instruction rule reports warp-level
    fused (FMA: 2 FLOPs) and non-fused (1 FLOP) instruction counts; 32 lanes per warp instruction (an upper bound
    when lanes are predicated off). None when the page has no such line (the rule prints it only when some FP32
    instructions are not fused)."""
    m = _NCU_FP32.search(" ".join(details.split()))
    if not m:
        return None
    fused, plain = (int(g.replace(",", "")) for g in m.groups())
    return (2.0 * fused + plain) * 32
