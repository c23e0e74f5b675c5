"""What a kernel computes, independent of how it is written (issue 22's model).

`lift_kernel(module, kernel)` -> `Computation` (model.py): the iteration space (program ids, loop iterations,
`tl.arange` lanes), every load and store as an affine index map over it (symbolic strides), the dataflow
(elementwise ops, reductions and their axis, dot and product accumulations, scans) and what could not be
modelled, with reasons. `classify` names it and the schedule it points to; `describe` says it in words.
Pure functions over the AST: no import of the user's code.
"""

from .classify import Kind, classify
from .lift import lift_kernel
from .model import Access, Accumulation, Computation, IndexVar, Op
from .summary import describe

__all__ = ["Access", "Accumulation", "Computation", "IndexVar", "Kind", "Op", "classify", "describe", "lift_kernel"]
