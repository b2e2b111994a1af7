"""Non-maximum suppression (`_contrib_box_nms`) with MXNet's ordering, tie-breaking and padding.

MXNet's algorithm, per batch (all leading axes flatten into one batch axis):
1. a box is a candidate when `score > valid_thresh` (and, with `id_index >= 0`, its class id is
   not `background_id`); when no box of any batch is a candidate the whole output is -1;
2. candidates are ordered by score, descending, with a stable sort (equal scores keep input
   order), and only the first `topk` of them take part;
3. greedily, each surviving box suppresses every later one whose IoU with it is `> overlap_thresh`
   (only boxes of the same class unless `force_suppress` or `id_index < 0`);
4. survivors are written in that order to the front of the batch's rows, the rest are -1;
   `out_format` != `in_format` converts the written rows (rows starting with a negative value
   are left as they are, as MXNet's converter skips them).
`topk == 0` returns the input unchanged. The hidden second output records, per output row, the
flat input row (batch * num_box + i) it came from, -1 for padding.
"""
from __future__ import annotations

import numpy as np

from ...base import ShapeError
from .boxes import FORMATS, area, convert_rows, intersect
from .flops import box_nms_flops
from ..nnutil import CF
from ..attrs import Bool, Int, Str
from ..registry import register


def _check_layout(a, width: int) -> None:
    need = 6 if a.id_index >= 0 else 5
    if width < need:
        raise ShapeError(f"box_nms: the last axis must hold at least {need} values "
                         f"(score, 4 coordinates{', class id' if need == 6 else ''}), got {width}")
    cs, ce = a.coord_start, a.coord_start + 3
    if not (0 <= cs and ce < width):
        raise ShapeError(f"box_nms: coordinates {cs}..{ce} out of range for width {width}")
    for name in ("score_index", "id_index"):
        i = a[name]
        if name == "id_index" and i < 0:
            continue
        if not 0 <= i < width or cs <= i <= ce:
            raise ShapeError(f"box_nms: {name}={i} is out of range or overlaps the coordinates")
    if a.id_index >= 0 and a.id_index == a.score_index:
        raise ShapeError("box_nms: id_index and score_index are the same column")


def _nms_shape(a, s):
    shape = tuple(s[0])
    if len(shape) < 2:
        raise ShapeError(f"box_nms: input must have at least 2 dimensions, got {shape}")
    _check_layout(a, shape[-1])
    return [shape, shape[:-1] + (1,)]


_BLOCK = 256    # candidates per block: the greedy loop runs inside one, matrices span the rest
_COLS = 4096    # later candidates per matrix step: its temporaries stay cache-sized


def _corner_inter(bi: np.ndarray, bj: np.ndarray) -> np.ndarray:
    """(len(bi), len(bj)) overlap areas of corner boxes, in place over two buffers. Clamping a
    side with maximum(w, 0) rather than the shared where(w > 0, w, 0) only differs for NaN
    sides, whose boxes have NaN areas, so the IoU test (always False on NaN) is the same."""
    cj = np.ascontiguousarray(bj.T)                          # (4, n): rows read contiguously
    w = np.minimum(bi[:, 2, None], cj[2])
    tmp = np.maximum(bi[:, 0, None], cj[0])
    w -= tmp
    np.maximum(w, 0, out=w)
    h = np.minimum(bi[:, 3, None], cj[3])
    np.maximum(bi[:, 1, None], cj[1], out=tmp)
    h -= tmp
    np.maximum(h, 0, out=h)
    w *= h
    return w


def _iou_hits(a, boxes, areas, ids, rows, cols, thresh) -> np.ndarray:
    """(rows, cols) mask of IoU > thresh (same class only when `ids` is given), each pair
    computed as the one-pair formula would: inter / (area_i + area_j - inter)."""
    if a.in_format == "corner":
        inter = _corner_inter(boxes[rows], boxes[cols])
    else:
        inter = intersect(boxes[rows, None], boxes[None, cols], a.in_format)
    union = np.add(areas[rows, None], areas[None, cols])
    union -= inter
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(inter, union, out=union)
    hit = np.greater(union, thresh)
    if ids is not None:
        hit &= ids[rows, None] == ids[None, cols]
    return hit


