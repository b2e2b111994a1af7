"""Products and linear algebra: dot (1.x and `_npi_dot`), batch_dot, `_linalg_gemm`/`gemm2`,
matmul, tensordot, einsum, and a few `np.linalg` kernels (inv, det, slogdet, solve, cholesky,
svd, eigh, pinv)."""
from __future__ import annotations

import numpy as np

from ...base import ShapeError
from ..attrs import Bool, Float, Int, Shape, Str
from ..lowering import lowers
from ..registry import expose, register
from ..common import F32, is_float, norm_axes, result_dtype


def _ret(r):
    return r if type(r) is np.ndarray else np.asarray(r)


def _same(x, y):
    if x.dtype != y.dtype:
        dt = result_dtype(x.dtype, y.dtype)
        return x.astype(dt), y.astype(dt)
    return x, y


_DOT_ATTRS = {"transpose_a": Bool(False), "transpose_b": Bool(False),
              "forward_stype": Str(None, optional=True)}


def _dot_parts(a, xs, ys):
    if len(xs) == 0 or len(ys) == 0:
        return None
    if a.transpose_a:
        ka, oa = xs[0], tuple(xs[1:])
    else:
        ka, oa = xs[-1], tuple(xs[:-1])
    if a.transpose_b:
        kb, ob = ys[-1], tuple(ys[:-1])
    else:
        kb, ob = ys[0], tuple(ys[1:])
    if ka != kb:
        raise ShapeError(f"dot: shape mismatch {tuple(xs)} x {tuple(ys)} "
                         f"(transpose_a={a.transpose_a}, transpose_b={a.transpose_b})")
    return ka, oa, ob


def _dot_shape(a, s):
    xs, ys = tuple(s[0]), tuple(s[1])
    if len(xs) == 0 or len(ys) == 0:
        return [xs or ys]
    _, oa, ob = _dot_parts(a, xs, ys)
    out = oa + ob
    return [out if out else (1,)]


def _flops_dot(a, ins, outs):
    return 2 * int(np.prod(outs[0])) * int(_dot_parts(a, ins[0], ins[1])[0]) \
        if len(ins[0]) and len(ins[1]) else int(np.prod(outs[0]))


@register("dot", inputs=("lhs", "rhs"), attrs=dict(_DOT_ATTRS), infer_shape=_dot_shape,
          infer_type=lambda a, d: [result_dtype(d[0], d[1])], strict=True, flops=_flops_dot)
def dot(a, x, y):
    """1.x dot: N-d x is (prod(shape[:-1]), shape[-1]) (first axis contracted with transpose_a),
    y is (shape[0], prod(shape[1:])) (last axis with transpose_b)."""
    x, y = _same(x, y)
    if x.ndim == 0 or y.ndim == 0:
        return _ret(x * y)
    k, oa, ob = _dot_parts(a, x.shape, y.shape)
    A = x.reshape(k, -1).T if a.transpose_a else x.reshape(-1, k)
    B = y.reshape(-1, k).T if a.transpose_b else y.reshape(k, -1)
    out = np.matmul(A, B)
    return out.reshape(oa + ob if oa + ob else (1,))


def _npdot_shape(a, s):
    xs, ys = tuple(s[0]), tuple(s[1])
    if not xs or not ys:
        return [xs or ys]
    if len(ys) == 1:
        return [xs[:-1]]
    return [xs[:-1] + ys[:-2] + ys[-1:]]


@register("_npi_dot", "_np_dot", inputs=("a", "b"), infer_shape=_npdot_shape,
          infer_type=lambda a, d: [result_dtype(d[0], d[1])],
          flops=lambda a, i, o: 2 * int(np.prod(o[0])) * int(i[0][-1] if i[0] else 1))
def np_dot(a, x, y):
    """NumPy dot."""
    x, y = _same(x, y)
    return _ret(np.dot(x, y))


def _bt(x, t):
    return np.swapaxes(x, -1, -2) if t else x


def _batch_dot_shape(a, s):
    xs, ys = tuple(s[0]), tuple(s[1])
    m, k1 = (xs[-1], xs[-2]) if a.transpose_a else (xs[-2], xs[-1])
    k2, n = (ys[-1], ys[-2]) if a.transpose_b else (ys[-2], ys[-1])
    if k1 != k2 or xs[:-2] != ys[:-2]:
        raise ShapeError(f"batch_dot: shape mismatch {xs} x {ys}")
    return [xs[:-2] + (m, n)]


