"""The distribution plot (PNG): speedup over the first draft per task, sorted, on a log scale, with the
geometric mean and the 2x / 5x lines; beside it the final kernel against torch.compile. Needs matplotlib
(`pip install 'tritonlens[bench]'`); without it the report says so and has no plot."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def write_plot(records: list[dict[str, Any]], summary: dict[str, Any], path: Path) -> str | None:
    """Write the PNG; returns None, or why no plot was written."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "no plot: matplotlib is not installed (pip install 'tritonlens[bench]')"
    timed = sorted(
        (r for r in records if r.get("status") == "done" and r.get("timing_meaningful")),
        key=lambda r: r["speedup"],
    )
    if not timed:
        return "no plot: no task was timed"
    fig, (left, right) = plt.subplots(1, 2, figsize=(14, 6), gridspec_kw={"width_ratios": [3, 2]})
    names = [Path(r["task"]).stem for r in timed]
    left.bar(range(len(timed)), [r["speedup"] for r in timed], color="#3b75af")
    left.set_yscale("log")
    left.set_xticks(range(len(timed)), names, rotation=80, fontsize=7)
    for y, style in ((2, ":"), (5, "--")):
        left.axhline(y, color="grey", linestyle=style, linewidth=1)
    if summary.get("geomean_speedup"):
        left.axhline(summary["geomean_speedup"], color="#c44e52", linewidth=1.5,
                     label=f"geometric mean {summary['geomean_speedup']:.2f}x")
        left.legend(loc="upper left")
    left.set_ylabel("speedup over the first draft (log)")
    left.set_title(f"tritonlens bench: {len(timed)} tasks")
    vs = sorted(r["vs_compile"] for r in timed if r.get("vs_compile"))
    if vs:
        right.hist(vs, bins=min(20, max(5, len(vs) // 2)), color="#55a868")
        right.axvline(1.0, color="black", linewidth=1)
        right.set_xlabel("final kernel time vs torch.compile (>1: faster)")
        right.set_title("against torch.compile")
    else:
        right.text(0.5, 0.5, "torch.compile not measured", ha="center", va="center")
        right.set_axis_off()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None
