"""Deformable convolutions: `_contrib_DeformableConvolution` (DCN v1) and
`_contrib_ModulatedDeformableConvolution` (DCN v2, GluonCV's `*_dcnv2` CenterNets).

Each kernel tap of each output position samples the input at its regular position plus a learned
(dy, dx) offset, bilinearly; v2 also multiplies each sample by a learned mask. The samples form
im2col columns (C·kh·kw, Ho·Wo) and one GEMM per group does the rest, as MXNet does. Offsets are
(N, 2·kh·kw·dg, Ho, Wo) with channel 2k the dy and 2k+1 the dx of tap k in deformable group g
(block g of the channels); the mask is (N, kh·kw·dg, Ho, Wo). 2-D, NCHW only, as in MXNet.

The two versions sample the border differently (MXNet 1.9.1's CPU kernels): v1 takes a sample
only at 0 <= y < H (and x likewise) and reads the last row/column without blending past it; v2
takes samples at -1 < y < H and blends the pixels beyond the border as zeros.
"""
from __future__ import annotations

import numpy as np

from ...base import ShapeError
from ..nnutil import OptStr, check_param_shapes, prod, spatial
from ..attrs import Bool, Int, Shape
from .conv import out_size
from ..registry import register

_COMMON = {
    "kernel": Shape(), "stride": Shape(()), "dilate": Shape(()), "pad": Shape(()),
    "num_filter": Int(), "num_group": Int(1), "num_deformable_group": Int(1),
    "workspace": Int(1024), "no_bias": Bool(False), "layout": OptStr(("NCW", "NCHW", "NCDHW")),
}


def _geometry(a):
    if len(a.kernel) != 2:
        raise ShapeError(f"deformable convolution: only 2-D kernels are supported, got {a.kernel}")
    if a.layout not in (None, "NCHW"):
        raise ShapeError(f"deformable convolution: only NCHW layout is supported, got {a.layout}")
    return (spatial(a.stride, 2, 1, "stride"), spatial(a.pad, 2, 0, "pad"),
            spatial(a.dilate, 2, 1, "dilate"))


def _shape(op: str, masked: bool):
    def infer(a, s):
        stride, pad, dilate = _geometry(a)
        x, off = tuple(s[0]), tuple(s[1])
        if len(x) != 4 or len(off) != 4:
            raise ShapeError(f"{op}: data and offset must be 4-D (NCHW), got {x} and {off}")
        n_w = 3 if masked else 2
        check_param_shapes(op, [x] + list(s[n_w:]), [x] + _param_shapes(a, x))
        C, dg, K = x[1], a.num_deformable_group, prod(a.kernel)
        if C % a.num_group or C % dg or a.num_filter % a.num_group or \
                (masked and a.num_filter % dg):
            raise ShapeError(f"{op}: {C} channels and {a.num_filter} filters must divide by "
                             f"num_group={a.num_group} and num_deformable_group={dg}")
        osp = tuple(out_size(x[2 + i], a.kernel[i], stride[i], pad[i], dilate[i])
                    for i in range(2))
        if min(osp) <= 0:
            raise ShapeError(f"{op}: kernel {a.kernel} does not fit input {x[2:]} padded by {pad}")
        want = [("offset", off, 2 * K * dg)] + ([("mask", tuple(s[2]), K * dg)] if masked else [])
        for name, shp, ch in want:
            if shp != (x[0], ch) + osp:
                raise ShapeError(f"{op}: {name} must be {(x[0], ch) + osp} for data {x}, "
                                 f"got {shp}")
        return [(x[0], a.num_filter) + osp]
    return infer


