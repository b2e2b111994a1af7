"""MXNet's image operators (`_image_*`, `npx.image.*`): the forward computations behind
`gluon.data.vision.transforms`. Images are (H, W, C) or (N, H, W, C) with C in {1, 3}, except
`normalize`, which takes tensors (C, H, W) / (N, C, H, W) as `to_tensor` makes them.

Random operators draw from `mx.random`'s generator. One deliberate difference: MXNet's
saturation adjustment takes only the blue channel's share for its gray value (a bug); here gray is
the full 0.299/0.587/0.114 mix, as for contrast.
"""
from __future__ import annotations

import math

import numpy as np

from ... import random as _random
from ...base import OperatorError
from ..common import truncate_to
from .._kernels.resample import resize_hwc, saturate
from ..attrs import Float, FloatTuple, Int, Shape, Bool
from ..registry import register

_GRAY = np.array([0.299, 0.587, 0.114], np.float32)


def _names(stem: str) -> tuple[str, str]:
    return f"_image_{stem}", f"_npx__image_{stem}"


def _image_shape(op: str, shape: tuple, channels_last: bool = True) -> tuple[int, int, int]:
    """(height, width, channels) of an image or batch of images, checked as MXNet checks."""
    if len(shape) not in (3, 4):
        layout = "(H, W, C) or (N, H, W, C)" if channels_last else "(C, H, W) or (N, C, H, W)"
        raise OperatorError(f"{op}: expects an image of shape {layout}, got {tuple(shape)}")
    h, w, c = shape[-3:] if channels_last else (shape[-2], shape[-1], shape[-3])
    if c not in (1, 3):
        raise OperatorError(f"{op}: expects 1 or 3 channels, got {c} (shape {tuple(shape)})")
    return h, w, c


def _with_hw(shape: tuple, h: int, w: int) -> tuple:
    return tuple(shape[:-3]) + (h, w, shape[-1])


def same_image_shape(op: str):
    """`infer_shape` of an op that keeps its image's shape (flips, colour jitter)."""
    def infer(a, s):
        _image_shape(op, s[0])
        return [tuple(s[0])]
    return infer


# -- layout and normalisation -----------------------------------------------------------------
def _to_tensor_shape(a, s):
    _image_shape("to_tensor", s[0])
    x = s[0]
    return [(x[2], x[0], x[1]) if len(x) == 3 else (x[0], x[3], x[1], x[2])]


@register(*_names("to_tensor"), attrs={}, infer_shape=_to_tensor_shape,
          infer_type=lambda a, d: [np.dtype(np.float32)])
def to_tensor(a, x):
    """HWC (or NHWC) in [0, 255] → float32 CHW (NCHW) in [0, 1]."""
    _image_shape("to_tensor", x.shape)
    return np.moveaxis(x.astype(np.float32) / np.float32(255.0), -1, -3)


def _normalize_shape(a, s):
    _check_normalize(a, s[0])
    return [tuple(s[0])]


def _check_normalize(a, shape):
    _, _, c = _image_shape("normalize", shape, channels_last=False)
    for name in ("mean", "std"):
        if len(getattr(a, name)) not in (1, c, 4):
            raise OperatorError(f"normalize: {name} must have 1 or {c} values, "
                                f"got {getattr(a, name)}")
    return c


@register(*_names("normalize"),
          attrs={"mean": FloatTuple((0.0, 0.0, 0.0, 0.0)), "std": FloatTuple((1.0, 1.0, 1.0, 1.0))},
          infer_shape=_normalize_shape)
def normalize(a, x):
    """(x - mean[c]) / std[c] over the channel axis of a CHW / NCHW tensor."""
    c = _check_normalize(a, x.shape)
    mean = np.resize(np.asarray(a.mean, np.float64), c)
    std = np.resize(np.asarray(a.std, np.float64), c)
    out = (x - mean.reshape(c, 1, 1)) / std.reshape(c, 1, 1)
    return truncate_to(x.dtype, out)   # MXNet: the output has the input's dtype, uint8 included


# -- geometry ---------------------------------------------------------------------------------
def _resize_hw(a, shape) -> tuple[int, int]:
    h, w, _ = _image_shape("resize", shape)
    size = a.size
    if len(size) not in (1, 2):
        raise OperatorError(f"resize: size must have 1 or 2 values, got {size}")
    if any(v <= 0 for v in size):
        raise OperatorError(f"resize: size must be positive, got {size}")
    if len(size) == 2:
        return size[1], size[0]
    if not a.keep_ratio:
        return size[0], size[0]
    if h > w:
        return h * size[0] // w, size[0]
    return size[0], w * size[0] // h


@register(*_names("resize"), attrs={"size": Shape(()), "keep_ratio": Bool(False),
                                    "interp": Int(1)},
          infer_shape=lambda a, s: [_with_hw(s[0], *_resize_hw(a, s[0]))])
def resize(a, x):
    """Resize to `size` = (width, height), or a square `size`; with `keep_ratio` and one size,
    the shorter side becomes `size`."""
    return resize_hwc(x, *_resize_hw(a, x.shape), a.interp)


