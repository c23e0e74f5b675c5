"""The model of what one kernel computes: its iteration space, its memory accesses as index maps, and the dataflow.

Built by `lift.lift_kernel` from the kernel's AST (helpers of the same file inlined), independent of how the author
spelled it: raw pointer arithmetic, block pointers, tensor descriptors and helper functions lift to the same
accesses. `classify.classify` names the computation (elementwise, row or column reduction, accumulation of
products over K, attention, scan, gather) and `summary.describe` says it in words, for the LLM's prompt and hovers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .symbolic import Affine, Poly

# Kinds of index variable.
PROGRAM, LOOP, LANE = "program", "loop", "lane"


@dataclass(frozen=True)
class IndexVar:
    """One dimension of the iteration space."""

    name: str  # "pid0", "k@41" (loop variable k of the loop on line 41), "lane@12:8" (a tl.arange)
    kind: str  # PROGRAM | LOOP | LANE
    extent: str  # source text of its size ("BLOCK_N", "tl.cdiv(K, BLOCK_K)", "grid axis 0")
    line: int
    label: str = ""  # the user's name for it where there is one ("cols", "k")
    step: Poly = field(default_factory=lambda: Poly.of(1))  # a loop's step (range(0, K, BLOCK_K): BLOCK_K)


def derived_parts(name: str, op: str) -> tuple[str, str] | None:
    """(`pid2`, `G`) for the index variable lift derives as `pid2 % G` (named `pid2%(G)`; `op` "%" or "//"); None
    for any other variable."""
    head, sep, tail = name.partition(f"{op}(")
    return (head, tail[:-1]) if sep and head and tail.endswith(")") else None


@dataclass(frozen=True)
class Access:
    """One tl.load / tl.store / atomic, as base tensor + affine offset over the iteration space."""

    kind: str  # "load" | "store" | "atomic"
    tensor: str  # the pointer parameter it addresses (or "?" when unknown)
    line: int
    offset: Affine | None  # None when not affine (then `why` says why)
    masked: bool = False
    data_dependent: bool = False  # the offset reads a value loaded from memory (a gather/scatter)
    in_loops: tuple[str, ...] = ()  # loop variables of the loops around it, outermost first
    why: str = ""
    dims: tuple[str | None, ...] = ()  # the tile's axes: lane variable per axis (None: a broadcast axis)

    def contiguous(self) -> str | None:
        """The index variable whose coefficient is exactly 1: consecutive elements of memory along it."""
        if self.offset is None:
            return None
        ones = [var for var, c in self.offset.coeffs if c.constant == 1]
        lanes = [v for v in ones if v.startswith("lane")]
        return (lanes or ones or [None])[0]  # a lane of stride 1 first; else a program or loop index of stride 1

    def strided_by(self, var: str) -> Poly:
        return self.offset.coefficient(var) if self.offset is not None else Poly()


@dataclass(frozen=True)
class Op:
    """One dataflow operation on loaded values."""

    kind: str  # "elementwise" | "reduce" | "dot" | "scan" | "where" | "cast"
    name: str  # "sum", "max", "exp", "dot", "cumsum", "associative_scan", "+", "*"
    line: int
    axis_var: str | None = None  # for reductions and scans: the index variable reduced over (when known)


@dataclass(frozen=True)
class Accumulation:
    """A loop-carried value: `acc += ...`, `m = tl.maximum(m, ...)`, `acc = tl.dot(a, b, acc)`."""

    var: str  # the user's variable name
    loop: str  # the loop's index variable
    op: str  # "sum" | "max" | "min" | "dot" | "product" | "select" (tl.where of itself) | "other"
    line: int
    product_of: tuple[str, ...] = ()  # tensors whose loads are multiplied into it (a K accumulation)
    stored_in_loop: bool = False  # the running value is written every iteration (a scan)


@dataclass
class Computation:
    """Everything lifted from one kernel."""

    kernel: str
    index_vars: list[IndexVar] = field(default_factory=list)
    accesses: list[Access] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)
    accumulations: list[Accumulation] = field(default_factory=list)
    epilogue: list[str] = field(default_factory=list)  # ops applied to an accumulator after its loop, in order
    unmodelled: list[str] = field(default_factory=list)  # what could not be lifted, with line and reason
    helpers_inlined: list[str] = field(default_factory=list)

    def var(self, name: str) -> IndexVar | None:
        return next((v for v in self.index_vars if v.name == name), None)

    @property
    def loads(self) -> list[Access]:
        return [a for a in self.accesses if a.kind == "load"]

    @property
    def stores(self) -> list[Access]:
        return [a for a in self.accesses if a.kind in ("store", "atomic")]
