"""Deformable convolutions (DCN v1 `DeformableConvolution`, v2 `ModulatedDeformableConvolution`):
each kernel tap samples the input at its regular position plus a learned offset (bilinearly;
v1 and v2 treat the border as MXNet's kernels do), v2 also scales the sample by a learned mask; the samples then meet the weight as in
a grouped convolution. 2-D, NCHW."""
from __future__ import annotations

import numpy as np

from ..base import ShapeError
from ._nnutil import OptStr, check_param_shapes
from .attrs import Bool, Int, Shape
from .conv import conv_params, out_size
from .registry import register
from .sampler import bilinear_gather

_ATTRS = {"kernel": Shape(), "stride": Shape(()), "dilate": Shape(()), "pad": Shape(()),
          "num_filter": Int(), "num_group": Int(1), "num_deformable_group": Int(1),
          "workspace": Int(1024), "no_bias": Bool(False), "im2col_step": Int(64),
          "layout": OptStr(("NCHW",))}


def _out_hw(a, x):
    stride, pad, dilate = conv_params(a, 2)
    return tuple(out_size(x[2 + i], a.kernel[i], stride[i], pad[i], dilate[i]) for i in range(2))


def _param_shapes(modulated: bool):
    def fn(a, s):
        x = tuple(s[0])
        if len(x) != 4 or len(a.kernel) != 2:
            raise ShapeError(f"deformable convolution: 2-D only (NCHW data, (kh, kw) kernel), "
                             f"got data {x} and kernel {a.kernel}")
        taps, g, (oh, ow) = a.kernel[0] * a.kernel[1], a.num_deformable_group, _out_hw(a, x)
        shapes = [x, (x[0], 2 * g * taps, oh, ow)]
        if modulated:
            shapes.append((x[0], g * taps, oh, ow))
        shapes.append((a.num_filter, x[1] // a.num_group) + tuple(a.kernel))
        return shapes + ([] if a.no_bias else [(a.num_filter,)])
    return fn


def _shape(modulated: bool):
    params = _param_shapes(modulated)

    def fn(a, s):
        check_param_shapes("DeformableConvolution", s, params(a, s))
        return [(s[0][0], a.num_filter) + _out_hw(a, s[0])]
    return fn


def _inputs(modulated: bool):
    names = ("data", "offset") + (("mask",) if modulated else ()) + ("weight",)
    return lambda a: names if a.no_bias else names + ("bias",)


def _v1_sample(x: np.ndarray, y: np.ndarray, xx: np.ndarray) -> np.ndarray:
    """DCN v1's sampling rule (MXNet's deformable_im2col): positions outside [0, H) × [0, W) give
    0; inside, a position past the last row (column) takes that row (column) unblended."""
    h, w = x.shape[2:]
    inside = (y >= 0) & (y < h) & (xx >= 0) & (xx < w)
    y = np.where(np.floor(y) >= h - 1, np.floor(y), y)
    xx = np.where(np.floor(xx) >= w - 1, np.floor(xx), xx)
    return bilinear_gather(x, y, xx) * inside[:, None]


def deformable_conv(a, x, offset, mask, w, b):
    ins = [t.shape for t in (x, offset, mask, w, b) if t is not None]
    check_param_shapes("DeformableConvolution", ins, _param_shapes(mask is not None)(a, ins))
    n, c, h, wd = x.shape
    kh, kw = a.kernel
    stride, pad, dilate = conv_params(a, 2)
    oh, ow = _out_hw(a, x.shape)
    dg, taps = a.num_deformable_group, kh * kw
    if c % dg or c % a.num_group:
        raise ShapeError(f"deformable convolution: {c} channels do not split into "
                         f"{dg} deformable groups and {a.num_group} groups")
    base_y = (np.arange(oh) * stride[0] - pad[0])[:, None]
    base_x = (np.arange(ow) * stride[1] - pad[1])[None, :]
    cols = np.empty((n, c, taps, oh, ow), np.result_type(x.dtype, np.float32))
    cg = c // dg
    for g in range(dg):
        for k in range(taps):
            i, j = divmod(k, kw)
            y = base_y + i * dilate[0] + offset[:, (g * taps + k) * 2]
            xx = base_x + j * dilate[1] + offset[:, (g * taps + k) * 2 + 1]
            if mask is None:
                cols[:, g * cg:(g + 1) * cg, k] = _v1_sample(x[:, g * cg:(g + 1) * cg], y, xx)
            else:
                v = bilinear_gather(x[:, g * cg:(g + 1) * cg], y, xx)
                cols[:, g * cg:(g + 1) * cg, k] = v * mask[:, g * taps + k, None]
    groups, fg = a.num_group, a.num_filter // a.num_group
    cols = cols.reshape(n, groups, (c // groups) * taps, oh * ow)
    wm = w.reshape(groups, fg, -1)
    out = np.einsum("gfk,ngkp->ngfp", wm, cols, optimize=True).reshape(n, a.num_filter, oh, ow)
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out.astype(x.dtype)


@register("_contrib_DeformableConvolution", "_npx_deformable_convolution", attrs=_ATTRS,
          inputs=_inputs(False), infer_shape=_shape(False),
          infer_param_shapes=_param_shapes(False), strict=True, layer="deformableconv")
def deformable_convolution(a, x, offset, w, b=None):
    """DCN v1: offsets (N, 2·G·kh·kw, OH, OW) as (dy, dx) pairs per deformable group and tap."""
    return deformable_conv(a, x, offset, None, w, b)


@register("_npx_modulated_deformable_convolution", "_contrib_ModulatedDeformableConvolution",
          attrs=_ATTRS, inputs=_inputs(True), infer_shape=_shape(True),
          infer_param_shapes=_param_shapes(True), strict=True,
          layer="modulateddeformableconv")
def modulated_deformable_convolution(a, x, offset, mask, w, b=None):
    """DCN v2: DCN v1 with each sample scaled by mask (N, G·kh·kw, OH, OW)."""
    return deformable_conv(a, x, offset, mask, w, b)
