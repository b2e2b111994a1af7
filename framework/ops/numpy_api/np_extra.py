"""More of MXNet 2's `np`/`npx` functions with kernels of their own: the window functions
(hanning, hamming, blackman), bincount, interp, fill_diagonal, diag_indices_from,
npx.constraint_check, and the array editors diagonal, diagflat, insert, delete, diff, ediff1d,
resize, cross and polyval. Dtypes follow MXNet 2.0 (checked against 2.0.0b1)."""
from __future__ import annotations

import numpy as np

from ...base import OperatorError
from ..common import F32, I64, norm_axis
from ..attrs import Bool, DType, Float, FloatTuple, Int, Shape, Str
from ..registry import expose, register


def _window(name: str, fn):
    @register(f"_npi_{name}", attrs={"M": Int(), "ctx": Str(""), "dtype": DType(F32)}, inputs=(),
              infer_shape=lambda a, s: [(max(a.M, 0),)], infer_type=lambda a, d: [a.dtype or F32])
    def kernel(a):
        return fn(a.M).astype(a.dtype or F32)
    kernel.__doc__ = f"NumPy's {name} window of M points (empty for M < 1)."
    return kernel


hanning = _window("hanning", np.hanning)
hamming = _window("hamming", np.hamming)
blackman = _window("blackman", np.blackman)


def _bincount_inputs(a):
    return ("data", "weights") if a.has_weights else ("data",)


def _bincount_type(a, d):
    if a.has_weights:
        return [d[1]]
    return [d[0] if d[0] is not None and np.dtype(d[0]).kind in "iu" else I64]


@register("_npi_bincount", attrs={"minlength": Int(0), "has_weights": Bool(False)},
          inputs=_bincount_inputs, infer_type=_bincount_type,
          shape_depends_on_data=True)   # max(data) + 1 bins
def bincount(a, data, weights=None):
    """Occurrences of each non-negative integer in `data` (summed `weights` if given)."""
    if data.size and data.min() < 0:
        raise OperatorError("bincount: input data must be non-negative")
    if a.minlength < 0:
        raise OperatorError("bincount: minlength must be non-negative")
    out = np.bincount(data.astype(np.int64).ravel(), None if weights is None else weights.ravel(),
                      a.minlength)
    return out.astype(_bincount_type(a, [data.dtype] + ([weights.dtype] if a.has_weights else []))[0])


def _interp_inputs(a):
    return ("xp", "fp") if a.x_is_scalar else ("xp", "fp", "x")


@register("_npi_interp", attrs={"left": Float(None, optional=True),
                                "right": Float(None, optional=True),
                                "period": Float(None, optional=True), "x_scalar": Float(0.0),
                                "x_is_scalar": Bool(False)},
          inputs=_interp_inputs,
          infer_shape=lambda a, s: [() if a.x_is_scalar else tuple(s[2])],
          infer_type=lambda a, d: [np.dtype(np.float64)])
def interp(a, xp, fp, x=None):
    """NumPy's 1-D linear interpolation of (xp, fp) at x (float64, as MXNet)."""
    if a.period is not None and a.period == 0:
        raise OperatorError("interp: period must be a non-zero value")
    at = a.x_scalar if a.x_is_scalar else x
    return np.asarray(np.interp(at, xp, fp, a.left, a.right, a.period), np.float64)


@register("_npi_fill_diagonal", attrs={"val": FloatTuple(), "wrap": Bool(False)},
          infer_shape=lambda a, s: [tuple(s[0])])
def fill_diagonal(a, x):
    """A copy of x with its main diagonal set to `val` (repeated along it)."""
    if x.ndim < 2 or (x.ndim > 2 and len(set(x.shape)) != 1):
        raise OperatorError(f"fill_diagonal: needs a 2-D array or all dimensions equal, "
                            f"got {x.shape}")
    out = x.copy()
    np.fill_diagonal(out, np.asarray(a.val, np.float64).astype(x.dtype), a.wrap)
    return out


