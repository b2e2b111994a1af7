"""Reshape family: 1.x `Reshape` (codes 0,-1,-2,-3,-4, `reverse`), 2.x `_npx_reshape` (codes
-1..-6), `_np_reshape` (NumPy), `Flatten`, `reshape_like`. All return views when NumPy can."""
from __future__ import annotations

from ...base import ShapeError
from .. import legacy_forms
from ..attrs import Bool, Int, Shape, Str
from ..lowering import Unsupported, lowers
from ..registry import expose, register


def _prod(s) -> int:
    p = 1
    for d in s:
        p *= int(d)
    return p


def _fill_unknown(op, src, out, unknown):
    total = _prod(src)
    if unknown is not None:
        known = _prod(d for i, d in enumerate(out) if i != unknown)
        if known == 0 or total % known:
            raise ShapeError(f"{op}: cannot reshape array of shape {tuple(src)} into {tuple(out)}")
        out[unknown] = total // known
    if _prod(out) != total:
        raise ShapeError(f"{op}: cannot reshape array of size {total} (shape {tuple(src)}) "
                         f"into shape {tuple(out)}")
    return tuple(int(d) for d in out)


def legacy_reshape_shape(src, spec, reverse=False) -> tuple:
    """Target shape of 1.x `Reshape(shape=spec, reverse=…)` on an input of shape `src`."""
    src = list(src)
    spec = list(spec)
    if reverse:
        src.reverse()
        spec.reverse()
    out: list[int] = []
    unknown = None
    i = j = 0
    while j < len(spec):
        p = spec[j]
        if p > 0:
            out.append(p)
            i += 1
        elif p == 0:
            if i >= len(src):
                raise ShapeError(f"Reshape: code 0 at position {j} has no input dim to copy")
            out.append(src[i])
            i += 1
        elif p == -1:
            if unknown is not None:
                raise ShapeError("Reshape: one and only one dim can be inferred")
            unknown = len(out)
            out.append(1)
            i += 1
        elif p == -2:
            out.extend(src[i:])
            i = len(src)
        elif p == -3:
            if i + 1 >= len(src):
                raise ShapeError("Reshape: code -3 needs two input dims")
            out.append(src[i] * src[i + 1])
            i += 2
        elif p == -4:
            if j + 2 >= len(spec) or i >= len(src):
                raise ShapeError("Reshape: code -4 needs two following values")
            d0, d1, d2 = src[i], spec[j + 1], spec[j + 2]
            j += 2
            if d1 == -1:
                d1 = d0 // d2
            if d2 == -1:
                d2 = d0 // d1
            if d1 * d2 != d0:
                raise ShapeError(f"Reshape: split dims {d1}, {d2} do not divide {d0}")
            out += [d1, d2]
            i += 1
        else:
            raise ShapeError(f"Reshape: invalid shape code {p}")
        j += 1
    shape = list(_fill_unknown("Reshape", src, out, unknown))
    if reverse:
        shape.reverse()
    return tuple(shape)


def npx_reshape_shape(src, spec, reverse=False) -> tuple:
    """Target shape of 2.x `npx.reshape(newshape=spec)` (codes -1..-6) on shape `src`."""
    src = list(src)
    spec = list(spec)
    if reverse:
        src.reverse()
        spec.reverse()
    if all(p >= 0 for p in spec):
        out = list(spec)
        return tuple(_fill_unknown("reshape", src, out, None)[::-1 if reverse else 1])
    out: list[int] = []
    unknown = None
    i = j = 0
    while j < len(spec):
        p = spec[j]
        if p == -1:
            if unknown is not None:
                raise ShapeError("reshape: one and only one dim can be inferred")
            unknown = len(out)
            out.append(1)
            i += 1
        elif p == -2:
            if i >= len(src):
                raise ShapeError(f"reshape: code -2 at position {j}: no input dim left")
            out.append(src[i])
            i += 1
        elif p == -3:
            if i >= len(src) or src[i] != 1:
                raise ShapeError("reshape: -3 index should only be used to skip dimension size 1")
            i += 1
        elif p == -4:
            out.extend(src[i:])
            i = len(src)
        elif p == -5:
            if i + 1 >= len(src):
                raise ShapeError("reshape: not enough dimensions left for the product (-5)")
            out.append(src[i] * src[i + 1])
            i += 2
        elif p == -6:
            if j + 2 >= len(spec) or i >= len(src):
                raise ShapeError("reshape: -6 needs an input dim and two following values")
            d0, d1, d2 = src[i], spec[j + 1], spec[j + 2]
            i += 1
            j += 2
            if d1 == -1 and d2 == -1:
                raise ShapeError("reshape: split dims cannot both be -1")
            if d1 == -1:
                d1 = d0 // d2
            if d2 == -1:
                d2 = d0 // d1
            if d1 * d2 != d0:
                raise ShapeError(f"reshape: split dims {d1}, {d2} do not divide original dim {d0}")
            out += [d1, d2]
        elif p >= 0:
            out.append(p)
            i += 1
        else:
            raise ShapeError(f"reshape: dimension size must be greater than -6, received {p}")
        j += 1
    shape = list(_fill_unknown("reshape", src, out, unknown))
    if reverse:
        shape.reverse()
    return tuple(shape)


