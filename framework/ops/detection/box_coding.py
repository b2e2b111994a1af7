"""Box coding and matching operators of MXNet's contrib detection set: `box_iou`, `box_decode`,
`box_encode` and `bipartite_matching` (`box_nms` has its own module)."""
from __future__ import annotations

import numpy as np

from ...base import ShapeError
from .boxes import FORMATS, area, half_up, intersect
from .flops import bipartite_flops, box_decode_flops, box_encode_flops, box_iou_flops
from ..nnutil import CF, parse_cfloat
from ..attrs import Attr, Bool, Int, Str
from ..registry import register


def _last4(op: str, name: str, s, min_ndim: int) -> tuple:
    s = tuple(s)
    if len(s) < min_ndim or s[-1] != 4:
        raise ShapeError(f"{op}: {name} must have >= {min_ndim} dimensions and a last axis "
                         f"of 4, got {s}")
    return s


# -- box_iou ----------------------------------------------------------------------------------
def _iou_shape(a, s):
    lhs, rhs = _last4("box_iou", "lhs", s[0], 2), _last4("box_iou", "rhs", s[1], 2)
    return [lhs[:-1] + rhs[:-1]]


@register("_contrib_box_iou", "_npx_box_iou", attrs={"format": Str("corner", choices=FORMATS)},
          inputs=("lhs", "rhs"), infer_shape=_iou_shape, strict=True,
          flops=box_iou_flops, float_only=True)
def box_iou(a, lhs, rhs):
    """IoU of every lhs box with every rhs box: shape lhs.shape[:-1] + rhs.shape[:-1]."""
    oshape = _iou_shape(a, [lhs.shape, rhs.shape])[0]
    l, r = lhs.reshape(-1, 1, 4), rhs.reshape(1, -1, 4)
    inter = intersect(l, r, a.format)
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / (area(l, a.format) + area(r, a.format) - inter)
    return np.where(inter <= 0, lhs.dtype.type(0), iou).reshape(oshape)


# -- box_decode -------------------------------------------------------------------------------
def _decode_shape(a, s):
    d = tuple(s[0])
    if len(d) != 3 or d[-1] != 4:
        raise ShapeError(f"box_decode: data must be (batch, num_box, 4), got {d}")
    _last4("box_decode", "anchors", s[1], 3)
    return [d]


@register("_contrib_box_decode", "_npx_box_decode",
          attrs={"std0": CF(1.0), "std1": CF(1.0), "std2": CF(1.0), "std3": CF(1.0),
                 "clip": CF(-1.0), "format": Str("center", choices=FORMATS)},
          inputs=("data", "anchors"), infer_shape=_decode_shape, strict=True,
          flops=box_decode_flops, float_only=True)
def box_decode(a, x, anchors):
    """Offsets (dx, dy, dw, dh) relative to anchors → corner boxes. Anchors are read as
    (1, num_box, 4) in `format`; dw, dh are capped at `clip` when clip > 0."""
    _decode_shape(a, [x.shape, anchors.shape])
    dt = x.dtype.type
    n = x.shape[1]
    anc = anchors.reshape(-1, 4)[:n].astype(x.dtype, copy=False)
    ax, ay, aw, ah = anc[:, 0], anc[:, 1], anc[:, 2], anc[:, 3]
    if a.format == "corner":
        aw, ah = aw - ax, ah - ay
        ax, ay = half_up(ax, aw), half_up(ay, ah)
    ox = x[..., 0] * dt(a.std0) * aw + ax
    oy = x[..., 1] * dt(a.std1) * ah + ay
    dw, dh = x[..., 2] * dt(a.std2), x[..., 3] * dt(a.std3)
    if a.clip > 0:
        dw = np.where(dw < dt(a.clip), dw, dt(a.clip))
        dh = np.where(dh < dt(a.clip), dh, dt(a.clip))
    half = dt(0.5)
    with np.errstate(over="ignore"):   # large offsets overflow to inf, as in MXNet
        ow, oh = np.exp(dw) * aw * half, np.exp(dh) * ah * half
    return np.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=-1)


# -- box_encode -------------------------------------------------------------------------------
def _encode_shape(a, s):
    if len(s[0]) != 2 or len(s[1]) < 2:
        raise ShapeError(f"box_encode: samples and matches must be (batch, num_box), "
                         f"got {tuple(s[0])}, {tuple(s[1])}")
    anc = _last4("box_encode", "anchors", s[2], 3)
    _last4("box_encode", "refs", s[3], 3)
    return [anc, anc]