def _survivors(a, rows: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Greedy suppression over `order` (positions into rows); returns the kept positions.
    Blocked: the greedy pass of a block reads its precomputed (block × block) hit matrix, and
    the block's kept boxes then suppress every later candidate in one matrix step, so the
    Python loop does one cheap step per candidate instead of one IoU sweep per survivor."""
    dt = rows.dtype
    boxes = rows[order, a.coord_start:a.coord_start + 4]
    areas = area(boxes, a.in_format)
    thresh = dt.type(np.float32(a.overlap_thresh))
    by_class = a.id_index >= 0 and not a.force_suppress
    ids = rows[order, a.id_index].astype(np.int64) if by_class else None
    n = len(order)
    alive = np.ones(n, bool)
    for s in range(0, n, _BLOCK):
        e = min(n, s + _BLOCK)
        hit = _iou_hits(a, boxes, areas, ids, slice(s, e), slice(s, e), thresh)
        blk = alive[s:e]                       # a view: the greedy pass writes through
        for i in range(e - s - 1):
            if blk[i]:
                blk[i + 1:] &= ~hit[i, i + 1:]
        kept = s + np.flatnonzero(blk)
        for c in range(e, n, _COLS) if len(kept) else ():
            live = c + np.flatnonzero(alive[c:c + _COLS])       # suppressed ones need no test
            if len(live):
                alive[live] &= ~_iou_hits(a, boxes, areas, ids, kept, live, thresh).any(axis=0)
    return order[alive]


def _ranked(scores: np.ndarray, cand: np.ndarray, topk: int) -> np.ndarray:
    """The first `topk` of `cand` by score, descending, ties in input order (what a stable sort
    of all candidates gives), without sorting them all: every candidate scoring above the
    k-th best is in, those equal to it enter in input order."""
    sc = scores[cand]
    if topk < len(cand):
        kth = np.partition(sc, len(sc) - topk)[len(sc) - topk]
        keep = sc >= kth
        cand, sc = cand[keep], sc[keep]
    return cand[np.argsort(-sc, kind="stable")][:topk]


@register("_contrib_box_nms", "_contrib_box_non_maximum_suppression", "_npx_box_nms",
          attrs={"overlap_thresh": CF(0.5), "valid_thresh": CF(0.0), "topk": Int(-1),
                 "coord_start": Int(2), "score_index": Int(1), "id_index": Int(-1),
                 "background_id": Int(-1), "force_suppress": Bool(False),
                 "in_format": Str("corner", choices=FORMATS),
                 "out_format": Str("corner", choices=FORMATS)},
          num_outputs=2, num_visible=1, output_names=("output", "temp"),
          infer_shape=_nms_shape, strict=True, flops=box_nms_flops, float_only=True)
def box_nms(a, x):
    """Non-maximum suppression of (..., num_box, width) rows; see the module docstring."""
    shape = _nms_shape(a, [x.shape])[0]
    n, width = shape[-2], shape[-1]
    data = x.reshape(-1, n, width)
    nb, dt = data.shape[0], x.dtype
    topk = n if a.topk < 0 else min(n, a.topk)
    if topk < 1:
        rec = np.arange(nb * n, dtype=dt).reshape(shape[:-1] + (1,))
        return x.copy(), rec
    scores = data[..., a.score_index]
    valid = scores > dt.type(np.float32(a.valid_thresh))
    if a.id_index >= 0:
        valid &= data[..., a.id_index] != dt.type(a.background_id)
    out = np.full(data.shape, -1, dt)
    rec = np.full((nb, n), -1, dt)
    for b in range(nb if valid.any() else 0):
        order = _ranked(scores[b], np.flatnonzero(valid[b]), topk)
        kept = _survivors(a, data[b], order)
        out[b, :len(kept)] = data[b, kept]
        rec[b, :len(kept)] = b * n + kept
    if a.in_format != a.out_format:
        cs = a.coord_start
        out[..., cs:cs + 4] = convert_rows(out[..., cs:cs + 4], a.out_format)
    return out.reshape(shape), rec.reshape(shape[:-1] + (1,))
