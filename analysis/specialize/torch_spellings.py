"""What torch spellings say about a tensor, as tables: dtype names, tensor factories and their shape arguments,
methods that keep or change the dtype and layout, and methods that return ints."""

from __future__ import annotations

import ast
from typing import Any

TORCH_DTYPES = {
    "float16": "fp16",
    "half": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float": "fp32",
    "float64": "fp64",
    "double": "fp64",
    "int8": "i8",
    "int16": "i16",
    "short": "i16",
    "int32": "i32",
    "int": "i32",
    "int64": "i64",
    "long": "i64",
    "uint8": "u8",
    "bool": "i1",
    "float8_e4m3fn": "fp8e4nv",
    "float8_e5m2": "fp8e5",
}


# torch factory -> dtype when no dtype= is given (torch's defaults)
TENSOR_FACTORIES = {
    "empty": "fp32",
    "zeros": "fp32",
    "ones": "fp32",
    "randn": "fp32",
    "rand": "fp32",
    "full": None,  # depends on the fill value
    "empty_strided": "fp32",
    "randint": "i64",
    "arange": None,
    "tensor": None,
    "randperm": "i64",
}


LIKE_FACTORIES = (
    "empty_like",
    "zeros_like",
    "ones_like",
    "randn_like",
    "rand_like",
    "full_like",
    "randint_like",
)


CAST_METHODS = {
    "half": "fp16",
    "float": "fp32",
    "double": "fp64",
    "bfloat16": "bf16",
    "int": "i32",
    "long": "i64",
}


SHAPED_FACTORIES = ("empty", "zeros", "ones", "randn", "rand")  # positional args are the dims
SAME_LAYOUT_METHODS = ("contiguous", "clone", "cuda", "npu", "detach")  # same dtype, shape and strides
SAME_DTYPE_METHODS = (
    "view",
    "reshape",
    "t",
    "transpose",
    "permute",
    "flatten",
    "clone",
    "cuda",
    "npu",
    "detach",
    "expand",
    "squeeze",
    "unsqueeze",
)


MATMUL_FUNCTIONS = ("matmul", "mm", "bmm", "linear")  # torch.<name>(a, b), F.linear(x, w), a.matmul(b): result shapes
# how torch and its functional module are spelled at a call (`th` is a common alias)
TORCH_MODULES = ("torch", "th", "F", "nn.functional", "torch.nn.functional")
PERMUTE_METHODS = ("t", "transpose", "swapaxes", "swapdims", "permute")  # views: dims (and strides) reordered
NEW_METHODS = ("new_empty", "new_zeros", "new_ones", "new_full", "new_tensor")  # owner's dtype unless dtype=
INT_METHODS = ("numel", "stride", "size", "item", "dim", "element_size")


def torch_dtype(expr: ast.expr | None) -> str | None:
    if isinstance(expr, ast.Attribute) and expr.attr in TORCH_DTYPES:
        return TORCH_DTYPES[expr.attr]
    return None


def is_shape_of(node: ast.expr) -> bool:
    if isinstance(node, ast.Attribute) and node.attr == "shape":
        return True
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "size"
        and not node.args
    )


def product(dims: tuple[Any, ...]) -> int | None:
    value = 1
    for d in dims:
        if not isinstance(d, int):
            return None
        value *= d
    return value
