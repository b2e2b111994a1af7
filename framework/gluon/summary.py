"""`Block.summary(*inputs)`: MXNet's layer table from one imperative forward with temporary hooks."""
from __future__ import annotations

from collections import OrderedDict

from ..ndarray import ndarray

_LINE = "{:>20}  {:>42} {:>15}"


def _shapes(args) -> str:
    """MXNet's shape string: nested shapes as Python lists with the outer brackets removed."""
    def conv(a):
        if isinstance(a, (list, tuple)):
            return [conv(x) for x in a]
        return a.shape if isinstance(a, ndarray) else a
    shapes = conv(args)
    s = str(shapes)[1:-1] if isinstance(shapes, list) else str(shapes)
    return s.replace("L", "")


def summary(block, *inputs) -> None:
    summary_rows: OrderedDict[str, dict] = OrderedDict()
    seen: set[int] = set()
    hooks = []

    def _hook(blk, _, outputs):
        key = f"{blk.__class__.__name__}-{len(summary_rows)}"
        row = {"output_shape": _shapes(outputs), "n_params": 0, "trainable": 0, "shared": 0}
        for p in blk.params.values():
            # the data's size, as MXNet counts: a 2.x SymbolBlock's parameters keep shape None
            size = int(p._data[0].size) if p._data else int(_prod(p.shape))
            row["n_params"] += size
            if p.grad_req != "null":
                row["trainable"] += size
            if id(p) in seen:
                row["shared"] += size
            else:
                seen.add(id(p))
        summary_rows[key] = row

    def _register(blk):
        if blk._summary_row:
            hooks.append(blk.register_forward_hook(_hook))

    def _check(blk):
        assert not getattr(blk, "_active", False), \
            f'"{blk.__class__.__name__}" must not be hybridized to print summary.'

    try:
        block.apply(_check)
        summary_rows["Input"] = {"output_shape": _shapes(list(inputs)), "n_params": 0,
                                 "trainable": 0, "shared": 0}
        block.apply(_register)
        block(*inputs)
        print("-" * 80)
        print(_LINE.format("Layer (type)", "Output Shape", "Param #"))
        print("=" * 80)
        total = trainable = shared = 0
        for layer, row in summary_rows.items():
            print(_LINE.format(layer, row["output_shape"], row["n_params"]))
            total += row["n_params"]
            trainable += row["trainable"]
            shared += row["shared"]
        print("=" * 80)
        print("Parameters in forward computation graph, duplicate included")
        print("   Total params: " + str(total))
        print("   Trainable params: " + str(trainable))
        print("   Non-trainable params: " + str(total - trainable))
        print("Shared params in forward computation graph: " + str(shared))
        print("Unique parameters in model: " + str(total - shared))
        print("-" * 80)
    finally:
        for h in hooks:
            h.detach()


def _prod(shape) -> int:
    n = 1
    for d in shape or ():
        n *= d
    return n
