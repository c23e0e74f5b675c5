"""Schedules over the computation model (analysis/computation): each module re-emits a kernel of one class
(elementwise, row/column reduction, accumulation of products over K, attention, scan, ...) as readable Triton,
keeping the user's names, signature, comments and epilogue, with its parameters left to config search.
Each module defines `RECIPE` (keys `(ANY_KERNEL,)`) and declines, with the reason, for kernels it does not fit."""
