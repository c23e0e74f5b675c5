"""What every TL2xx rule module shares: the platforms rules name and the references they cite (each rule is
declared next to the check that emits it)."""

from __future__ import annotations

_BOTH = ("cuda", "ascend")
_NV = ("cuda",)
_ROOFLINE = "https://docs.nvidia.com/nsight-compute/ProfilingGuide/index.html#roofline"
