"""gluon.contrib bounding-box transforms: the boxes move with the image."""
import random

import numpy as onp
import pytest

from framework import np
from framework.gluon.contrib.data.vision.transforms.bbox import (
    ImageBboxCrop, ImageBboxRandomExpand, ImageBboxRandomFlipLeftRight, ImageBboxResize,
    bbox_crop, bbox_flip)


def _img():
    return np.array(onp.arange(10 * 8 * 3).reshape(10, 8, 3) % 251, dtype=onp.uint8)


def test_flip():
    img, box = _img(), np.array([[1.0, 2.0, 3.0, 4.0, 7.0]])
    out, b = ImageBboxRandomFlipLeftRight(1.0)(img, box)
    assert (out.asnumpy() == img.asnumpy()[:, ::-1]).all()
    assert b.asnumpy().tolist() == [[5.0, 2.0, 7.0, 4.0, 7.0]]
    out, b = ImageBboxRandomFlipLeftRight(0.0)(img, box)
    assert out is img and b is box
    random.seed(0)
    flips = sum(float(ImageBboxRandomFlipLeftRight(0.5)(img, box)[1][0, 0]) == 5.0
                for _ in range(200))
    assert 60 < flips < 140
    with pytest.raises(ValueError):
        ImageBboxRandomFlipLeftRight()(img, np.array([1.0, 2.0]))


def test_crop_clips_and_drops():
    img = _img()
    boxes = np.array([[0.0, 1.0, 3.0, 4.0, 0.0], [5.0, 5.0, 7.0, 7.0, 1.0]])
    out, b = ImageBboxCrop((1, 0, 4, 3))(img, boxes)
    assert out.shape == (3, 4, 3) and (out.asnumpy() == img.asnumpy()[0:3, 1:5]).all()
    assert b.asnumpy().tolist() == [[0.0, 1.0, 2.0, 3.0, 0.0]]
    same, _ = ImageBboxCrop((0, 0, 8, 3))(img, boxes)          # reaches the edge: unchanged
    assert same is img
    assert bbox_flip(onp.array([[1.0, 2.0, 3.0, 4.0]]), (8, 10), flip_y=True).tolist() == \
        [[1.0, 6.0, 3.0, 8.0]]
    kept = bbox_crop(onp.array([[0.0, 0.0, 4.0, 4.0]]), (3, 3, 5, 5), allow_outside_center=False)
    assert kept.shape == (0, 4)


def test_resize_and_expand():
    img, box = _img(), np.array([[2.0, 2.0, 4.0, 6.0, 3.0]])
    out, b = ImageBboxResize(16, 5)(img, box)
    assert out.shape == (5, 16, 3)
    assert b.asnumpy().tolist() == [[4.0, 1.0, 8.0, 3.0, 3.0]]
    random.seed(3)
    out, b = ImageBboxRandomExpand(p=1.0, max_ratio=3, fill=(1, 2, 3))(img, box)
    h, w = out.shape[:2]
    dx, dy = float(b[0, 0]) - 2.0, float(b[0, 1]) - 2.0
    assert h >= 10 and w >= 8 and dx == int(dx) and dy == int(dy)
    o = out.asnumpy()
    assert (o[int(dy):int(dy) + 10, int(dx):int(dx) + 8] == img.asnumpy()).all()
    outside = onp.ones((h, w), bool)
    outside[int(dy):int(dy) + 10, int(dx):int(dx) + 8] = False
    assert outside.any() and (o[outside] == [1, 2, 3]).all()
