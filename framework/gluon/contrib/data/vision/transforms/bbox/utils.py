"""Bounding-box arithmetic on NumPy (N, 4+) arrays `(xmin, ymin, xmax, ymax, extra...)`: the
extra columns (class, score) ride along unchanged."""
from __future__ import annotations

import numpy as _onp


def check_bbox_shape(bbox) -> None:
    if bbox.ndim != 2 or bbox.shape[1] < 4:
        raise ValueError(f"bbox must be (N, 4+), got shape {bbox.shape}")


def bbox_crop(bbox: _onp.ndarray, crop_box=None, allow_outside_center: bool = True):
    """Boxes clipped to `crop_box` (x, y, w, h; None parts unbounded) in its coordinates; boxes
    left empty, or (unless allowed) whose centre falls outside, are dropped."""
    bbox = bbox.copy()
    if crop_box is None or all(c is None for c in crop_box):
        return bbox
    if len(crop_box) != 4:
        raise ValueError(f"Invalid crop_box parameter, requires length 4, given {crop_box}")
    l, t, w, h = crop_box
    left, top = l or 0, t or 0
    crop = _onp.array((left, top, left + (w or _onp.inf), top + (h or _onp.inf)))
    keep = _onp.ones(len(bbox), dtype=bool)
    if not allow_outside_center:
        centers = (bbox[:, :2] + bbox[:, 2:4]) / 2
        keep = ((crop[:2] <= centers) & (centers < crop[2:])).all(axis=1)
    bbox[:, :2] = _onp.maximum(bbox[:, :2], crop[:2]) - crop[:2]
    bbox[:, 2:4] = _onp.minimum(bbox[:, 2:4], crop[2:4]) - crop[:2]
    keep &= (bbox[:, :2] < bbox[:, 2:4]).all(axis=1)
    return bbox[keep]


def bbox_flip(bbox: _onp.ndarray, size, flip_x: bool = False, flip_y: bool = False):
    """Boxes mirrored in an image of `size` (width, height)."""
    if len(size) != 2:
        raise ValueError(f"size requires length 2 tuple, given {len(size)}")
    width, height = size
    bbox = bbox.copy()
    if flip_y:
        bbox[:, 1], bbox[:, 3] = height - bbox[:, 3], height - bbox[:, 1]
    if flip_x:
        bbox[:, 0], bbox[:, 2] = width - bbox[:, 2], width - bbox[:, 0]
    return bbox


def bbox_resize(bbox: _onp.ndarray, in_size, out_size):
    """Boxes scaled from an image of `in_size` (w, h) to `out_size` (w, h)."""
    if len(in_size) != 2 or len(out_size) != 2:
        raise ValueError("in_size and out_size require length 2 tuples")
    bbox = bbox.copy().astype(float)
    sx, sy = out_size[0] / in_size[0], out_size[1] / in_size[1]
    bbox[:, 0] *= sx
    bbox[:, 2] *= sx
    bbox[:, 1] *= sy
    bbox[:, 3] *= sy
    return bbox


def bbox_translate(bbox: _onp.ndarray, x_offset: float = 0, y_offset: float = 0):
    """Boxes moved by (x_offset, y_offset)."""
    bbox = bbox.copy()
    bbox[:, :2] += (x_offset, y_offset)
    bbox[:, 2:4] += (x_offset, y_offset)
    return bbox
