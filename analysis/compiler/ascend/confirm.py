"""Confirm (or not) the ttadapter-based TL40x findings with what BiSheng's pipeline did (the hivm stage).

TL401 (a gather/scatter became a scalar loop) and TL402 (integer tile ops the vector unit cannot run) are read
from triton-ascend's ttadapter and its guide. When the hivm stage ran, a TL408 on the same line is the compiler
showing the scalar code: it is folded into the finding as evidence (`data["confirmed_by"]`). A TL402 with no
scalar code on its line in the final HIVM module is refuted: bishengir kept a vector op there, so it is dropped.
A TL408 single-element access outside every loop of the IR is a one-time per-program load (metadata, a
scale): it confirms a TL401/TL402 on its line but is not shown on its own.
"""

from __future__ import annotations

from dataclasses import replace

from ...core.findings import Finding
from .access import DISCRETE_ACCESS, INT_VECTOR_DEGRADED
from .grid_and_loops import STATIC_RANGE_UNROLLED
from .hivm import SCALAR_FALLBACK, HivmReport

CONFIRMABLE = (DISCRETE_ACCESS.code, INT_VECTOR_DEGRADED.code)


def confirm_with_hivm(findings: list[Finding], hivm: HivmReport) -> list[Finding]:
    scalar: dict[int, list[Finding]] = {}
    for f in findings:
        if f.code == SCALAR_FALLBACK.code:
            scalar.setdefault(f.span.line, []).append(f)
    folded: set[int] = set()
    out: list[Finding] = []
    for f in findings:
        if f.code in CONFIRMABLE:
            hits = scalar.get(f.span.line, [])
            if hits:
                folded.add(f.span.line)
                f = replace(
                    f,
                    message=f"{f.message} Confirmed by bishengir: {_what(hits)}.",
                    evidence=(*f.evidence, *(e for h in hits for e in h.evidence)),
                    data={**f.data, "confirmed_by": "bishengir", "hivm": [h.data for h in hits]},
                )
            elif f.code == INT_VECTOR_DEGRADED.code and hivm.final_module:
                continue  # bishengir kept a vector op on this line: the compiler's own evidence refutes it
        elif f.code == STATIC_RANGE_UNROLLED.code and hivm.ran and "multibuffered" in hivm.summary:
            f = _multibuffer_verdict(f, hivm.summary["multibuffered"])
        out.append(f)
    return [
        f
        for f in out
        if not (f.code == SCALAR_FALLBACK.code and (f.span.line in folded or f.data.get("in_loop") is False))
    ]


def _multibuffer_verdict(f: Finding, marks: list[dict]) -> Finding:
    """TL406 says the unrolled loads lose multibuffering: MarkMultiBuffer's marks say whether they did."""
    loads = set(f.data.get("load_lines") or ())
    marked = sorted({m["line"] for m in marks if m.get("line") in loads})
    if marked:
        note = f" bishengir's MarkMultiBuffer still double-buffered the loads on line(s) {marked}."
        return replace(
            f, message=f.message + note, data={**f.data, "confirmed_by": None, "multibuffered": marked}
        )
    note = " Confirmed by bishengir: MarkMultiBuffer marked none of these loads for multibuffering."
    return replace(
        f, message=f.message + note, data={**f.data, "confirmed_by": "bishengir", "multibuffered": []}
    )


def _what(hits: list[Finding]) -> str:
    loops = [h.data for h in hits if h.data.get("loops")]
    if loops:
        trips = [d["trip_count"] for d in loops if d.get("trip_count")]
        n = sum(d["loops"] for d in loops)
        return f"the final HIVM module walks it in {n} scalar loop(s)" + (
            f" of {max(trips)} iterations" if trips else ""
        )
    return (
        "after InsertLoadStoreForScalar the HIVM IR still accesses global memory one element at a time here"
    )
