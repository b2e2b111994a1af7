"""`mxnet.ndarray.numpy._internal`: `_npi.<name>(*inputs, **attrs)` runs the registry's
`_npi_<name>` operator."""
from framework.dispatch import invoke
from framework.ops.registry import has_op


def __getattr__(name: str):
    opname = f"_npi_{name}"
    if name.startswith("__") or not has_op(opname):
        raise AttributeError(f"no operator {opname}")

    def fn(*inputs, out=None, **attrs):
        return invoke(opname, list(inputs), attrs)
    return fn