def _bmm_flops(a, i, o):
    xs = i[0]
    return 2 * int(np.prod(o[0])) * int(xs[-2] if a.transpose_a else xs[-1])


@register("batch_dot", "_npx_batch_dot", inputs=("lhs", "rhs"), attrs=dict(_DOT_ATTRS),
          infer_shape=_batch_dot_shape, infer_type=lambda a, d: [result_dtype(d[0], d[1])],
          strict=True, flops=_bmm_flops)
def batch_dot(a, x, y):
    """Batched matrix product over leading axes, optional transposes of the last two axes."""
    x, y = _same(x, y)
    return np.matmul(_bt(x, a.transpose_a), _bt(y, a.transpose_b))


def _gemm_mats(a, x, y):
    ax = a.axis
    if ax not in (-2, x.ndim - 2):
        x = np.moveaxis(x, ax, -2)
        y = np.moveaxis(y, ax, -2)
    return _bt(x, a.transpose_a), _bt(y, a.transpose_b)


def _gemm_shape(a, s):
    xs, ys = list(s[0]), list(s[1])
    ax = a.axis
    if ax not in (-2, len(xs) - 2):
        xs.append(xs.pop(ax))
        xs[-1], xs[-2] = xs[-2], xs[-1]
        ys.append(ys.pop(ax))
        ys[-1], ys[-2] = ys[-2], ys[-1]
    out = _batch_dot_shape(a, [tuple(xs), tuple(ys)])[0]
    if ax not in (-2, len(xs) - 2):
        out = list(out)
        out.insert(ax if ax >= 0 else len(out) + ax + 1, out.pop(-2))
        out = tuple(out)
    return [out]


_GEMM_ATTRS = {"transpose_a": Bool(False), "transpose_b": Bool(False), "alpha": Float(1.0),
               "axis": Int(-2)}


@register("_linalg_gemm2", "linalg_gemm2", "_npx_linalg_gemm2", inputs=("A", "B"),
          attrs=dict(_GEMM_ATTRS), infer_shape=_gemm_shape, strict=True, flops=_bmm_flops)
def gemm2(a, x, y):
    """alpha · op(A) · op(B) over the last two axes (`axis` = the row axis)."""
    A, B = _gemm_mats(a, x, y)
    out = np.matmul(A, B)
    if a.alpha != 1.0:
        out *= out.dtype.type(a.alpha)
    if a.axis not in (-2, x.ndim - 2):
        out = np.moveaxis(out, -2, a.axis)
    return out


@register("_linalg_gemm", "linalg_gemm", inputs=("A", "B", "C"),
          attrs={**_GEMM_ATTRS, "beta": Float(1.0)},
          infer_shape=lambda a, s: [tuple(s[2])], strict=True, flops=_bmm_flops)
def gemm(a, x, y, c):
    """alpha · op(A) · op(B) + beta · C."""
    out = gemm2.kernel(a, x, y)      # `gemm2` is its registry entry
    return out + c.dtype.type(a.beta) * c


def _matmul_shape(a, s):
    xs, ys = tuple(s[0]), tuple(s[1])
    if len(xs) == 1 and len(ys) == 1:
        return [()]
    if len(xs) == 1:
        return [ys[:-2] + ys[-1:]]
    if len(ys) == 1:
        return [xs[:-1]]
    batch = np.broadcast_shapes(xs[:-2], ys[:-2])
    return [tuple(batch) + (xs[-2], ys[-1])]


@register("_npi_matmul", inputs=("a", "b"), infer_shape=_matmul_shape,
          infer_type=lambda a, d: [result_dtype(d[0], d[1])],
          flops=lambda a, i, o: 2 * int(np.prod(o[0])) * int(i[0][-1]))
def matmul(a, x, y):
    x, y = _same(x, y)
    return _ret(np.matmul(x, y))


def _td_axes(a, xs, ys):
    return norm_axes(a.a_axes_summed, len(xs), "tensordot"), \
        norm_axes(a.b_axes_summed, len(ys), "tensordot")