@register("_contrib_box_encode", "_npx_box_encode",
          inputs=("samples", "matches", "anchors", "refs", "means", "stds"),
          num_outputs=2, output_names=("output0", "output1"),
          infer_shape=_encode_shape, strict=True, flops=box_encode_flops, float_only=True)
def box_encode(a, samples, matches, anchors, refs, means, stds):
    """Regression targets of matched refs against corner anchors: ((dx, dy) / anchor size,
    log size ratios) normalised by means/stds; samples <= 0.5 give zero targets and masks."""
    _encode_shape(a, [samples.shape, matches.shape, anchors.shape, refs.shape])
    dt = anchors.dtype
    b, n, m = anchors.shape[0], anchors.shape[1], refs.shape[1]
    idx = np.clip(matches.reshape(b, n).astype(np.int64), 0, m - 1)
    ref = np.take_along_axis(refs.reshape(b, m, 4).astype(dt, copy=False), idx[..., None], 1)
    anc = anchors.reshape(b, n, 4)
    rw, rh = ref[..., 2] - ref[..., 0], ref[..., 3] - ref[..., 1]
    aw, ah = anc[..., 2] - anc[..., 0], anc[..., 3] - anc[..., 1]
    rx, ry = half_up(ref[..., 0], rw), half_up(ref[..., 1], rh)
    ax, ay = half_up(anc[..., 0], aw), half_up(anc[..., 1], ah)
    mu, sd = means.astype(dt).reshape(4), stds.astype(dt).reshape(4)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.stack([((rx - ax) / aw - mu[0]) / sd[0], ((ry - ay) / ah - mu[1]) / sd[1],
                      (np.log(rw / aw) - mu[2]) / sd[2], (np.log(rh / ah) - mu[3]) / sd[3]], -1)
    valid = (samples.reshape(b, n) > 0.5)[..., None]
    mask = np.broadcast_to(valid, t.shape).astype(dt)
    return np.where(valid, t, dt.type(0)).reshape(anchors.shape), mask.reshape(anchors.shape)


# -- bipartite_matching -----------------------------------------------------------------------
def _match_shape(a, s):
    d = tuple(s[0])
    if len(d) < 2:
        raise ShapeError(f"bipartite_matching: scores must have >= 2 dimensions, got {d}")
    return [d[:-1], d[:-2] + d[-1:]]


def _greedy_match(a, score: np.ndarray, rows: int, cols: int):
    """One batch: walk the entries best-first; an entry whose row and column are both free is
    matched while its score passes the threshold, and the first one that fails ends the walk.
    MXNet stops only once the match count exceeds topk, so topk=k yields k + 1 matches."""
    flat = score.reshape(-1)
    order = np.argsort(flat if a.is_ascend else -flat, kind="stable")
    r_of, c_of = order // cols, order % cols
    thresh = score.dtype.type(np.float32(a.threshold))
    rmark = np.full(rows, -1, score.dtype)
    cmark = np.full(cols, -1, score.dtype)
    free = np.ones(len(order), bool)
    count = 0
    while True:
        pos = int(np.argmax(free))
        if not free[pos]:
            break
        s = flat[order[pos]]
        if not (s < thresh if a.is_ascend else s > thresh):
            break
        r, c = r_of[pos], c_of[pos]
        rmark[r], cmark[c] = c, r
        free &= (r_of != r) & (c_of != c)
        count += 1
        if a.topk > 0 and count > a.topk:
            break
    return rmark, cmark


@register("_contrib_bipartite_matching", "_npx_bipartite_matching",
          attrs={"is_ascend": Bool(False), "threshold": Attr(parse_cfloat), "topk": Int(-1)},
          num_outputs=2, output_names=("output0", "output1"),
          infer_shape=_match_shape, strict=True, flops=bipartite_flops)
def bipartite_matching(a, x):
    """Greedy best-first matching of a (..., rows, cols) score matrix: the row → column and
    column → row assignments, -1 where unmatched."""
    rshape, cshape = _match_shape(a, [x.shape])
    rows, cols = x.shape[-2:]
    data = x.reshape(-1, rows, cols)
    pairs = [_greedy_match(a, data[b], rows, cols) for b in range(data.shape[0])]
    rm = np.stack([p[0] for p in pairs]) if pairs else np.zeros((0, rows), x.dtype)
    cm = np.stack([p[1] for p in pairs]) if pairs else np.zeros((0, cols), x.dtype)
    return rm.reshape(rshape), cm.reshape(cshape)
