"""Flatten nested (list/tuple) arguments into a flat list plus a format, and back (MXNet's rules)."""
from __future__ import annotations

from ..ndarray import ndarray
from ..symbol.graph import Symbol


def flatten(args, inout_str: str):
    """ndarray → fmt 0; Symbol → its output count (0 if one); None → -1; list/tuple → nested."""
    if isinstance(args, ndarray):
        return [args], 0
    if isinstance(args, Symbol):
        n = len(args)
        return [args], (0 if n == 1 else n)
    if args is None:
        return [None], -1
    if not isinstance(args, (list, tuple)):
        raise ValueError(f"When hybridized, the input of HybridBlock {inout_str} must be (nested) "
                         f"list of Symbol or NDArray, but got {args} of type {type(args)}")
    flat, fmts = [], []
    for a in args:
        f, fmt = flatten(a, inout_str)
        flat.extend(f)
        fmts.append(fmt)
    return flat, fmts


def regroup(args, fmt):
    """Inverse of `flatten`: returns (structure, remaining args)."""
    if isinstance(fmt, int):
        if fmt == 0:
            return args[0], args[1:]
        if fmt == -1:
            if args[0] is not None:
                raise ValueError("We do not support passing types that are not None when the "
                                 "initial HybridBlock has received NoneType and has been hybridized. "
                                 f"Received arg = {args[0]}, fmt = {fmt}.")
            return None, args[1:]
        return args[:fmt], args[fmt:]
    ret = []
    for f in fmt:
        r, args = regroup(args, f)
        ret.append(r)
    return ret, args


def format_matches(new, stored) -> bool:
    """Equal, or one a prefix of the other with only trailing None (-1) entries extra."""
    if new == stored:
        return True
    if isinstance(new, list) and isinstance(stored, list):
        short, long_ = (new, stored) if len(new) < len(stored) else (stored, new)
        return long_[: len(short)] == short and all(f == -1 for f in long_[len(short):])
    return False
