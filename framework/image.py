"""`mx.image`: MXNet's image helpers on (H, W, C) arrays, over the registry's image operators
(`_image_resize`, `_image_crop`, `BilinearSampler`), and imdecode/imread (Pillow decodes)."""
from __future__ import annotations

import io
import math
import random as _pyrandom
from numbers import Number

import numpy as _onp
from PIL import Image as _PILImage

from . import numpy as _np
from .dispatch import invoke
from .ndarray import ndarray

__all__ = ["imdecode", "imread", "imresize", "resize_short", "fixed_crop", "center_crop", "random_crop",
           "color_normalize", "imrotate", "random_rotate", "scale_down"]


def imdecode(buf, flag: int = 1, to_rgb: bool = True, out=None) -> ndarray:
    """Encoded image bytes → uint8 (H, W, 3) (flag 1; BGR unless to_rgb) or (H, W, 1) (flag 0)."""
    if isinstance(buf, ndarray):
        buf = buf._data.tobytes()
    img = _PILImage.open(io.BytesIO(bytes(buf)))
    arr = _onp.asarray(img.convert("RGB" if flag else "L"))
    arr = arr[:, :, None] if not flag else (arr if to_rgb else arr[:, :, ::-1])
    return ndarray(_onp.ascontiguousarray(arr))


def imread(filename: str, flag: int = 1, to_rgb: bool = True, out=None) -> ndarray:
    """Read and decode an image file (see imdecode)."""
    with open(filename, "rb") as f:
        return imdecode(f.read(), flag, to_rgb)


def imresize(src, w: int, h: int, interp: int = 1) -> ndarray:
    """Resize to width `w` and height `h` (OpenCV's interpolation codes: 0 nearest, 1 bilinear,
    2 bicubic, 3 area)."""
    return invoke("_image_resize", [src], {"size": (w, h), "interp": interp})


def resize_short(src, size: int, interp: int = 2) -> ndarray:
    """Resize so that the shorter side is `size`, keeping the aspect ratio."""
    h, w = src.shape[-3:-1]
    if h > w:
        return imresize(src, size, size * h // w, interp)
    return imresize(src, size * w // h, size, interp)


def fixed_crop(src, x0: int, y0: int, w: int, h: int, size=None, interp: int = 2) -> ndarray:
    """The `w`×`h` box at (x0, y0), resized to `size` = (width, height) if given."""
    out = invoke("_image_crop", [src], {"x": x0, "y": y0, "width": w, "height": h})
    if size is not None and (w, h) != tuple(size):
        out = imresize(out, size[0], size[1], interp)
    return out


def scale_down(src_size: tuple, size: tuple) -> tuple[int, int]:
    """Shrink `size` = (w, h) to fit inside `src_size` = (w, h), keeping its aspect ratio."""
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def center_crop(src, size: tuple, interp: int = 2):
    """The central box of aspect `size` = (w, h), resized to `size`; returns (image, box)."""
    h, w = src.shape[-3:-1]
    new_w, new_h = scale_down((w, h), size)
    x0, y0 = (w - new_w) // 2, (h - new_h) // 2
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def random_crop(src, size: tuple, interp: int = 2):
    """A box of aspect `size` at a random position, resized to `size`; returns (image, box)."""
    h, w = src.shape[-3:-1]
    new_w, new_h = scale_down((w, h), size)
    x0, y0 = _pyrandom.randint(0, w - new_w), _pyrandom.randint(0, h - new_h)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def color_normalize(src, mean, std=None) -> ndarray:
    """(src - mean) / std."""
    out = src - mean if mean is not None else src
    return out / std if std is not None else out


def imrotate(src, rotation_degrees, zoom_in: bool = False, zoom_out: bool = False) -> ndarray:
    """Rotate float32 CHW (or NCHW) images counter-clockwise by `rotation_degrees` (a number, or
    one angle per image) about their centre; uncovered pixels are 0. `zoom_in` scales so that no
    padding shows, `zoom_out` so that the whole image stays visible."""
    if zoom_in and zoom_out:
        raise ValueError("`zoom_in` and `zoom_out` cannot be both True")
    if _onp.dtype(src.dtype) != _onp.float32:
        raise TypeError("Only `float32` images are supported by this function")
    single = src.ndim == 3
    if single and not isinstance(rotation_degrees, Number):
        raise TypeError("When a single image is passed the rotation angle is required to be "
                        "a scalar.")
    if src.ndim not in (3, 4):
        raise ValueError("Only 3D and 4D are supported by this function")
    batch = _np.expand_dims(src, 0) if single else src
    n, _, h, w = batch.shape
    angles = _onp.broadcast_to(_onp.asarray(rotation_degrees, _onp.float64).ravel(), (n,)) \
        if isinstance(rotation_degrees, Number) else _onp.asarray(rotation_degrees).ravel()
    if len(angles) != n:
        raise ValueError("The number of images must be equal to the number of rotation angles")
    grid = _rotation_grid(h, w, _onp.deg2rad(angles), zoom_in, zoom_out)
    out = invoke("BilinearSampler", [batch, grid.astype(_onp.float32)])
    return out[0] if single else out


def _rotation_grid(h: int, w: int, rad: _onp.ndarray, zoom_in: bool, zoom_out: bool):
    """(N, 2, H, W) sampling grid in [-1, 1] for rotations by `rad` about the image centre."""
    hs, ws = (h - 1) / 2, (w - 1) / 2
    yy, xx = _onp.meshgrid(_onp.arange(h) - hs, _onp.arange(w) - ws, indexing="ij")
    c, s = _onp.cos(rad)[:, None, None], _onp.sin(rad)[:, None, None]
    gx = (xx * c - yy * s) / ws
    gy = (xx * s + yy * c) / hs
    scale = 1.0
    if zoom_in or zoom_out:
        rho, ang = math.hypot(h, w), math.atan(h / w)
        a = _onp.abs(rad)
        max_x = _onp.maximum(_onp.abs(rho * _onp.cos(ang + a)), _onp.abs(rho * _onp.cos(ang - a)))
        max_y = _onp.maximum(_onp.abs(rho * _onp.sin(ang + a)), _onp.abs(rho * _onp.sin(ang - a)))
        scale = (_onp.maximum(max_x / w, max_y / h) if zoom_out
                 else _onp.minimum(w / max_x, h / max_y))[:, None, None]
    return _onp.stack([gx * scale, gy * scale], axis=1)


def random_rotate(src, angle_limits: tuple, zoom_in: bool = False,
                  zoom_out: bool = False) -> ndarray:
    """`imrotate` by an angle drawn uniformly from `angle_limits` (one per image)."""
    n = None if src.ndim == 3 else src.shape[0]
    angles = _onp.random.uniform(*angle_limits, size=n)
    return imrotate(src, float(angles) if n is None else angles, zoom_in, zoom_out)
