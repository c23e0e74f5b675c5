"""What a CUDA binary says about the kernel: SASS with source lines (nvdisasm) and its resources (ptxas -v,
cuobjdump -res-usage: registers, spills, shared/local memory, barriers). Runs inside the CUDA runner environment
(stdlib + triton; never imports tritonlens).
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from typing import Any


def cuda_tool(name: str) -> str:
    from triton import knobs

    return str(getattr(knobs.nvidia, name).path)


def sass_and_usage(cubin: bytes, disassemble: bool = True) -> tuple[str | None, str]:
    """nvdisasm with line info (inlined helpers included) and cuobjdump's resource table, run in parallel.

    nvdisasm costs ~0.3 s of CPU even for a tiny cubin, so a caller may skip it (disassemble=False).
    """
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
        binary = f.name
    try:
        dis = None
        if disassemble:
            dis = subprocess.Popen(
                [cuda_tool("nvdisasm"), "-c", "-gi", binary], stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        res = subprocess.Popen(
            [cuda_tool("cuobjdump"), "-res-usage", binary], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        res_out, _ = res.communicate(timeout=120)
        if dis is None:
            return None, res_out.decode("utf-8", "replace")
        sass_out, sass_err = dis.communicate(timeout=120)
        sass = sass_out.decode("utf-8", "replace")
        if dis.returncode != 0:
            sass = f"// nvdisasm failed ({dis.returncode}): {sass_err.decode('utf-8', 'replace').strip()}\n"
        return sass, res_out.decode("utf-8", "replace")
    finally:
        os.remove(binary)


def parse_resources(ptxas_log: str, res_usage: str, metadata: dict[str, Any]) -> dict[str, Any]:
    """Registers, spills, stack, shared/local memory and barriers of the kernel's entry function."""
    out: dict[str, Any] = {}
    if m := re.search(r"Used (\d+) registers", ptxas_log):
        out["registers"] = int(m.group(1))
    if m := re.search(r"used (\d+) barriers", ptxas_log):
        out["barriers"] = int(m.group(1))
    if m := re.search(
        r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", ptxas_log
    ):
        out["stack_frame"] = int(m.group(1))
        out["spill_stores"] = int(m.group(2))
        out["spill_loads"] = int(m.group(3))
    if m := re.search(r"(\d+) bytes smem", ptxas_log):
        out["static_shared"] = int(m.group(1))
    if m := re.search(r"(\d+) bytes cmem\[0\]", ptxas_log):
        out["constant"] = int(m.group(1))
    if m := re.search(r"REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)", res_usage):
        out.setdefault("registers", int(m.group(1)))
        out.setdefault("stack_frame", int(m.group(2)))
        out.setdefault("static_shared", int(m.group(3)))
        out["local"] = int(m.group(4))
    # Triton allocates its shared memory dynamically: the launch size lives in the metadata.
    out["shared"] = int(metadata.get("shared", 0) or 0)
    out["ptxas_log"] = ptxas_log.strip()
    out["res_usage"] = res_usage.strip()
    return out