def _diag_shapes(a, s):
    x = tuple(s[0])
    if len(x) < 2 or len(set(x)) != 1:
        raise OperatorError(f"diag_indices_from: needs an array with all dimensions equal, got {x}")
    return [(len(x), x[0])]


@register("_npi_diag_indices_from", infer_shape=_diag_shapes, infer_type=lambda a, d: [I64])
def diag_indices_from(a, x):
    """The indices of the main diagonal: an (ndim, n) int64 array, one row per dimension."""
    _diag_shapes(a, [x.shape])
    return np.stack(np.diag_indices_from(x)).astype(np.int64)


@register("_npx_constraint_check", attrs={"msg": Str("Constraint violated.")},
          infer_shape=lambda a, s: [()], infer_type=lambda a, d: [np.dtype(bool)])
def constraint_check(a, x):
    """True, or ValueError(msg) when any element of the boolean input is false."""
    if not np.all(x):
        raise OperatorError(a.msg)
    return np.asarray(True)


# -- array editors -----------------------------------------------------------------------------
def _diagonal_shape(a, s):
    x = tuple(s[0])
    ax1, ax2 = a.axis1 % len(x), a.axis2 % len(x)
    if ax1 == ax2:
        raise OperatorError("diagonal: axis1 and axis2 cannot be the same")
    n, m = x[ax1], x[ax2]
    k = max(0, min(n, m - a.offset) if a.offset >= 0 else min(n + a.offset, m))
    return [tuple(d for i, d in enumerate(x) if i not in (ax1, ax2)) + (k,)]


@register("_npi_diagonal", attrs={"offset": Int(0), "axis1": Int(0), "axis2": Int(1)},
          infer_shape=_diagonal_shape)
def diagonal(a, x):
    """The `offset` diagonal of the (axis1, axis2) planes, as a new array (NumPy's is a view)."""
    if x.ndim < 2:
        raise OperatorError(f"diagonal: needs at least 2 dimensions, got shape {x.shape}")
    return np.diagonal(x, a.offset, a.axis1, a.axis2).copy()


def _diagflat_shape(a, s):
    n = int(np.prod(s[0])) + abs(a.k)
    return [(n, n)]


@register("_npi_diagflat", attrs={"k": Int(0)}, infer_shape=_diagflat_shape)
def diagflat(a, x):
    """A 2-D array with the flattened input on its k-th diagonal."""
    return np.diagflat(x, a.k)


_EDIT_ATTRS = {"start": Int(None, optional=True), "stop": Int(None, optional=True),
               "step": Int(None, optional=True), "int_ind": Int(None, optional=True),
               "axis": Int(None, optional=True)}


def _where(a, obj=None):
    if obj is not None:
        return obj.astype(np.int64)
    if a.int_ind is not None:
        return a.int_ind
    return slice(a.start, a.stop, a.step)


def _edit_axis(a, shape: tuple) -> tuple[list, int]:
    """The array as the editors see it (flat when `axis` is None) and the edited axis."""
    if a.axis is None:
        return [int(np.prod(shape))], 0
    return list(shape), norm_axis(a.axis, len(shape), "insert/delete")


def _n_inserted(a, s: list, by_tensor: bool) -> int:
    """How many entries NumPy's insert adds along the axis: one index (an `int_ind` or a 0-d
    `obj`) inserts `values`' leading dimension, several insert one entry each."""
    arr, ax = _edit_axis(a, s[0])
    obj = tuple(s[-1]) if by_tensor else None
    if obj is not None and len(obj) > 1:
        raise OperatorError("insert: the index array must be one dimensional or scalar")
    n_idx = 1 if a.int_ind is not None else int(np.prod(obj)) if obj is not None \
        else len(range(*slice(a.start, a.stop, a.step).indices(arr[ax])))
    if n_idx != 1:
        return n_idx
    vals = () if a.val is not None else tuple(s[1])
    vals = (1,) * (len(arr) - len(vals)) + vals          # NumPy's ndmin=arr.ndim
    scalar_index = a.int_ind is not None or (obj is not None and len(obj) == 0)
    return vals[0] if scalar_index else vals[ax]         # a 0-d index moves axis 0 to `axis`


