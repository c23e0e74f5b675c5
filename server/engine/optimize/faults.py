"""Is a failed verification a device fault of the candidate? Pure text matching over what the runner says.

A candidate that reads or writes out of bounds kills its process (SIGSEGV under the CPU interpreter, SIGABRT from
a driver) or leaves a sticky CUDA error ("an illegal memory access was encountered") that fails every later call
in that process. Every verify job runs in a fresh worker that is stopped afterwards (ascend_runner/pool.py), and the
KernelBench candidate in a fresh process of its own (worker/verify_isolated.py), so such a fault ends only its own
job: the gate rejects the candidate at stage `fault`, naming the fault, and the loop goes on with the next one.
"""

from __future__ import annotations

import re

# Messages of a device fault (CUDA runtime / driver, Ascend runtime) or of a process killed by a signal.
_FAULTS = re.compile(
    r"illegal memory access|misaligned address|unspecified launch failure|illegal instruction|"
    r"device-side assert|CUDA error|cudaErrorIllegalAddress|CUDA_ERROR_\w+|"
    r"aclrt\w*\s+failed|EZ9999|crashed \((SIG\w+)\)|exit status -(\d+)|Segmentation fault|core dumped",
    re.IGNORECASE,
)
_SIGNALS = {"4": "SIGILL", "6": "SIGABRT", "7": "SIGBUS", "8": "SIGFPE", "11": "SIGSEGV"}


def device_fault(text: str) -> str | None:
    """The fault `text` reports ("SIGSEGV", "illegal memory access", ...), or None when it is not one.
    A process killed by SIGKILL (the out-of-memory killer, a timeout) is not a fault of the kernel."""
    for match in _FAULTS.finditer(text or ""):
        if match.group(1):
            return match.group(1) if match.group(1) != "SIGKILL" else None
        if match.group(2):
            name = _SIGNALS.get(match.group(2))
            if name:
                return name
            continue
        return match.group(0)
    return None
