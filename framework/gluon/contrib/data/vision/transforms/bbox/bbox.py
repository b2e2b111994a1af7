"""Image + bounding-box transforms (MXNet 2's `gluon.contrib.data.vision.transforms.bbox`).

Each takes an (H, W, C) image and an (N, 4+) box array and returns both, the boxes moved with
the image. They are plain Blocks (random choices in Python), as in MXNet.
"""
from __future__ import annotations

import numbers
import random

from ......block import Block
from ....... import numpy as np
from ....... import numpy_extension as npx
from .utils import bbox_crop, bbox_resize, bbox_translate, check_bbox_shape


class ImageBboxRandomFlipLeftRight(Block):
    """With probability `p`, mirror the image and its boxes left to right."""

    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, img, bbox):
        check_bbox_shape(bbox)
        if self.p <= 0 or (self.p < 1 and self.p < random.random()):
            return img, bbox
        img = npx.image.flip_left_right(img)
        width = img.shape[-2]
        out = bbox.copy()
        out[:, 0] = width - bbox[:, 2]
        out[:, 2] = width - bbox[:, 0]
        return img, out


class ImageBboxCrop(Block):
    """Crop `crop` = (x, y, width, height); boxes are clipped and those left empty dropped.
    A crop reaching the image's far edge leaves both unchanged (MXNet's rule)."""

    def __init__(self, crop, allow_outside_center: bool = False):
        super().__init__()
        if len(crop) != 4:
            raise ValueError("expect crop to be (x_min, y_min, width, height)")
        self.xmin, self.ymin, self.width, self.height = crop
        if self.xmin < 0 or self.ymin < 0 or self.width <= 0 or self.height <= 0:
            raise ValueError(f"invalid crop {tuple(crop)}")
        self._allow_outside_center = allow_outside_center

    def forward(self, img, bbox):
        if self.xmin + self.width >= img.shape[-2] or self.ymin + self.height >= img.shape[-3]:
            return img, bbox
        new_img = npx.image.crop(img, self.xmin, self.ymin, self.width, self.height)
        box = (self.xmin, self.ymin, self.width, self.height)
        return new_img, np.array(bbox_crop(bbox.asnumpy(), box, self._allow_outside_center),
                                 dtype=bbox.dtype)


class ImageBboxRandomExpand(Block):
    """With probability `p`, place the image at a random spot of a canvas up to `max_ratio`
    times larger filled with `fill` (a number or one value per channel); boxes follow."""

    def __init__(self, p: float = 0.5, max_ratio: float = 4, fill=0, keep_ratio: bool = True):
        super().__init__()
        self.p, self._max_ratio, self._fill, self._keep_ratio = p, max_ratio, fill, keep_ratio

    def forward(self, img, bbox):
        if self._max_ratio <= 1 or random.random() > self.p:
            return img, bbox
        if len(img.shape) != 3:
            raise NotImplementedError("ImageBboxRandomExpand only support images in HWC format")
        h, w, c = img.shape
        rx = random.uniform(1, self._max_ratio)
        ry = rx if self._keep_ratio else random.uniform(1, self._max_ratio)
        oh, ow = int(h * ry), int(w * rx)
        oy, ox = random.randint(0, oh - h), random.randint(0, ow - w)
        if isinstance(self._fill, numbers.Number):
            dst = np.full((oh, ow, c), self._fill, dtype=img.dtype)
        else:
            fill = np.array(self._fill, dtype=img.dtype)
            if fill.size != c:
                raise ValueError(f"Channel and fill size mismatch, {c} vs {fill.size}")
            dst = np.tile(fill.reshape((1, c)), (oh * ow, 1)).reshape((oh, ow, c))
        dst[oy:oy + h, ox:ox + w, :] = img
        return dst, np.array(bbox_translate(bbox.asnumpy(), ox, oy), dtype=bbox.dtype)


class ImageBboxResize(Block):
    """Resize to (width, height) with `interp` (-1: a random mode per call); boxes scale."""

    def __init__(self, width: int, height: int, interp: int = 1):
        super().__init__()
        self._size, self._interp = (width, height), interp

    def forward(self, img, bbox):
        if len(img.shape) != 3:
            raise NotImplementedError("ImageBboxResize only support images in HWC format")
        interp = random.randint(0, 5) if self._interp == -1 else self._interp
        new_img = npx.image.resize(img, self._size, False, interp)
        return new_img, np.array(bbox_resize(bbox.asnumpy(), (img.shape[-2], img.shape[-3]),
                                             self._size))