def _insert_shape(by_tensor: bool):
    def infer(a, s):
        arr, ax = _edit_axis(a, s[0])
        arr[ax] += _n_inserted(a, s, by_tensor)
        return [tuple(arr)]
    return infer


def _delete_shape(a, s):
    arr, ax = _edit_axis(a, s[0])
    where = a.int_ind if a.int_ind is not None else slice(a.start, a.stop, a.step)
    arr[ax] = len(np.delete(np.arange(arr[ax]), where))   # index arithmetic on one axis only
    return [tuple(arr)]


def _insert(a, x, values, obj=None):
    v = values if a.val is None else np.asarray(a.val)
    return np.insert(x, _where(a, obj), v.astype(x.dtype), axis=a.axis)


_INSERT_ATTRS = {**_EDIT_ATTRS, "val": Float(None, optional=True)}


@register("_npi_insert_scalar", attrs=dict(_INSERT_ATTRS), infer_shape=_insert_shape(False),
          inputs=lambda a: ("arr",) if a.val is not None else ("arr", "values"))
def insert_scalar(a, x, values=None):
    """`values` inserted before the integer index `int_ind` along `axis` (flat when None)."""
    return _insert(a, x, values)


@register("_npi_insert_slice", attrs=dict(_INSERT_ATTRS), infer_shape=_insert_shape(False),
          inputs=lambda a: ("arr",) if a.val is not None else ("arr", "values"))
def insert_slice(a, x, values=None):
    """`values` inserted before the indices of slice(start, stop, step) along `axis`."""
    return _insert(a, x, values)


@register("_npi_insert_tensor", attrs=dict(_INSERT_ATTRS), infer_shape=_insert_shape(True),
          inputs=lambda a: ("arr", "obj") if a.val is not None else ("arr", "values", "obj"))
def insert_tensor(a, x, *rest):
    """`values` inserted before the indices held in the `obj` array along `axis`."""
    values, obj = (None, rest[0]) if a.val is not None else rest
    return _insert(a, x, values, obj)


def _delete_by_tensor(a) -> bool:
    return a.int_ind is None and a.start is None and a.stop is None and a.step is None


@register("_npi_delete", attrs=dict(_EDIT_ATTRS), infer_shape=_delete_shape,
          # indices held in a tensor: repeated ones delete once, so the values decide
          shape_depends_on_data=_delete_by_tensor,
          inputs=lambda a: ("arr", "obj") if _delete_by_tensor(a) else ("arr",))
def delete(a, x, obj=None):
    """x without the sub-arrays at the given indices along `axis` (flattened when None)."""
    return np.delete(x, _where(a, obj), axis=a.axis)


def _diff_shape(a, s):
    x = list(s[0])
    ax = a.axis % len(x)
    x[ax] = max(0, x[ax] - a.n)
    return [tuple(x)]


@register("_npi_diff", attrs={"n": Int(1), "axis": Int(-1)}, infer_shape=_diff_shape)
def diff(a, x):
    """The n-th discrete difference along `axis`."""
    if a.n < 0:
        raise OperatorError(f"diff: order must be non-negative but got {a.n}")
    return np.diff(x, a.n, a.axis)


def _ediff1d_shape(a, s):
    rest = iter(s[1:])
    ends = [int(np.prod(next(rest))) if given else int(scalar is not None)
            for given, scalar in ((a.to_begin_arr_given, a.to_begin_scalar),
                                  (a.to_end_arr_given, a.to_end_scalar))]
    return [(max(int(np.prod(s[0])) - 1, 0) + sum(ends),)]