def _td_shape(a, s):
    xa, ya = _td_axes(a, s[0], s[1])
    return [tuple(d for i, d in enumerate(s[0]) if i not in xa)
            + tuple(d for i, d in enumerate(s[1]) if i not in ya)]


@register("_npi_tensordot", inputs=("a", "b"),
          attrs={"a_axes_summed": Shape(), "b_axes_summed": Shape()}, infer_shape=_td_shape,
          infer_type=lambda a, d: [result_dtype(d[0], d[1])], strict=True)
def tensordot(a, x, y):
    x, y = _same(x, y)
    return _ret(np.tensordot(x, y, axes=_td_axes(a, x.shape, y.shape)))


@register("_npi_tensordot_int_axes", inputs=("a", "b"), attrs={"axes": Int()},
          infer_shape=lambda a, s: [tuple(s[0][:len(s[0]) - a.axes]) + tuple(s[1][a.axes:])],
          infer_type=lambda a, d: [result_dtype(d[0], d[1])], strict=True)
def tensordot_int(a, x, y):
    x, y = _same(x, y)
    return _ret(np.tensordot(x, y, axes=a.axes))


def _einsum_labels(term: str, shape: tuple) -> list:
    """One label per dimension of an operand; "..." covers the dims no letter names (as '.')."""
    head, dots, tail = term.partition("...")
    n_ell = len(shape) - len(head) - len(tail) if dots else 0
    if n_ell < 0 or (not dots and len(term) != len(shape)):
        raise ShapeError(f"einsum: subscripts '{term}' do not fit an operand of shape {shape}")
    return list(head) + ["."] * n_ell + list(tail)


def _promote(dtypes: list) -> np.dtype:
    dt = dtypes[0]
    for d in dtypes[1:]:
        dt = result_dtype(dt, d)
    return dt


def _einsum_shape(a, s):
    lhs, arrow, out = a.subscripts.replace(" ", "").partition("->")
    terms = lhs.split(",")
    if len(terms) != len(s):
        raise ShapeError(f"einsum: {len(terms)} subscripts for {len(s)} operands")
    size: dict[str, int] = {}
    ell: list[tuple] = []
    for term, shape in zip(terms, s):
        labels = _einsum_labels(term, tuple(shape))
        ell.append(tuple(d for l, d in zip(labels, shape) if l == "."))
        for l, d in zip(labels, shape):
            if l != "." and size.get(l, 1) not in (1, d) and d != 1:
                raise ShapeError(f"einsum: dimension '{l}' is {size[l]} and {d}")
            if l != ".":
                size[l] = max(size.get(l, 1), d)
    broadcast = np.broadcast_shapes(*ell)
    if not arrow:                    # implicit output: "..." then the letters seen once, sorted
        once = sorted(l for l in size if lhs.count(l) == 1)
        out = ("..." if any(ell) else "") + "".join(once)
    head, dots, tail = out.partition("...")
    return [tuple(size[l] for l in head) + (broadcast if dots else ())
            + tuple(size[l] for l in tail)]


@register("_npi_einsum", attrs={"num_args": Int(), "subscripts": Str(""), "optimize": Int(0)},
          inputs=lambda a: [f"data{i}" for i in range(a.num_args)], strict=True,
          infer_shape=_einsum_shape, infer_type=lambda a, d: [_promote(d)])
def einsum(a, *xs):
    """Einstein summation over `num_args` operands."""
    if len({x.dtype for x in xs}) > 1:
        dt = xs[0].dtype
        for x in xs[1:]:
            dt = result_dtype(dt, x.dtype)
        xs = [x.astype(dt) for x in xs]
    return _ret(np.einsum(a.subscripts, *xs, optimize=bool(a.optimize)))


# -- np.linalg -----------------------------------------------------------------------------------
def _f(x):
    return x if is_float(x.dtype) else x.astype(F32)


def _ftype(n: int):
    """`infer_type` of np.linalg kernels: float inputs keep their dtype, others are float32."""
    return lambda a, d: [d[0] if is_float(d[0]) else F32] * n


@register("_npi_inv", "_linalg_inverse", "linalg_inverse", infer_shape=lambda a, s: [tuple(s[0])],
          infer_type=_ftype(1))
def inv(a, x):
    return np.linalg.inv(_f(x))


@register("_npi_det", "_linalg_det", "linalg_det", infer_shape=lambda a, s: [tuple(s[0][:-2])],
          infer_type=_ftype(1))