def _param_shapes(a, x) -> list:
    w = [(a.num_filter, x[1] // a.num_group) + tuple(a.kernel)]
    return w if a.no_bias else w + [(a.num_filter,)]


def _sample_grid(a, H: int, W: int, off: np.ndarray):
    """Sampling positions (y, x), each (N, dg, K, Ho·Wo), in the data's float type."""
    stride, pad, dilate = _geometry(a)
    N, _, Ho, Wo = off.shape
    kh, kw = a.kernel
    dt = off.dtype.type
    off = off.reshape(N, a.num_deformable_group, kh * kw, 2, Ho * Wo)
    ki, kj = np.divmod(np.arange(kh * kw), kw)
    oy, ox = np.divmod(np.arange(Ho * Wo), Wo)
    base_y = (oy[None] * stride[0] - pad[0] + ki[:, None] * dilate[0]).astype(off.dtype)
    base_x = (ox[None] * stride[1] - pad[1] + kj[:, None] * dilate[1]).astype(off.dtype)
    return base_y + off[:, :, :, 0], base_x + off[:, :, :, 1], dt


def _taps_v1(y, x, H: int, W: int, dt):
    """Corner indices and weights of DCN v1 (edge rows/columns read without blending)."""
    inside = (y >= 0) & (x >= 0) & (y < H) & (x < W)
    y0, x0 = np.floor(y).astype(np.int64), np.floor(x).astype(np.int64)
    ly = np.where(y0 >= H - 1, dt(0), y - y0.astype(y.dtype))
    lx = np.where(x0 >= W - 1, dt(0), x - x0.astype(x.dtype))
    y1, x1 = np.minimum(y0 + 1, H - 1), np.minimum(x0 + 1, W - 1)
    hy, hx = dt(1) - ly, dt(1) - lx
    corners = ((y0, x0, hy * hx), (y0, x1, hy * lx), (y1, x0, ly * hx), (y1, x1, ly * lx))
    return [(yy, xx, w, inside) for yy, xx, w in corners]


def _taps_v2(y, x, H: int, W: int, dt):
    """Corner indices and weights of DCN v2 (pixels beyond the border are zeros)."""
    inside = (y > -1) & (x > -1) & (y < H) & (x < W)
    y0, x0 = np.floor(y).astype(np.int64), np.floor(x).astype(np.int64)
    ly, lx = y - y0.astype(y.dtype), x - x0.astype(x.dtype)
    hy, hx = dt(1) - ly, dt(1) - lx
    out = []
    for yy, xx, w in ((y0, x0, hy * hx), (y0, x0 + 1, hy * lx), (y0 + 1, x0, ly * hx),
                      (y0 + 1, x0 + 1, ly * lx)):
        ok = inside & (yy >= 0) & (xx >= 0) & (yy <= H - 1) & (xx <= W - 1)
        out.append((yy, xx, w, ok))
    return out


_CHUNK_BYTES = 1 << 20          # samples gathered per step: the four corners stay in cache


def _columns(a, x, off, mask, taps_fn) -> np.ndarray:
    """The deformable im2col matrix in (N, Ho·Wo, K·C) order (tap-major, channels last), so each
    sample is one contiguous row copy from a pixel-major plane and the GEMM reads it in place."""
    N, C, H, W = x.shape
    dg = a.num_deformable_group
    Cd, K = C // dg, prod(a.kernel)
    P = off.shape[2] * off.shape[3]
    y, xs, dt = _sample_grid(a, H, W, off)
    # per corner: the pixel row each sample reads (row H·W is zeros) and its weight, (P·K) order
    taps = [(np.where(ok, yy * W + xx, H * W).swapaxes(-1, -2).reshape(N, dg, P * K),
             np.where(ok, w, dt(0)).swapaxes(-1, -2).reshape(N, dg, P * K, 1))
            for yy, xx, w, ok in taps_fn(y, xs, H, W, dt)]
    if mask is not None:
        mask = mask.reshape(N, dg, K, P).swapaxes(-1, -2).reshape(N, dg, P * K, 1)
    cols = np.empty((N, P * K, C), x.dtype)
    plane = np.zeros((H * W + 1, Cd), x.dtype)
    step = max(1, _CHUNK_BYTES // (Cd * x.itemsize))
    acc, tmp = np.empty((step, Cd), x.dtype), np.empty((step, Cd), x.dtype)
    for n in range(N):
        for g in range(dg):
            plane[:-1] = x[n, g * Cd:(g + 1) * Cd].reshape(Cd, H * W).T
            for s0 in range(0, P * K, step):
                s1 = min(P * K, s0 + step)
                a_, t_ = acc[:s1 - s0], tmp[:s1 - s0]
                for i, (rows, wt) in enumerate(taps):
                    np.take(plane, rows[n, g, s0:s1], axis=0, out=t_ if i else a_, mode="clip")
                    if i:
                        t_ *= wt[n, g, s0:s1]
                        a_ += t_
                    else:
                        a_ *= wt[n, g, s0:s1]
                if mask is not None:
                    a_ *= mask[n, g, s0:s1]
                cols[n, s0:s1, g * Cd:(g + 1) * Cd] = a_
    return cols.reshape(N, P, K, C)


def _deform_conv(a, x, off, mask, w, b, taps_fn):
    N = x.shape[0]
    F, G = a.num_filter, a.num_group
    cols = _columns(a, x, off.astype(x.dtype, copy=False),
                    None if mask is None else mask.astype(x.dtype, copy=False), taps_fn)
    P, K, C = cols.shape[1:]
    Fg, Cg = F // G, C // G
    out = np.empty((N, F, P), np.result_type(x.dtype, w.dtype))
    for g in range(G):
        wg = w[g * Fg:(g + 1) * Fg].transpose(0, 2, 3, 1).reshape(Fg, K * Cg)   # tap-major
        cg = cols.reshape(N, P, K * C) if G == 1 else \
            np.ascontiguousarray(cols[..., g * Cg:(g + 1) * Cg]).reshape(N, P, K * Cg)
        out[:, g * Fg:(g + 1) * Fg] = (cg @ wg.T).transpose(0, 2, 1)
    if b is not None:
        out += b.reshape(1, F, 1).astype(out.dtype, copy=False)
    return out.reshape((N, F) + off.shape[2:])


def _flops(a, ins, outs):
    x = ins[0]
    return 2 * prod(outs[0]) * (x[1] // a.num_group) * prod(a.kernel)


def _inputs(masked: bool):
    head = ("data", "offset", "mask") if masked else ("data", "offset")
    return lambda a: head + (("weight",) if a.no_bias else ("weight", "bias"))


@register("_contrib_DeformableConvolution", "_npx_deformable_convolution", attrs=_COMMON,
          inputs=_inputs(False), infer_shape=_shape("DeformableConvolution", False),
          infer_param_shapes=lambda a, s: list(s[:2]) + _param_shapes(a, s[0]),
          strict=True, flops=_flops, dtype_pair=("data", "weight"),
          layer="deformable_conv", mx2_name="_npx_deformable_convolution")
def deformable_convolution(a, x, off, w, b=None):
    """DCN v1: convolution sampling each tap at its position plus a learned offset."""
    _shape("DeformableConvolution", False)(a, [x.shape, off.shape, w.shape]
                                           + ([] if b is None else [b.shape]))
    return _deform_conv(a, x, off, None, w, b, _taps_v1)


@register("_contrib_ModulatedDeformableConvolution", "_npx_modulated_deformable_convolution",
          attrs={**_COMMON, "im2col_step": Int(64)},
          inputs=_inputs(True), infer_shape=_shape("ModulatedDeformableConvolution", True),
          infer_param_shapes=lambda a, s: list(s[:3]) + _param_shapes(a, s[0]),
          strict=True, flops=_flops, dtype_pair=("data", "weight"),
          layer="modulated_deformable_conv", mx2_name="_npx_modulated_deformable_convolution")
def modulated_deformable_convolution(a, x, off, mask, w, b=None):
    """DCN v2: DCN v1 with each sample scaled by a learned mask."""
    _shape("ModulatedDeformableConvolution", True)(
        a, [x.shape, off.shape, mask.shape, w.shape] + ([] if b is None else [b.shape]))
    return _deform_conv(a, x, off, mask, w, b, _taps_v2)
