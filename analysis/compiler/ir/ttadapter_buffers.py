"""The tiles a ttadapter module keeps in the unified buffer: buffers from allocations and their live ranges,
and the peak bytes live at once (with and without multibuffering)."""

from __future__ import annotations

import re

from .ttadapter_model import VALUE_RE, VIEW_OPS, AdapterOp, Buffer


def buffers_of(ops: list[AdapterOp]) -> list[Buffer]:
    """On-chip buffers: staged loads (memref.alloc) and tensor temporaries, with textual liveness."""
    # Values that share storage with an earlier one (to_tensor of an alloc, destination-passing outs).
    alias: dict[str, str] = {}
    for op in ops:
        if not op.results:
            continue
        if op.name in VIEW_OPS and op.operands:
            alias[op.results[0]] = alias.get(op.operands[0], op.operands[0])
        elif " outs(" in op.text:
            outs = VALUE_RE.findall(op.text.split(" outs(", 1)[1])
            if outs:
                alias[op.results[0]] = alias.get(outs[0], outs[0])
        elif op.name == "scf.for" and "iter_args(" in op.text:
            # Loop results and the region's carried block arguments share the init value's storage.
            pairs = re.findall(r"(%[\w#]+)\s*=\s*(%[\w#]+)", op.text.split("iter_args(", 1)[1])
            for (carried, init), res in zip(pairs, op.results, strict=False):
                alias[res] = alias.get(init, init)
                alias[carried] = alias.get(init, init)

    def root(v: str) -> str:
        seen = 0
        while v in alias and seen < 64:
            v, seen = alias[v], seen + 1
        return v

    last_use: dict[str, int] = {}
    cube_fed: set[str] = set()
    copied: set[str] = set()
    for op in ops:
        end = op.end_ir_line or op.ir_line
        for v in op.operands:
            r = root(v)
            last_use[r] = max(last_use.get(r, 0), end)
        if op.is_cube:
            # Operands are staged in L1/L0A/L0B and the accumulator lives in L0C: none of them is UB.
            for v in op.operands:
                cube_fed.add(root(v))
        if op.name == "memref.copy" and len(op.operands) >= 2:
            copied.add(root(op.operands[1]))
    out: list[Buffer] = []
    for op in ops:
        if not op.results or op.in_scalar_loop:
            continue
        name = op.results[0]
        if root(name) != name:
            continue  # shares storage with an earlier buffer
        if op.name == "memref.alloc" or op.name == "tensor.empty":
            kind_ok = True
        else:
            kind_ok = op.is_vector and op.name not in ("linalg.fill",)
        if not kind_ok or not op.types:
            continue
        result_type = op.types[-1]
        if result_type.bytes is None:
            continue
        out.append(
            Buffer(
                op=op,
                type=result_type,
                name=name,
                last_use=max(last_use.get(name, op.ir_line), op.ir_line),
                in_loop=op.loop_depth > 0,
                feeds_cube=name in cube_fed,
                from_copy=name in copied,
            )
        )
    return out


def peak_live_bytes(buffers: list[Buffer], multibuffer: bool = True) -> tuple[int, int | None]:
    """Largest sum of simultaneously live UB buffers, and the IR line where it peaks.

    Staged loads inside a loop count twice when multibuffer is on: bishengir double-buffers them so the next
    iteration's copy overlaps this iteration's compute. Cube operands (L1) are left out.
    """
    ub = [b for b in buffers if not b.feeds_cube]
    points = sorted({b.op.ir_line for b in ub})
    best, where = 0, None
    for p in points:
        total = 0
        for b in ub:
            if b.op.ir_line <= p <= b.last_use:
                factor = 2 if multibuffer and b.in_loop and b.from_copy else 1
                total += (b.type.bytes or 0) * factor
        if total > best:
            best, where = total, p
    return best, where
