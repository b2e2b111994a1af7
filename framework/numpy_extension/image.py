"""`npx.image.<name>(data, *attrs, **attrs)`: MXNet's image operators (`_image_<name>` in the
registry). Positional arguments after `data` follow the operator's attribute order, as in MXNet
(`npx.image.resize(x, size, keep_ratio, interp)`)."""
from __future__ import annotations

from ..dispatch import invoke
from ..ops.registry import get_op, has_op


def __getattr__(name: str):
    opname = f"_image_{name}"
    if name.startswith("__") or not has_op(opname):
        raise AttributeError(f"module 'framework.numpy_extension.image' has no attribute {name!r}")
    op = get_op(opname)

    def fn(data, *args, **kwargs):
        names = list(op.attrs)
        if len(args) > len(names):
            raise TypeError(f"npx.image.{name} takes at most {len(names)} attributes "
                            f"({', '.join(names)}), got {len(args)}")
        kwargs.pop("out", None)
        kwargs.pop("name", None)
        return invoke(op, [data], {**dict(zip(names, args)), **kwargs})
    fn.__name__ = name
    fn.__doc__ = op.doc
    return fn
