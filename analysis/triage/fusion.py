"""Kernels launched back to back where an intermediate round-trips through global memory (TL128).

In one host function, launch A writes a tensor (its parameter is the base of a `tl.store`) that launch B, later
in the same function, reads (the base of a `tl.load`), and the tensor was allocated in that function and is not
returned: it exists only to carry A's result to B. Fusing B's work into A (or A's into B) saves writing and
re-reading it. The bytes come from the allocation's shape and dtype when the launch-site machinery resolves them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from math import prod
from typing import Any

from ..core.findings import Finding, Level, Severity
from ..core.rules import Rule, register
from ..kernels import LaunchSite
from ..source.node_memo import per_node, subtree
from ..specialize.launch import resolve
from . import references as ref
from .base import finding, kernel_check
from .context import KernelContext
from .context_names import ATOMICS, TL
from .launch_facts import launches

_ALLOCATORS = ("empty", "empty_like", "zeros", "zeros_like", "empty_strided", "ones", "ones_like", "full")
_BYTES = {
    "fp8": 1,
    "i8": 1,
    "u8": 1,
    "i1": 1,
    "fp16": 2,
    "bf16": 2,
    "i16": 2,
    "fp32": 4,
    "i32": 4,
    "fp64": 8,
    "i64": 8,
}

UNFUSED_CHAIN = register(
    Rule(
        code="TL128",
        name="intermediate-round-trip",
        title="Back-to-back kernels pass an intermediate through global memory",
        level=Level.TRIAGE,
        severity=Severity.INFO,
        platforms=("cuda", "ascend"),
        rationale=(
            "When one launch writes a temporary tensor that the next launch only reads, the intermediate makes a "
            "round trip through HBM: written once, read once, plus a second launch. For memory-bound kernels "
            "(elementwise, normalization, activation) the runtime is proportional to bytes moved, so the round "
            "trip can cost as much as each kernel's own useful traffic. Fusing the consumer's work into the "
            "producer keeps the intermediate in registers (NVIDIA) or the unified buffer (Ascend).\n\n"
            "Not reported when the intermediate is returned (it is an output) or was not allocated in the "
            "launching function, when the two launches use different grids (a per-block partial result then a "
            "final reduction needs the grid-wide synchronization a second launch gives), or when they sit in "
            "different branches of an `if`.\n\n"
            "**Fix:** apply the second kernel's operation to the first kernel's result before its `tl.store` "
            "(e.g. bias + activation in the matmul epilogue, as the matmul tutorial fuses leaky_relu)."
        ),
        references=(ref.MATMUL, ref.FUSED_SOFTMAX, ref.ASCEND_PERF),
    )
)


@kernel_check
def intermediate_round_trip(ctx: KernelContext) -> Iterator[Finding]:
    if ctx.kernel.is_helper or not ctx.launches:
        return
    for host, sites, allocated, returned in _launching_hosts(ctx).get(ctx.name, ()):
        for i, producer in enumerate(sites):
            if producer.kernel != ctx.name:
                continue
            written = _param_args(ctx, producer, _stored_params(ctx))
            for consumer in sites[i + 1 :]:
                other = ctx.module.kernel(consumer.kernel)
                if (
                    other is None
                    or not _same_grid(producer, consumer)
                    or _exclusive(host, producer, consumer)
                ):
                    continue
                other_ctx = _context(ctx, other)
                read = _param_args(other_ctx, consumer, _aligned_loads(other_ctx))
                for name in sorted(set(written) & set(read) & set(allocated) - returned):
                    if _used_between(host, name, producer, consumer):
                        continue  # the host reads or changes it between the launches (a cumsum, a size)
                    nbytes = _bytes(ctx, host, allocated[name], consumer)
                    cost = (
                        f"{_fmt(2 * nbytes)} (written once, read once)"
                        if nbytes
                        else "unknown bytes (shape not resolved)"
                    )
                    message = (
                        f"`{name}` is written by {producer.kernel} (line {producer.span.line}) and read back by "
                        f"{consumer.kernel} here: a round trip through global memory costing {cost}; fuse the two"
                    )
                    yield finding(
                        UNFUSED_CHAIN,
                        ctx,
                        consumer.span,
                        message,
                        data={
                            "intermediate": name,
                            "producer": producer.kernel,
                            "consumer": consumer.kernel,
                            "bytes": 2 * nbytes if nbytes else None,
                        },
                    )
                written = [w for w in written if w not in read]  # reported once per intermediate


def _same_grid(a: LaunchSite, b: LaunchSite) -> bool:
    """Launched over the same grid: program i of the consumer reads what program i of the producer wrote, so the
    two fuse into one kernel. Different grids (a per-block partial, then a one-program final reduction) need a
    grid-wide synchronization between them: that split is deliberate."""
    return " ".join(a.grid_text.split()) == " ".join(b.grid_text.split())


def _exclusive(host: ast.AST, a: LaunchSite, b: LaunchSite) -> bool:
    """Whether the two launches sit in different branches of one `if` (only one of them runs)."""
    for node in ast.walk(host):
        if isinstance(node, ast.If) and node.orelse:
            body = range(node.body[0].lineno, (node.body[-1].end_lineno or node.body[-1].lineno) + 1)
            other = range(node.orelse[0].lineno, (node.orelse[-1].end_lineno or node.orelse[-1].lineno) + 1)
            la, lb = a.span.line, b.span.line
            if (la in body and lb in other) or (la in other and lb in body):
                return True
    return False


_Host = tuple[ast.AST, list[LaunchSite], dict[str, ast.Call], set[str]]


def _launching_hosts(ctx: KernelContext) -> dict[str, list[_Host]]:
    """kernel name -> the host functions launching it: (def, all its launches in source order, allocations,
    returned names). Read once per file (every kernel asks; walking the tree per kernel and launch was cubic)."""
    key = ("fusion.hosts",)
    hosts = ctx.module.memo.get(key)
    if hosts is None:
        defs: dict[str, list[ast.AST]] = {}
        if ctx.module.tree is not None:
            for stmt in ctx.module.tree.body:  # per statement, remembered: a keystroke re-walks one statement
                for node in per_node("fusion.defs", stmt, _function_defs):
                    defs.setdefault(node.name, []).append(node)
        grouped: dict[int, tuple[ast.AST, list[LaunchSite]]] = {}
        for site in ctx.module.launches:
            host = _host_def(defs.get(site.function or "", []), site) if site.function else None
            if host is not None:
                grouped.setdefault(id(host), (host, []))[1].append(site)
        hosts = {}
        for host, sites in grouped.values():
            sites.sort(key=lambda s: (s.span.line, s.span.col))
            entry = (
                host,
                sites,
                per_node("fusion.allocations", host, _allocations),
                per_node("fusion.returned", host, _returned_names),
            )
            for name in dict.fromkeys(site.kernel for site in sites):
                hosts.setdefault(name, []).append(entry)
        ctx.module.memo[key] = hosts
    return hosts


def _function_defs(stmt: ast.AST) -> list[ast.AST]:
    return [n for n in subtree(stmt) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _host_def(candidates: list[ast.AST], site: LaunchSite) -> ast.AST | None:
    """The innermost of the same-named function definitions that contains the launch."""
    best: ast.AST | None = None
    for node in candidates:
        if node.lineno <= site.span.line <= (getattr(node, "end_lineno", None) or node.lineno):  # type: ignore[attr-defined]
            if best is None or node.lineno > best.lineno:  # type: ignore[attr-defined]
                best = node
    return best


def _allocations(host: ast.AST) -> dict[str, ast.Call]:
    """Names assigned from a torch allocation in the function (`t = torch.empty_like(x)`)."""
    out: dict[str, ast.Call] = {}
    for node in subtree(host):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            if (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Attribute)
                and value.func.attr in _ALLOCATORS
            ):
                out[node.targets[0].id] = value
    return out


def _returned_names(host: ast.AST) -> set[str]:
    return {
        n.id
        for r in subtree(host)
        if isinstance(r, ast.Return) and r.value
        for n in ast.walk(r.value)
        if isinstance(n, ast.Name)
    }


def _param_args(ctx: KernelContext, site: LaunchSite, params: set[str]) -> list[str]:
    """Names the launch passes (as a bare name) to the given parameters."""
    return [
        arg.text for name, arg in site.bind(ctx.kernel).items() if name in params and arg.text.isidentifier()
    ]


def _stored_params(ctx: KernelContext) -> set[str]:
    return _bases(ctx, {TL + "store", *ATOMICS})


def _aligned_loads(ctx: KernelContext) -> set[str]:
    """Parameters the kernel reads once per program at its own block (`pid * BLOCK + tl.arange`), outside loops:
    what the same program of the producer wrote. A read in a loop or at other programs' blocks (a prefix over
    per-program counts) depends on the whole producer grid and cannot fuse."""
    out: set[str] = set()
    blocked: set[str] = set()
    for call, name in ctx.calls:
        if name != TL + "load":
            continue
        pointer = ctx.pointer_arg(call)
        if pointer is None:
            continue
        bases = ctx.base_pointers(pointer)
        names = set().union(*(ctx.names_of(e) for e in ctx.address_exprs(pointer)))
        per_program = any(
            isinstance(c, ast.Call) and ctx.resolve(c.func) == TL + "program_id"
            for e in ctx.address_exprs(pointer)
            for c in ctx.walk(e)
        ) or bool(names & ctx.program_id_names)
        if ctx.enclosing_loops(call) or not per_program or not ctx.is_block_expr(pointer):
            blocked |= bases
        else:
            out |= bases
    return out - blocked


def _used_between(host: ast.AST, name: str, first: LaunchSite, second: LaunchSite) -> bool:
    for node in ast.walk(host):
        if isinstance(node, ast.Name) and node.id == name:
            line = node.lineno
            if first.span.end_line < line < second.span.line:
                return True
    return False


def _bases(ctx: KernelContext, ops: set[str]) -> set[str]:
    out: set[str] = set()
    for call, name in ctx.calls:
        if name in ops:
            pointer = ctx.pointer_arg(call)
            if pointer is not None:
                out |= ctx.base_pointers(pointer)
    return out


def _context(ctx: KernelContext, kernel: Any) -> KernelContext:
    if kernel is ctx.kernel:
        return ctx
    key = f"fusion.ctx:{kernel.name}"
    other = ctx.memo.get(key)
    if other is None:
        other = KernelContext(module=ctx.module, kernel=kernel, path=ctx.path)
        ctx.memo[key] = other
    return other


def _bytes(ctx: KernelContext, host: ast.AST, alloc: ast.Call, consumer: LaunchSite) -> int | None:
    """Size of the intermediate when its allocation's shape and dtype resolve at the consumer's launch."""
    target = next(
        (n.targets[0] for n in ast.walk(host) if isinstance(n, ast.Assign) and n.value is alloc), None
    )
    if not isinstance(target, ast.Name):
        return None
    for launch in launches(ctx.module.tree, consumer.kernel):
        if launch.line != consumer.span.line:
            continue
        fact = resolve(ast.Name(id=target.id, ctx=ast.Load()), launch.scope)
        if fact.kind != "tensor" or not fact.shape or not fact.dtype:
            return None
        dims = list(fact.shape)
        if not all(isinstance(d, int) for d in dims) or fact.dtype not in _BYTES:
            return None
        return prod(dims) * _BYTES[fact.dtype]
    return None


def _fmt(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"