def det(a, x):
    return _ret(np.linalg.det(_f(x)))


@register("_npi_slogdet", "_linalg_slogdet", num_outputs=2,
          infer_shape=lambda a, s: [tuple(s[0][:-2])] * 2, infer_type=_ftype(2))
def slogdet(a, x):
    s, l = np.linalg.slogdet(_f(x))
    return _ret(s), _ret(l)


@register("_npi_solve", inputs=("a", "b"), infer_shape=lambda a, s: [tuple(s[1])],
          infer_type=_ftype(1))
def solve(a, x, y):
    """`b` of one dimension less than `a` is a stack of vectors (MXNet and NumPy 1.x; NumPy 2
    reads only a 1-d `b` so)."""
    x, y = _f(x), _f(y)
    if y.ndim == x.ndim - 1 and y.ndim > 1:
        return np.linalg.solve(x, y[..., None])[..., 0]
    return np.linalg.solve(x, y)


@register("_npi_qr", num_outputs=2,
          infer_shape=lambda a, s: [tuple(s[0][:-1]) + (min(s[0][-2:]),),
                                    tuple(s[0][:-2]) + (min(s[0][-2:]), s[0][-1])],
          infer_type=_ftype(2))
def qr(a, x):
    """Reduced QR of each matrix of the stack."""
    q, r = np.linalg.qr(_f(x), mode="reduced")
    return q, r


def _tensorinv_shape(a, s):
    x = tuple(s[0])
    return [x[a.ind:] + x[:a.ind]]


@register("_npi_tensorinv", attrs={"ind": Int(2)}, infer_shape=_tensorinv_shape,
          infer_type=_ftype(1))
def tensorinv(a, x):
    """The inverse of x read as a matrix of its first `ind` axes by the rest."""
    if a.ind <= 0:
        raise ShapeError(f"tensorinv: ind must be a positive integer, got {a.ind}")
    return np.linalg.tensorinv(_f(x), a.ind)


def _tensorsolve_shape(a, s):
    order = list(range(len(s[0])))
    for k in a.a_axes:
        order.remove(k % len(s[0]))
        order.append(k % len(s[0]))
    return [tuple(s[0][i] for i in order)[len(s[1]):]]


@register("_npi_tensorsolve", inputs=("a", "b"), attrs={"a_axes": Shape(())},
          infer_shape=_tensorsolve_shape, infer_type=_ftype(1))
def tensorsolve(a, x, y):
    """x such that tensordot(a, x, x.ndim) == b; `a_axes` are moved to the end of `a` first."""
    return np.linalg.tensorsolve(_f(x), _f(y), a.a_axes or None)


@register("_npi_cholesky", "_linalg_potrf", "linalg_potrf", attrs={"lower": Bool(True)},
          infer_shape=lambda a, s: [tuple(s[0])], infer_type=_ftype(1))
def cholesky(a, x):
    c = np.linalg.cholesky(_f(x))
    return c if a.lower else np.swapaxes(c, -1, -2).copy()


@register("_npi_pinv_scalar_rcond", attrs={"rcond": Float(1e-15), "hermitian": Bool(False)},
          infer_shape=lambda a, s: [tuple(s[0][:-2]) + (s[0][-1], s[0][-2])], infer_type=_ftype(1))
def pinv(a, x):
    return np.linalg.pinv(_f(x), rcond=a.rcond, hermitian=a.hermitian)


@register("_npi_pinv", inputs=("A", "rcond"), attrs={"hermitian": Bool(False)},
          infer_shape=lambda a, s: [tuple(s[0][:-2]) + (s[0][-1], s[0][-2])], infer_type=_ftype(1))
def pinv_tensor_rcond(a, x, rcond):
    """pinv with a per-matrix cutoff array `rcond` (broadcast over the stack)."""
    return np.linalg.pinv(_f(x), rcond=np.asarray(rcond, np.float64), hermitian=a.hermitian)


def _rank_shape(a, s):
    return [tuple(s[0][:-2]) if len(s[0]) >= 2 else ()]


def _matrix_rank(x, tol, hermitian: bool) -> np.ndarray:
    return np.asarray(np.linalg.matrix_rank(_f(x), tol=tol, hermitian=hermitian), np.int64)


