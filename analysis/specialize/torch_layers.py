"""The parameters of torch.nn layers a wrapper passes to a kernel (`self.conv.weight`): their shapes from the
layer's constructor arguments, as PyTorch lays them out, and their dtype from `dtype=` or a cast chained on the
layer (`.half()`). Pure: AST in, the shape's expressions and a dtype out; launch.py resolves the expressions.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..source.safe_eval import call_name
from .torch_spellings import CAST_METHODS, torch_dtype

# layer -> (rank of its kernel, transposed): nn.ConvNd weights are (out, in // groups, *k), transposed ones
# (in, out // groups, *k)
_CONVS = {
    "Conv1d": (1, False), "Conv2d": (2, False), "Conv3d": (3, False),
    "ConvTranspose1d": (1, True), "ConvTranspose2d": (2, True), "ConvTranspose3d": (3, True),
}
_CONV_ARGS = ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups")
_LINEAR_ARGS = ("in_features", "out_features")
_EMBEDDING_ARGS = ("num_embeddings", "embedding_dim")


@dataclass(frozen=True)
class LayerParameter:
    layer: str  # "Conv2d"
    dims: tuple[ast.expr, ...]  # the shape, one expression per dimension (`ast.BinOp` for in // groups)
    dtype: str | None  # Triton element type; "fp32" unless the layer says otherwise


def layer_parameter(layer: ast.expr, attr: str) -> LayerParameter | None:
    """`weight` or `bias` of `nn.Conv2d(64, 128, 3)`, `nn.Linear(a, b).half()`, `nn.Embedding(v, d)`; None for
    any other layer, attribute or a constructor whose arguments cannot be matched."""
    layer, cast = _constructor(layer)
    if layer is None:
        return None
    name = call_name(layer.func)
    keyword = {k.arg: k.value for k in layer.keywords if k.arg}
    # a cast applied to the layer wins over its `dtype=`; one not visible is no dtype (None), fp32 without either
    dtype = cast or (torch_dtype(keyword["dtype"]) if "dtype" in keyword else "fp32")
    if name in _CONVS:
        args = _arguments(layer, _CONV_ARGS, keyword)
        rank, transposed = _CONVS[name]
        if any(args.get(k) is None for k in _CONV_ARGS[:3]):
            return None
        if attr == "bias":
            return None if _false(keyword.get("bias")) else LayerParameter(name, (args["out_channels"],), dtype)
        kernel = args["kernel_size"]
        taps = tuple(kernel.elts) if isinstance(kernel, ast.Tuple) else (kernel,) * rank
        first, second = (("in_channels", "out_channels") if transposed else ("out_channels", "in_channels"))
        grouped = args[second] if args.get("groups") is None else ast.BinOp(args[second], ast.FloorDiv(),
                                                                             args["groups"])
        return LayerParameter(name, (args[first], grouped, *taps), dtype) if len(taps) == rank else None
    if name == "Linear":
        args = _arguments(layer, _LINEAR_ARGS, keyword)
        if any(args.get(k) is None for k in _LINEAR_ARGS):
            return None
        if attr == "bias":
            return None if _false(keyword.get("bias")) else LayerParameter(name, (args["out_features"],), dtype)
        return LayerParameter(name, (args["out_features"], args["in_features"]), dtype)
    if name == "Embedding" and attr == "weight":
        args = _arguments(layer, _EMBEDDING_ARGS, keyword)
        if any(args.get(k) is None for k in _EMBEDDING_ARGS):
            return None
        return LayerParameter(name, (args["num_embeddings"], args["embedding_dim"]), dtype)
    return None


# nn.ConvNd attributes PyTorch keeps as one entry per spatial dimension (`conv.dilation[0]`), and the plain ones
_CONV_TUPLES = ("kernel_size", "stride", "padding", "dilation")
_CONV_DEFAULTS = {"stride": 1, "padding": 0, "dilation": 1, "groups": 1}


def layer_attribute(layer: ast.expr, attr: str) -> ast.expr | tuple[ast.expr, ...] | None:
    """`conv.dilation` of `nn.Conv1d(c_in, c_out, 3, dilation=d)`: the constructor's expressions for it, a tuple of
    one per spatial dimension for kernel_size, stride, padding and dilation (`(d,)`), one expression for groups,
    in_channels and out_channels; None for another layer or attribute, or a string padding (`"same"`)."""
    layer, _ = _constructor(layer)
    if layer is None or call_name(layer.func) not in _CONVS:
        return None
    rank = _CONVS[call_name(layer.func)][0]
    args = _arguments(layer, _CONV_ARGS, {k.arg: k.value for k in layer.keywords if k.arg})
    value = args.get(attr)
    if value is None and attr in _CONV_DEFAULTS:
        value = ast.Constant(_CONV_DEFAULTS[attr])
    if value is None or isinstance(value, ast.Constant) and isinstance(value.value, str):
        return None
    if attr in _CONV_TUPLES:
        return tuple(value.elts) if isinstance(value, ast.Tuple) else (value,) * rank
    return value if attr in ("groups", "in_channels", "out_channels") else None


def _constructor(layer: ast.expr) -> tuple[ast.Call | None, str | None]:
    """The layer's constructor call under the methods chained on it (`.half()`, `.to(torch.bfloat16)`, `.cuda()`),
    and the dtype the last cast applied gives its parameters (None without one)."""
    dtype = None
    while isinstance(layer, ast.Call) and isinstance(layer.func, ast.Attribute) and layer.func.attr in (
            *CAST_METHODS, "to", "cuda", "cpu", "eval", "train", "requires_grad_"):
        method = layer.func.attr
        if dtype is None and method in CAST_METHODS:
            dtype = CAST_METHODS[method]
        elif dtype is None and method == "to":
            dtype = next((d for a in [*layer.args, *(k.value for k in layer.keywords)] if (d := torch_dtype(a))), None)
        layer = layer.func.value
    return (layer, dtype) if isinstance(layer, ast.Call) else (None, None)


def _arguments(call: ast.Call, names: tuple[str, ...], keyword: dict[str, ast.expr]) -> dict[str, ast.expr]:
    out = dict(zip(names, call.args, strict=False))
    out.update({k: v for k, v in keyword.items() if k in names})
    return out


def _false(value: ast.expr | None) -> bool:
    return isinstance(value, ast.Constant) and value.value is False