def _ediff1d_inputs(a):
    return ("input1",) + (("input2",) if a.to_begin_arr_given else ()) + \
        (("input3",) if a.to_end_arr_given else ())


@register("_npi_ediff1d", attrs={"to_begin_arr_given": Bool(False), "to_end_arr_given": Bool(False),
                                 "to_begin_scalar": Float(None, optional=True),
                                 "to_end_scalar": Float(None, optional=True)},
          inputs=_ediff1d_inputs, infer_shape=_ediff1d_shape)
def ediff1d(a, x, *ends):
    """Differences of consecutive elements of the flattened input, with optional ends."""
    ends = list(ends)
    begin = ends.pop(0) if a.to_begin_arr_given else a.to_begin_scalar
    end = ends.pop(0) if a.to_end_arr_given else a.to_end_scalar
    d = np.diff(x.ravel())
    parts = [np.asarray(p, x.dtype).ravel() for p in (begin,) if p is not None]
    parts += [d] + [np.asarray(p, x.dtype).ravel() for p in (end,) if p is not None]
    return np.concatenate(parts).astype(x.dtype)


@register("_npi_resize_fallback", attrs={"new_shape": Shape()},
          infer_shape=lambda a, s: [tuple(a.new_shape)])
def resize(a, x):
    """x's flattened elements repeated or cut to fill `new_shape` (NumPy's np.resize)."""
    if any(d < 0 for d in a.new_shape):
        raise OperatorError("resize: all elements of `new_shape` must be non-negative")
    return np.resize(x, a.new_shape)


def _cross_shape(a, s):
    x, y = list(s[0]), list(s[1])
    if not x or not y:
        raise OperatorError("cross: the operands need at least one dimension")
    la = x.pop(norm_axis(a.axisa, len(x), "cross"))
    lb = y.pop(norm_axis(a.axisb, len(y), "cross"))
    if la not in (2, 3) or lb not in (2, 3):
        raise OperatorError(f"cross: the vectors must have 2 or 3 components, got {la} and {lb}")
    lead = list(np.broadcast_shapes(tuple(x), tuple(y)))
    if la == lb == 2:
        return [tuple(lead)]
    lead.insert(norm_axis(a.axisc, len(lead) + 1, "cross"), 3)
    return [tuple(lead)]


@register("_npi_cross", inputs=("a", "b"), infer_shape=_cross_shape,
          attrs={"axisa": Int(-1), "axisb": Int(-1), "axisc": Int(-1)})
def cross(a, x, y):
    """Cross product of 2- or 3-vectors along axisa / axisb, written along axisc."""
    return np.asarray(np.cross(x, y, a.axisa, a.axisb, a.axisc))


@register("_npi_polyval", inputs=("p", "x"), infer_shape=lambda a, s: [tuple(s[1])])
def polyval(a, p, x):
    """The polynomial with coefficients p (highest power first) at x (Horner's scheme)."""
    if p.ndim != 1:
        raise OperatorError(f"polyval: p must be 1-D, got shape {p.shape}")
    return np.asarray(np.polyval(p, x)).astype(np.result_type(p.dtype, x.dtype))


# -- front-ends: the names framework.np / npx expose these operators under ---------------------
for _fn in ("bincount", "blackman", "hamming", "hanning", "cross", "delete", "diag_indices_from",
            "diff", "ediff1d", "fill_diagonal", "interp", "polyval"):
    expose(f"_npi_{_fn}", f"np.{_fn}")
expose("_npi_diagflat", "np.diagflat(v, k=0)")
expose("_npi_diagonal", "np.diagonal(a, offset=0, axis1=0, axis2=1)")
expose("_npi_insert_scalar", "np.insert:int")       # obj an int
expose("_npi_insert_slice", "np.insert:slice")
expose("_npi_insert_tensor", "np.insert:array")
expose("_npi_resize_fallback", "np.resize")
expose("_npx_constraint_check", "npx.constraint_check(input, msg='Constraint violated.')")