@register("_npi_matrix_rank_none_tol", attrs={"tol": Float(None, optional=True),
                                              "hermitian": Bool(False)},
          infer_shape=_rank_shape, infer_type=lambda a, d: [np.dtype(np.int64)])
def matrix_rank(a, x):
    """Number of singular values above `tol` (NumPy's default cutoff when None)."""
    return _matrix_rank(x, a.tol, a.hermitian)


@register("_npi_matrix_rank", inputs=("M", "tol"), attrs={"hermitian": Bool(False)},
          infer_shape=_rank_shape, infer_type=lambda a, d: [np.dtype(np.int64)])
def matrix_rank_tensor_tol(a, x, tol):
    """matrix_rank with a cutoff array `tol` (broadcast over the stack)."""
    return _matrix_rank(x, np.asarray(tol, np.float64), a.hermitian)


def _svd_shape(a, s):
    *lead, m, n = s[0]
    k = min(m, n)
    return [(*lead, m, k), (*lead, k), (*lead, k, n)]


def _eigh_shape(a, s):
    x = tuple(s[0])
    if len(x) < 2 or x[-1] != x[-2]:
        raise ShapeError(f"eigh: the last two dimensions must be square, got shape {x}")
    return [x[:-1], x]


@register("_npi_svd", num_outputs=3, infer_shape=_svd_shape, infer_type=_ftype(3))
def svd(a, x):
    u, s, vt = np.linalg.svd(_f(x), full_matrices=False)
    return u, s, vt


@register("_npi_eigh", attrs={"UPLO": Str("L")}, num_outputs=2, infer_shape=_eigh_shape,
          infer_type=_ftype(2))
def eigh(a, x):
    w, v = np.linalg.eigh(_f(x), UPLO=a.UPLO)
    return w, v


@register("_npi_eigvalsh", attrs={"UPLO": Str("L")}, infer_shape=lambda a, s: _eigh_shape(a, s)[:1],
          infer_type=_ftype(1))
def eigvalsh(a, x):
    return np.linalg.eigvalsh(_f(x), UPLO=a.UPLO)


# -- ONNX lowering ------------------------------------------------------------------------------


def _cast2(ctx, ins):
    dt = ctx.out_dtype()
    return [ctx.cast(v, dt) for v in ins]


@lowers(dot)
def _dot_onnx(ctx, node, ins):
    a = node.parsed
    x, y = _cast2(ctx, ins)
    xs, ys = ctx.shape(ins[0]), ctx.shape(ins[1])
    if not xs or not ys:
        return ctx.op("Mul", [x, y])
    k = _dot_parts(a, xs, ys)[0]
    A = ctx.op("Transpose", [ctx.op("Reshape", [x, ctx.ints([k, -1])])], perm=[1, 0]) \
        if a.transpose_a else ctx.op("Reshape", [x, ctx.ints([-1, k])])
    B = ctx.op("Transpose", [ctx.op("Reshape", [y, ctx.ints([-1, k])])], perm=[1, 0]) \
        if a.transpose_b else ctx.op("Reshape", [y, ctx.ints([k, -1])])
    return ctx.op("Reshape", [ctx.op("MatMul", [A, B]), ctx.reshape_target()])


@lowers(np_dot)
def _np_dot_onnx(ctx, node, ins):
    x, y = _cast2(ctx, ins)
    xs, ys = ctx.shape(ins[0]), ctx.shape(ins[1])
    if not xs or not ys:
        return ctx.op("Mul", [x, y])
    if len(ys) <= 2:
        return ctx.op("MatMul", [x, y])
    r = len(ys)                                # contract x's last axis with y's second-to-last
    yk = ctx.op("Transpose", [y], perm=[r - 2] + list(range(r - 2)) + [r - 1])
    m = ctx.op("MatMul", [ctx.op("Reshape", [x, ctx.ints([-1, xs[-1]])]),
                          ctx.op("Reshape", [yk, ctx.ints([ys[-2], -1])])])
    return ctx.op("Reshape", [m, ctx.reshape_target()])


def _last2(ctx, v, r, t):
    return ctx.op("Transpose", [v], perm=list(range(r - 2)) + [r - 1, r - 2]) if t else v


