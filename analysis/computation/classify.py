"""What a lifted kernel computes, in the terms a schedule is chosen by (and the schedule the model points to).

The classes follow the structure, not the spelling: a K loop of `acc += a[:, None] * b[None, :]`, one of scalar
products and one of `tl.dot` are all an accumulation of products over K; a reduction is a row reduction when
the reduced index variable walks memory contiguously and a column reduction when it walks a strided axis.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .model import LANE, LOOP, Access, Computation

ELEMENTWISE, ROW_REDUCTION, COLUMN_REDUCTION = "elementwise", "row reduction", "column reduction"
MATMUL, ATTENTION, SCAN = "accumulation of products over K", "attention", "scan"
GATHER, UNKNOWN = "gather/scatter", "unknown"

SCHEDULES = {
    ELEMENTWISE: "blocks sized for 128-bit accesses and enough programs to fill the device",
    ROW_REDUCTION: "2-D tiles with the contiguous axis innermost; several rows per program where rows are short; "
    "multi-pass rows fused into one or two passes where the row fits on chip",
    COLUMN_REDUCTION: "coalesced row tiles (contiguous axis innermost) reduced in-tile, the reduced axis split "
    "across programs with a second pass or atomics",
    MATMUL: "tl.dot tiles with grouped program order and pipelining (num_stages), the epilogue fused after the loop",
    ATTENTION: "the online-softmax (flash) form over key blocks, with causal block skipping where masked",
    SCAN: "tl.cumsum / tl.associative_scan over blocks, a carried running value between blocks",
    GATHER: "one contiguous row or block per gathered index (block copies), index loads hoisted",
}


@dataclass(frozen=True)
class Kind:
    name: str
    reasons: tuple[str, ...] = ()
    reduced_over: tuple[str, ...] = field(default=())  # index variables a reduction or accumulation runs over
    contiguous: str | None = None  # the index variable consecutive in memory in the main input

    @property
    def schedule(self) -> str:
        return SCHEDULES.get(self.name, "no schedule: the computation was not recognised")


def classify(comp: Computation) -> Kind:
    exps = {o.name for o in comp.ops if o.kind == "elementwise"} & {"exp", "exp2"}
    maxes = [a for a in comp.accumulations if a.op == "max"]
    products = [a for a in comp.accumulations if a.op in ("dot", "sum") and len(a.product_of) >= 2]
    dots = [a for a in comp.accumulations if a.op == "dot"]
    if (maxes and exps and (products or dots)) or (maxes and exps and any(o.kind == "dot" for o in comp.ops)):
        return Kind(ATTENTION, (f"loop carries a running max ({maxes[0].var}), exp, and a product accumulation",),
                    (maxes[0].loop,))
    # a two-pass softmax whose row max is a scalar (one query per program): P@V accumulates products of three
    # tensors through exp, after a max reduction over the keys
    chained = [a for a in products if len(a.product_of) >= 3]
    if chained and exps and any(o.kind == "reduce" and o.name == "max" for o in comp.ops):
        return Kind(ATTENTION, (f"`{chained[0].var}` accumulates exp-weighted products of "
                                f"{', '.join(chained[0].product_of)} after a max over the keys",), (chained[0].loop,))
    if products or dots:
        acc = (products or dots)[0]
        return Kind(MATMUL, (f"`{acc.var}` accumulates products of {', '.join(acc.product_of) or 'loads'} over "
                             f"the loop on line {acc.line}",), (acc.loop,), _contiguous(comp, acc.product_of))
    scans = [o for o in comp.ops if o.kind == "scan"]
    running = [a for a in comp.accumulations if a.stored_in_loop and a.op in ("sum", "max", "min", "product")]
    if scans or running:
        why = f"{scans[0].name} on line {scans[0].line}" if scans else f"running `{running[0].var}` stored every iteration"
        return Kind(SCAN, (why,))
    gathers = [a for a in comp.accesses if a.data_dependent]
    reduces = [o for o in comp.ops if o.kind == "reduce"]
    accs = [a for a in comp.accumulations if a.op in ("sum", "max", "min", "select")]
    if reduces or accs:
        over = tuple(v for v in [*(o.axis_var for o in reduces), *(a.loop for a in accs)] if v)
        return _reduction(comp, over, gathers)
    if gathers:
        return Kind(GATHER, (f"{gathers[0].kind} on line {gathers[0].line} has an address computed from loaded values",))
    if comp.loads and comp.stores:
        return Kind(ELEMENTWISE, ("loads and stores over the same lanes, no reduction",),
                    contiguous=_contiguous(comp, ()))
    return Kind(UNKNOWN, tuple(comp.unmodelled[:3]) or ("no loads and stores were lifted",))


def _reduction(comp: Computation, over: tuple[str, ...], gathers: list[Access]) -> Kind:
    main = _main_input(comp)
    if main is None or main.offset is None:
        return Kind(ROW_REDUCTION, ("reduction whose input access could not be lifted",), over)
    contiguous = main.contiguous()
    reduced_contig = any(_walks_contiguously(comp, main, v) for v in over)
    if reduced_contig:
        return Kind(ROW_REDUCTION, (f"the reduced index walks `{main.tensor}` contiguously",), over, contiguous)
    if contiguous is not None and over:  # a reduced axis that is not the contiguous one (unknown: not claimed)
        return Kind(COLUMN_REDUCTION, (f"`{main.tensor}` is reduced over a strided axis; its contiguous axis "
                                       "is kept",), over, contiguous)
    strides = ", ".join(f"{v}: {main.strided_by(v)}" for v in over)
    return Kind(ROW_REDUCTION, (f"reduced over an axis of stride {strides or '?'} (contiguous if 1 at launch)",),
                over, contiguous)


def _walks_contiguously(comp: Computation, access: Access, var: str) -> bool:
    """The reduced variable moves along memory by 1 (a lane of stride 1, or a loop stepping a contiguous lane)."""
    coeff = access.strided_by(var)
    if coeff.constant == 1:
        return True
    v = comp.var(var)
    if v is not None and v.kind == LOOP:
        lane = access.contiguous()
        return lane is not None and coeff == v.step  # ptr + k*BLOCK + lanes: the loop walks along the lanes
    return False


def _main_input(comp: Computation) -> Access | None:
    loads = [a for a in comp.loads if a.offset is not None and not a.data_dependent]
    if not loads:
        return None
    return max(loads, key=lambda a: sum(1 for v in a.offset.variables if v.startswith("lane")) + len(a.in_loops))


def _contiguous(comp: Computation, tensors: tuple[str, ...]) -> str | None:
    for a in comp.loads:
        if (not tensors or a.tensor in tensors) and a.contiguous():
            return a.contiguous()
    return None


def lane_vars(comp: Computation) -> list[str]:
    return [v.name for v in comp.index_vars if v.kind == LANE]
