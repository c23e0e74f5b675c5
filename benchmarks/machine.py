"""What a benchmark result records about the machine it ran on (imported by the benchmark scripts)."""

from __future__ import annotations

import os
import platform
import sys
from typing import Any


def machine_info(load_before: tuple[float, float, float]) -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        # Other work on the machine inflates wall times: record how busy it was.
        "load_average_at_start": load_before,
        "load_average_at_end": os.getloadavg(),
    }