@lowers(batch_dot)
def _batch_dot_onnx(ctx, node, ins):
    a = node.parsed
    x, y = _cast2(ctx, ins)
    return ctx.op("MatMul", [_last2(ctx, x, ctx.rank(ins[0]), a.transpose_a),
                             _last2(ctx, y, ctx.rank(ins[1]), a.transpose_b)])


def _gemm_onnx_core(ctx, a, x, y, r):
    ax = a.axis % r
    moved = ax != r - 2
    perm = [i for i in range(r) if i != ax]
    perm.insert(r - 2, ax)                     # np.moveaxis(x, ax, -2)
    if moved:
        x = ctx.op("Transpose", [x], perm=perm)
        y = ctx.op("Transpose", [y], perm=perm)
    out = ctx.op("MatMul", [_last2(ctx, x, r, a.transpose_a), _last2(ctx, y, r, a.transpose_b)])
    if a.alpha != 1.0:
        out = ctx.op("Mul", [out, ctx.const(np.asarray(a.alpha, ctx.out_dtype()))])
    if moved:
        out = ctx.op("Transpose", [out], perm=[int(i) for i in np.argsort(perm)])
    return out


@lowers(gemm2)
def _gemm2_onnx(ctx, node, ins):
    return _gemm_onnx_core(ctx, node.parsed, ins[0], ins[1], ctx.rank(ins[0]))


@lowers(gemm)
def _gemm_onnx(ctx, node, ins):
    a = node.parsed
    out = _gemm_onnx_core(ctx, a, ins[0], ins[1], ctx.rank(ins[0]))
    c = ctx.op("Mul", [ins[2], ctx.const(np.asarray(a.beta, ctx.dtype(ins[2])))])
    return ctx.op("Add", [out, c])


@lowers(matmul)
def _matmul_onnx(ctx, node, ins):
    return ctx.op("MatMul", _cast2(ctx, ins))


def _tensordot_onnx_axes(ctx, ins, xa, ya):
    xr, yr = ctx.rank(ins[0]), ctx.rank(ins[1])
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    xl = [next(letters) for _ in range(xr)]
    yl = [next(letters) for _ in range(yr)]
    for i, j in zip(xa, ya):
        yl[j] = xl[i]
    out = [c for i, c in enumerate(xl) if i not in xa] + [c for j, c in enumerate(yl)
                                                          if j not in ya]
    eq = f"{''.join(xl)},{''.join(yl)}->{''.join(out)}"
    return ctx.op("Einsum", _cast2(ctx, ins), equation=eq)


@lowers(tensordot)
def _tensordot_onnx(ctx, node, ins):
    return _tensordot_onnx_axes(ctx, ins, *_td_axes(node.parsed, ctx.shape(ins[0]),
                                                    ctx.shape(ins[1])))


@lowers(tensordot_int)
def _tensordot_int_onnx(ctx, node, ins):
    n, xr = node.parsed.axes, ctx.rank(ins[0])
    return _tensordot_onnx_axes(ctx, ins, list(range(xr - n, xr)), list(range(n)))


@lowers(einsum)
def _einsum_onnx(ctx, node, ins):
    return ctx.op("Einsum", _cast2(ctx, ins), equation=node.parsed.subscripts.replace(" ", ""))


# -- front-ends: the names framework.np / npx expose these operators under ---------------------
for _fn in ("dot", "matmul", "einsum", "tensordot"):
    expose(f"_npi_{_fn}", f"np.{_fn}")
expose("_npi_tensordot_int_axes", "np.tensordot:int_axes")
for _fn in ("cholesky", "eigh", "eigvalsh", "qr", "tensorsolve", "pinv", "matrix_rank", "svd"):
    expose(f"_npi_{_fn}", f"np.linalg.{_fn}")
expose("_npi_pinv_scalar_rcond", "np.linalg.pinv:scalar_rcond")
expose("_npi_matrix_rank_none_tol", "np.linalg.matrix_rank:scalar_tol")
for _fn in ("inv", "det", "slogdet"):
    expose(f"_npi_{_fn}", f"np.linalg.{_fn}(a)")
expose("_npi_solve", "np.linalg.solve(a, b)")
expose("_npi_tensorinv", "np.linalg.tensorinv(a, ind=2)")
expose("batch_dot", "npx.batch_dot(a, b, transpose_a=False, transpose_b=False, "
                       "forward_stype='default')")
