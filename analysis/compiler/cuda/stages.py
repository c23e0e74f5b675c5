"""The NVIDIA backend's stages, in compile order: what Triton's CUDA pipeline returns
(ascend_runner/worker/compile_cuda.py), how each is parsed and attributed to source lines."""

from __future__ import annotations

import os

from ..attribution import Attributor, attribute_mlir, cp_async_bits, llir_class, ptx_class, sass_class
from ..ir.llir import LlirInstr, parse_llir
from ..ir.mlir import parse_mlir
from ..ir.ptx import PtxModule, parse_ptx, vector_bits
from ..ir.sass import SassInstr, parse_sass
from ..stages import Stage, add_stage

WORKER = "ascend_runner/worker/compile_cuda.py"


def attribute_llir(instrs: list[LlirInstr], att: Attributor, stage: str) -> None:
    pairs = att.pairs(stage)
    for ins in instrs:
        line = att.user_line(ins.loc)
        if line is None:
            continue
        pairs.append((line, ins.ir_line))
        att.stats(line).add(stage, llir_class(ins.opcode), ins.ir_line)


def attribute_ptx(module: PtxModule, att: Attributor, stage: str) -> None:
    """PTX instructions per user line, with the bits of each global load/store; remembers which user lines
    called library code, for SASS (whose line comments lack the inlining chain)."""
    pairs = att.pairs(stage)
    for ins in module.instrs:
        line = att.user_line(ins.loc)
        if line is None:
            continue
        inner = ins.loc.frames[0] if ins.loc.frames else None
        if inner is not None and not att.is_user(inner.file):
            callers = att.library_callers.setdefault((os.path.basename(inner.file), inner.line), [])
            if line not in callers:
                callers.append(line)
        pairs.append((line, ins.ir_line))
        cls = ptx_class(ins.opcode)
        st = att.stats(line)
        st.add(stage, cls, ins.ir_line)
        bits = vector_bits(ins.opcode) if cls != "async_copy" else cp_async_bits(ins.text)
        if cls in ("global_load", "async_copy") and bits:
            st.global_load_bits.append(bits)
        elif cls == "global_store" and bits:
            st.global_store_bits.append(bits)


def attribute_sass(instrs: list[SassInstr], att: Attributor, stage: str) -> None:
    """SASS per user line; a library line is charged to the user line PTX says called it (the nearest one seen
    before it in program order when several did)."""
    pairs = att.pairs(stage)
    last_user: int | None = None
    for ins in instrs:
        line = att.user_line(ins.loc)
        if line is None and ins.loc.frames:
            inner = ins.loc.frames[0]
            callers = att.library_callers.get((os.path.basename(inner.file), inner.line), [])
            line = last_user if last_user in callers else (callers[0] if callers else None)
        elif line is not None:
            last_user = line
        if line is None:
            continue
        pairs.append((line, ins.ir_line))
        att.stats(line).add(stage, sass_class(ins.opcode), ins.ir_line)


TTIR = add_stage(Stage("ttir", "cuda", WORKER, parse_mlir, attribute_mlir))
TTGIR = add_stage(Stage("ttgir", "cuda", WORKER, parse_mlir, attribute_mlir))
LLIR = add_stage(Stage("llir", "cuda", WORKER, parse_llir, attribute_llir, comment=";"))
PTX = add_stage(Stage("ptx", "cuda", WORKER, parse_ptx, attribute_ptx))
SASS = add_stage(Stage("sass", "cuda", "ascend_runner/worker/cuda_binary.py", parse_sass, attribute_sass))