def _crop_box(a, shape):
    h, w, _ = _image_shape("crop", shape)
    if a.width <= 0 or a.height <= 0:
        raise OperatorError(f"crop: width and height must be positive, got {a.width}x{a.height}")
    if a.x < 0 or a.y < 0 or a.x + a.width > w or a.y + a.height > h:
        raise OperatorError(f"crop: box x={a.x} y={a.y} {a.width}x{a.height} exceeds the "
                            f"{w}x{h} image")


@register(*_names("crop"), attrs={"x": Int(), "y": Int(), "width": Int(), "height": Int()},
          infer_shape=lambda a, s: (_crop_box(a, s[0]), [_with_hw(s[0], a.height, a.width)])[1])
def crop(a, x):
    """The `width`×`height` box whose top-left corner is (x, y)."""
    _crop_box(a, x.shape)
    return x[..., a.y:a.y + a.height, a.x:a.x + a.width, :].copy()


def _flip(axis_from_end: int):
    def kernel(a, x):
        _image_shape("flip", x.shape)
        return np.flip(x, axis=x.ndim - axis_from_end).copy()
    return kernel


register(*_names("flip_left_right"), attrs={}, infer_shape=same_image_shape("flip"))(_flip(2))
register(*_names("flip_top_bottom"), attrs={}, infer_shape=same_image_shape("flip"))(_flip(3))


def _random_flip(axis_from_end: int):
    flip = _flip(axis_from_end)

    def kernel(a, x):
        return flip(a, x) if _random.generator().random() < a.p else x.copy()
    return kernel


register(*_names("random_flip_left_right"), attrs={"p": Float(0.5)}, random=True,
         infer_shape=same_image_shape("flip"))(_random_flip(2))
register(*_names("random_flip_top_bottom"), attrs={"p": Float(0.5)}, random=True,
         infer_shape=same_image_shape("flip"))(_random_flip(3))


def _fit_inside(src_w: int, src_h: int, w: int, h: int) -> tuple[int, int]:
    """The largest box of aspect w:h inside the source (MXNet's crop-then-resize rule)."""
    fw, fh = float(w), float(h)
    if src_h < fh:
        fw, fh = fw * src_h / fh, float(src_h)
    if src_w < fw:
        fw, fh = float(src_w), fh * src_w / fw
    return int(fw), int(fh)


@register(*_names("random_crop"),
          attrs={"xrange": FloatTuple((0.0, 1.0)), "yrange": FloatTuple((0.0, 1.0)),
                 "width": Int(), "height": Int(), "interp": Int(1)},
          infer_shape=lambda a, s: [_with_hw(s[0], a.height, a.width)], random=True)
def random_crop(a, x):
    """Crop a box of the target's aspect at a random position (fractions of the free room drawn
    from `xrange`/`yrange`), resized to `width`×`height` (upsampling a small image)."""
    h, w, _ = _image_shape("random_crop", x.shape)
    if a.width <= 0 or a.height <= 0:
        raise OperatorError(f"random_crop: width and height must be positive")
    cw, ch = _fit_inside(w, h, a.width, a.height)
    g = _random.generator()
    x0 = int(g.uniform(*a.xrange) * (w - cw))
    y0 = int(g.uniform(*a.yrange) * (h - ch))
    return resize_hwc(x[..., y0:y0 + ch, x0:x0 + cw, :], a.height, a.width, a.interp)


@register(*_names("random_resized_crop"),
          attrs={"width": Int(), "height": Int(), "area": FloatTuple((0.08, 1.0)),
                 "ratio": FloatTuple((0.75, 4.0 / 3.0)), "interp": Int(1), "max_trial": Int(10)},
          infer_shape=lambda a, s: [_with_hw(s[0], a.height, a.width)], random=True)
def random_resized_crop(a, x):
    """Inception-style crop: a random box covering `area` of the image with aspect in `ratio`
    (up to `max_trial` draws, then a centre crop), resized to `width`×`height`."""
    h, w, _ = _image_shape("random_resized_crop", x.shape)
    g = _random.generator()
    area = (a.area, a.area) if isinstance(a.area, float) or len(a.area) == 1 else a.area
    for _ in range(a.max_trial):
        target = g.uniform(area[0], area[-1]) * w * h
        ratio = math.exp(g.uniform(math.log(a.ratio[0]), math.log(a.ratio[1])))
        cw, ch = round(math.sqrt(target * ratio)), round(math.sqrt(target / ratio))
        if 0 < cw <= w and 0 < ch <= h:
            x0, y0 = int(g.uniform() * (w - cw)), int(g.uniform() * (h - ch))
            break
    else:
        cw, ch = _fit_inside(w, h, a.width, a.height)
        x0, y0 = (w - cw) // 2, (h - ch) // 2
    return resize_hwc(x[..., y0:y0 + ch, x0:x0 + cw, :], a.height, a.width, a.interp)
