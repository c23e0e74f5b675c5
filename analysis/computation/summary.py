"""The model of a kernel in words: for the LLM proposer's prompt, hovers and reports."""

from __future__ import annotations

from .classify import Kind, classify
from .model import Access, Computation


def access_text(a: Access, comp: Computation) -> str:
    if a.offset is None:
        return f"{a.kind} {a.tensor} (line {a.line}): address not modelled ({a.why or 'not affine'})"
    terms = []
    for var, coeff in a.offset.coeffs:
        v = comp.var(var)
        label = v.label or (f"lanes of {v.extent}" if v and v.kind == "lane" else var) if v else var
        k = coeff.constant
        terms.append(f"{label}" if k == 1 else f"{label}*({coeff})")
    where = " + ".join(terms) or "0"
    extra = []
    if a.masked:
        extra.append("masked")
    if a.data_dependent:
        extra.append("address from loaded values")
    if a.in_loops:
        extra.append("in loop")
    contig = a.contiguous()
    cv = comp.var(contig) if contig else None
    extra.append(f"contiguous along {cv.label or 'lanes of ' + cv.extent}" if cv else "no stride-1 axis known")
    return f"{a.kind} {a.tensor}[{where}] (line {a.line}; {', '.join(extra)})"


def describe(comp: Computation, kind: Kind | None = None) -> str:
    """A short Markdown summary: what is computed, the accesses, and the schedule the model points to."""
    kind = kind or classify(comp)
    lines = [f"- computes: **{kind.name}** ({'; '.join(kind.reasons)})"]
    loops = [v for v in comp.index_vars if v.kind == "loop"]
    programs = [v.name for v in comp.index_vars if v.kind == "program" and "(" not in v.name]
    lines.append(f"- iteration space: programs {', '.join(programs) or 'none'}; loops "
                 f"{', '.join(f'{v.label or v.name} over {v.extent}' for v in loops) or 'none'}; "
                 f"{sum(1 for v in comp.index_vars if v.kind == 'lane')} tl.arange lane(s)")
    for a in comp.accesses[:8]:
        lines.append(f"- {access_text(a, comp)}")
    if len(comp.accesses) > 8:
        lines.append(f"- ... {len(comp.accesses) - 8} more accesses")
    for acc in comp.accumulations[:4]:
        op = "select (replaced under a condition each step, as an argmax's best value and index)" \
            if acc.op == "select" else acc.op
        lines.append(f"- loop-carried `{acc.var}`: {op}" + (f" of products of {', '.join(acc.product_of)}"
                                                           if acc.product_of else ""))
    if comp.epilogue:
        lines.append(f"- after the loop: {' -> '.join(comp.epilogue)} (the epilogue to keep fused)")
    if comp.helpers_inlined:
        lines.append(f"- helpers inlined: {', '.join(comp.helpers_inlined)}")
    lines.append(f"- schedule the model points to: {kind.schedule}")
    if comp.unmodelled:
        lines.append(f"- not modelled: {'; '.join(comp.unmodelled[:4])}")
    return "\n".join(lines)