def np_reshape_shape(src, spec) -> tuple:
    out = list(spec)
    unknown = None
    for k, d in enumerate(out):
        if d == -1:
            if unknown is not None:
                raise ShapeError("reshape: can only specify one unknown dimension")
            unknown = k
            out[k] = 1
        elif d < 0:
            raise ShapeError(f"reshape: invalid dimension {d}")
    return _fill_unknown("reshape", src, out, unknown)


def _reshape(x, shape, order="C"):
    if x.shape == shape:
        return x.view()
    return x.reshape(shape, order=order)


# -- 1.x Reshape --------------------------------------------------------------------------------
def _legacy_target(a, src):
    if a.shape is not None and len(a.shape):
        return legacy_reshape_shape(src, a.shape, a.reverse)
    if a.target_shape is not None and len(a.target_shape):
        return legacy_reshape_shape(src, [0 if d == 0 else d for d in a.target_shape])
    raise ShapeError("Reshape: shape must be given")


@register("Reshape", "reshape", attrs={"shape": Shape(()), "reverse": Bool(False),
                                       "target_shape": Shape(()), "keep_highest": Bool(False)},
          infer_shape=lambda a, s: [_legacy_target(a, s[0])], strict=True)
def reshape_legacy(a, x):
    """1.x Reshape: 0 copy, -1 infer, -2 copy the rest, -3 merge two, -4 split one."""
    return _reshape(x, _legacy_target(a, x.shape))


# -- 2.x ------------------------------------------------------------------------------------------
@register("_npx_reshape", attrs={"newshape": Shape(), "reverse": Bool(False), "order": Str("C")},
          infer_shape=lambda a, s: [npx_reshape_shape(s[0], a.newshape, a.reverse)], strict=True,
          legacy=legacy_forms.npx_reshape)
def npx_reshape(a, x):
    """npx.reshape: -1 infer, -2 copy, -3 drop a size-1 dim, -4 copy the rest, -5 merge two,
    -6 split one into the next two values."""
    return _reshape(x, npx_reshape_shape(x.shape, a.newshape, a.reverse), a.order)


@register("_np_reshape", "_npi_reshape", attrs={"newshape": Shape(), "order": Str("C")},
          infer_shape=lambda a, s: [np_reshape_shape(s[0], a.newshape)], strict=True,
          legacy=legacy_forms.np_reshape)
def np_reshape(a, x):
    return _reshape(x, np_reshape_shape(x.shape, a.newshape), a.order)


def _flat_shape(s):
    return (s[0], _prod(s[1:])) if len(s) >= 1 else (1, 1)


@register("Flatten", "flatten", "_npx_batch_flatten", infer_shape=lambda a, s: [_flat_shape(s[0])],
          monitor_indexed_inputs=True, monitor_indexed_outputs=True, profiler_scope=True,
          quantized_as="_contrib_quantized_flatten")
def flatten(a, x):
    """(N, d1, d2…) → (N, d1·d2·…)."""
    return _reshape(x, _flat_shape(x.shape))


def _rl_shape(a, s):
    lhs, rhs = s
    lb = 0 if a.lhs_begin is None else a.lhs_begin % (len(lhs) + 1) if a.lhs_begin < 0 else a.lhs_begin
    le = len(lhs) if a.lhs_end is None else (a.lhs_end + len(lhs) if a.lhs_end < 0 else a.lhs_end)
    rb = 0 if a.rhs_begin is None else (a.rhs_begin + len(rhs) if a.rhs_begin < 0 else a.rhs_begin)
    re = len(rhs) if a.rhs_end is None else (a.rhs_end + len(rhs) if a.rhs_end < 0 else a.rhs_end)
    out = tuple(lhs[:lb]) + tuple(rhs[rb:re]) + tuple(lhs[le:])
    if _prod(out) != _prod(lhs):
        raise ShapeError(f"reshape_like: cannot reshape {tuple(lhs)} like {tuple(rhs)}")
    return [out]


@register("reshape_like", "_npx_reshape_like", inputs=("lhs", "rhs"),
          attrs={"lhs_begin": Int(None), "lhs_end": Int(None), "rhs_begin": Int(None),
                 "rhs_end": Int(None)}, infer_shape=_rl_shape, strict=True)
def reshape_like(a, x, y):
    """Reshape lhs to the shape of rhs (or of the given dim ranges)."""
    return _reshape(x, _rl_shape(a, [x.shape, y.shape])[0])


# -- ONNX lowering ------------------------------------------------------------------------------


@lowers(flatten)
def _flatten_onnx(ctx, node, ins):
    return ctx.op("Flatten", ins, axis=1)


@lowers(reshape_legacy, npx_reshape, np_reshape, reshape_like)
def _reshape_onnx(ctx, node, ins):
    """Every reshape code resolves statically; axes that follow the batch are left to ONNX."""
    if getattr(node.parsed, "order", "C") != "C":
        raise Unsupported("reshape in Fortran order")
    target = ctx.reshape_target()
    allowzero = 1 if 0 in ctx.out_shape() else None
    return ctx.op("Reshape", [ins[0], target], allowzero=allowzero)


# -- front-ends: the names framework.np / npx expose these operators under ---------------------
expose("_npx_reshape", "npx.reshape", "np.reshape")
expose("Flatten", "npx.batch_flatten(data)")
