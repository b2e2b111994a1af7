"""MXNet's colour-jitter image operators (`_image_random_brightness`, …, `_image_random_lighting`)
on (H, W, C) / (N, H, W, C) images; one-channel images pass through hue, saturation and lighting
unchanged, as in MXNet. Integer images are rounded and saturated back to their dtype."""
from __future__ import annotations

import numpy as np

from ... import random as _random
from .._kernels.resample import saturate
from ..attrs import Float, FloatTuple
from .transforms import _GRAY, _image_shape, _names, same_image_shape
from ..registry import register

# AlexNet's PCA lighting: eigenvectors scaled by the eigenvalues of ImageNet's RGB covariance
_EIG = (np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
                  [-0.5836, -0.6948, 0.4203]]) * np.array([55.46, 4.794, 1.148])).astype(np.float32)


def _gray(x: np.ndarray) -> np.ndarray:
    return (x[..., :3] @ _GRAY)[..., None] if x.shape[-1] == 3 else x


def brightness(x: np.ndarray, alpha: float) -> np.ndarray:
    return x * np.float32(alpha)


def contrast(x: np.ndarray, alpha: float) -> np.ndarray:
    mean = _gray(x).mean(axis=(-3, -2, -1), keepdims=True)
    return x * np.float32(alpha) + (1 - np.float32(alpha)) * mean


def saturation(x: np.ndarray, alpha: float) -> np.ndarray:
    if x.shape[-1] == 1:
        return x
    return x * np.float32(alpha) + (1 - np.float32(alpha)) * _gray(x)


def hue(x: np.ndarray, alpha: float) -> np.ndarray:
    """Rotate the hue by `alpha` turns, through HLS (the conversion MXNet uses)."""
    if x.shape[-1] == 1:
        return x
    rgb = x / np.float32(255.0)
    vmax, vmin = rgb.max(-1), rgb.min(-1)
    diff, light = vmax - vmin, (vmax + vmin) / 2
    safe = np.where(diff > np.finfo(np.float32).eps, diff, 1.0)
    sat = np.where(light < 0.5, diff / np.maximum(vmax + vmin, 1e-12),
                   diff / np.maximum(2.0 - vmax - vmin, 1e-12))
    r, g, b = np.moveaxis(rgb, -1, 0)
    h = np.where(vmax == r, (g - b) / safe * 60,
                 np.where(vmax == g, (b - r) / safe * 60 + 120, (r - g) / safe * 60 + 240))
    h = np.where(diff > np.finfo(np.float32).eps, h, 0.0)
    sat = np.where(diff > np.finfo(np.float32).eps, sat, 0.0)
    h = np.mod(h + alpha * 360.0, 360.0) / 60.0
    p2 = np.where(light <= 0.5, light * (1 + sat), light + sat - light * sat)
    p1 = 2 * light - p2

    def channel(offset):   # the standard HLS → RGB sector formula
        t = np.mod(h + offset, 6.0)
        return np.where(t < 1, p1 + (p2 - p1) * t, np.where(t < 3, p2, np.where(
            t < 4, p1 + (p2 - p1) * (4 - t), p1)))
    out = np.stack([channel(2.0), channel(0.0), channel(4.0)], axis=-1)
    return np.where((sat == 0)[..., None], rgb, out) * np.float32(255.0)


def _enhance(stem: str, fn):
    @register(*_names(f"random_{stem}"), attrs={"min_factor": Float(), "max_factor": Float()},
              random=True, infer_shape=same_image_shape(f"random_{stem}"))
    def kernel(a, x):
        _image_shape(f"random_{stem}", x.shape)
        alpha = _random.generator().uniform(a.min_factor, a.max_factor)
        return saturate(fn(x.astype(np.float32), alpha), x.dtype)
    kernel.__doc__ = f"{stem} adjusted by a factor drawn from [min_factor, max_factor]."
    return kernel


_enhance("brightness", brightness)
_enhance("contrast", contrast)
_enhance("saturation", saturation)
_enhance("hue", lambda x, alpha: hue(x, alpha))


@register(*_names("random_color_jitter"),
          attrs={"brightness": Float(), "contrast": Float(), "saturation": Float(),
                 "hue": Float()}, random=True, infer_shape=same_image_shape("random_color_jitter"))
def random_color_jitter(a, x):
    """Brightness, contrast and saturation factors 1 ± U(amount) and a hue shift of U(±hue)
    turns, applied in a random order (amounts of 0 are skipped)."""
    _image_shape("random_color_jitter", x.shape)
    g = _random.generator()
    steps = [(brightness, a.brightness, 1.0), (contrast, a.contrast, 1.0),
             (saturation, a.saturation, 1.0), (hue, a.hue, 0.0)]
    out = x.astype(np.float32)
    for i in g.permutation(4):
        fn, amount, base = steps[i]
        if amount > 0:
            out = fn(out, base + g.uniform(-amount, amount))
    return saturate(out, x.dtype)


def lighting(x: np.ndarray, alpha) -> np.ndarray:
    if x.shape[-1] == 1:
        return x.copy()
    return saturate(x.astype(np.float32) + _EIG @ np.asarray(alpha, np.float32), x.dtype)


@register(*_names("adjust_lighting"), attrs={"alpha": FloatTuple()},
          infer_shape=same_image_shape("adjust_lighting"))
def adjust_lighting(a, x):
    """Add AlexNet's PCA lighting noise with the given three alphas."""
    _image_shape("adjust_lighting", x.shape)
    return lighting(x, a.alpha)


@register(*_names("random_lighting"), attrs={"alpha_std": Float(0.05)}, random=True,
          infer_shape=same_image_shape("random_lighting"))
def random_lighting(a, x):
    """AlexNet's PCA lighting noise with alphas drawn from N(0, alpha_std)."""
    _image_shape("random_lighting", x.shape)
    return lighting(x, _random.generator().normal(0.0, a.alpha_std, 3))
