"""Front-end functions generated from the op registry (the idea of MXNet's `register.py`).

Each op family declares the names its operators are exposed under (`registry.expose`); a
front-end package (`np`, `np.linalg`, `npx`) calls `install` to define every exposed function that
carries a signature, and reaches the ops its hand-written wrappers need with `op("np.add:scalar")`.
No front-end spells an internal op name (`_npi_*`, `_npx_*`, `_contrib_*`).
"""
from __future__ import annotations

import ast
import inspect
from typing import Any, Callable

from .dispatch import invoke
from .ops.registry import OpDef, front_ends, front_op

op = front_op    # the handle: `op("np.tril")` is the OpDef behind np.tril

_POS = inspect.Parameter.POSITIONAL_OR_KEYWORD


def _signature(spec: str) -> tuple[inspect.Signature, list[str]]:
    """`"m, k=0, **kwargs"` → (Python signature, input parameter names)."""
    args = ast.parse(f"def f({spec}): pass").body[0].args
    plain = args.args[:len(args.args) - len(args.defaults)]
    params = [inspect.Parameter(p.arg, _POS) for p in plain]
    params += [inspect.Parameter(p.arg, _POS, default=ast.literal_eval(d))
               for p, d in zip(args.args[len(plain):], args.defaults)]
    if args.kwarg is not None:
        params.append(inspect.Parameter(args.kwarg.arg, inspect.Parameter.VAR_KEYWORD))
    return inspect.Signature(params), [p.arg for p in plain]


def build(qualname: str, opdef: OpDef, spec: str, convert: Callable[[Any], Any]) -> Callable:
    """A function `qualname(<spec>)` calling `opdef`: its inputs pass through `convert`, its
    other (non-`**`) parameters become the op's attributes, parsed by the op's schema."""
    sig, inputs = _signature(spec)
    attrs = [p.name for p in sig.parameters.values()
             if p.kind is _POS and p.name not in inputs]

    def fn(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        a = bound.arguments
        return invoke(opdef, [convert(a[n]) for n in inputs], {k: a[k] for k in attrs})

    fname = qualname.rpartition(".")[2]
    fn.__name__ = fn.__qualname__ = fname
    fn.__signature__ = sig
    fn.__doc__ = f"`{qualname}{sig}` (operator `{opdef.name}`). {opdef.doc}".strip()
    return fn


def install(namespace: str, scope: dict, convert: Callable[[Any], Any]) -> list[str]:
    """Define in `scope` every function exposed in `namespace` with a signature; their names."""
    names = []
    for fname, (opdef, spec) in front_ends(namespace).items():
        if spec is not None:
            scope[fname] = build(f"{namespace}.{fname}", opdef, spec, convert)
            names.append(fname)
    return names


def ops(namespace: str, role: str) -> dict[str, OpDef]:
    """`{function: op}` for the names exposed in `namespace` with `role` (`np`, `unary`)."""
    return {f: o for f, (o, _) in front_ends(namespace, role).items()}
