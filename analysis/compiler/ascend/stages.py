"""The Ascend backend's stages, in compile order: what triton-ascend returns (ascend_runner/worker/compile_ascend.py)
and what BiSheng's pipeline run on the CPU returns (ascend_runner/worker/compile_hivm.py), how each is parsed and
attributed to source lines. The ttadapter is parsed by analyze.py with the user's path (its locations name it)."""

from __future__ import annotations

from collections import Counter

from ..attribution import Attributor, attribute_mlir
from ..ir.mlir import parse_mlir
from ..ir.ttadapter_model import AdapterModule, AdapterOp
from ..stages import Stage, add_stage

# bishengir pass dumps, returned as `hivm.<name>` (`tritonlens ir --stage hivm.<name>`)
HIVM_DUMPS = (
    "plan-memory", "multibuffer", "scalar", "sync", "cv-pipelining", "bind-sub-block", "split-mix",
    "core-type", "enable-multibuffer", "log",
)  # fmt: skip


def adapter_class(op: AdapterOp) -> str | None:
    """The class a ttadapter op counts under in LineStats (code lens / hover tallies)."""
    if op.in_scalar_loop or "DiscreteMemAccess" in op.markers:
        return "discrete"
    if op.is_cube:
        return "cube"
    if op.name == "memref.copy":
        return "global_load"
    if op.name == "bufferization.materialize_in_destination":
        return "global_store"
    if op.name == "memref.alloc":
        return "buffer"
    if op.name == "linalg.fill" and any(t.kind == "memref" for t in op.types):
        return "pad_fill"
    if op.name in ("arith.cmpi", "arith.cmpf") and op.on_tensors:
        return f"compare_{op.element_type}"
    if op.name.startswith("arith.") and op.on_tensors and op.element_type == "i64":
        return "int64"
    if op.is_vector:
        return "vector"
    if op.is_scalar_compute:
        return "scalar"
    return None


def attribute_ttadapter(module: AdapterModule, att: Attributor, stage: str) -> None:
    """Each ttadapter op on its source line (the adapter's own locations), counted by `adapter_class`; scalar
    loops counted on the line that opens them."""
    pairs = att.pairs(stage)
    for op in module.ops:
        if op.line is None:
            continue
        pairs.append((op.line, op.ir_line))
        att.stats(op.line).add(stage, adapter_class(op), op.ir_line)
    for loop in module.scalar_loops:
        if loop.op.line is not None:
            att.lines[loop.op.line].classes.setdefault(stage, Counter())["scalar_loop"] += 1


WORKER = "ascend_runner/worker/compile_ascend.py"
TTIR = add_stage(Stage("ttir", "ascend", WORKER, parse_mlir, attribute_mlir))
TTADAPTER = add_stage(Stage("ttadapter", "ascend", WORKER, None, attribute_ttadapter))
NPUBIN = add_stage(Stage("npubin", "ascend", WORKER, text=False))  # built only where CANN's hivmc is installed
HIVM = add_stage(Stage("hivm", "ascend", "ascend_runner/worker/compile_hivm.py", dumps=HIVM_DUMPS))
