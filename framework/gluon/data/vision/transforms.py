"""`gluon.data.vision.transforms`: image transforms as Blocks (MXNet 2.0's set, forward only).

Images are (H, W, C) or (N, H, W, C) until `ToTensor` makes float32 (C, H, W) tensors in [0, 1].
Each transform passes extra arguments through (`t(img, label)` → `(t(img), label)`), so they
compose with `Dataset.transform`. The HybridBlocks call `npx.image.*` operators and trace under
`hybridize()`. Differences from MXNet (its bugs): `RandomGray` and the saturation jitter use the
0.299/0.587/0.114 gray mix of all three channels.
"""
from __future__ import annotations

import random as _pyrandom
from numbers import Number
from typing import Any, Callable, Sequence

import numpy as _onp

from .... import image as _image
from .... import numpy as np
from .... import numpy_extension as npx
from ...block import Block
from ...hybrid_block import HybridBlock
from ...nn import HybridSequential, Sequential

__all__ = ["Compose", "HybridCompose", "Cast", "RandomApply", "HybridRandomApply", "ToTensor",
           "Normalize", "Rotate", "RandomRotation", "RandomResizedCrop", "CropResize",
           "RandomCrop", "CenterCrop", "Resize", "RandomFlipLeftRight", "RandomFlipTopBottom",
           "RandomBrightness", "RandomContrast", "RandomSaturation", "RandomHue",
           "RandomColorJitter", "RandomLighting", "RandomGray"]


def _with_rest(x: Any, *rest: Any) -> Any:
    return (x,) + rest if rest else x


def _pair(size: int | Sequence[int]) -> tuple[int, int]:
    return (size, size) if isinstance(size, Number) else tuple(size)


# -- containers -------------------------------------------------------------------------------
class Compose(Sequential):
    """Apply `transforms` (Blocks) one after another."""

    def __init__(self, transforms: Sequence[Block]):
        super().__init__()
        self.add(*transforms)


class HybridCompose(HybridSequential):
    """Apply hybridizable `transforms` one after another."""

    def __init__(self, transforms: Sequence[HybridBlock]):
        super().__init__()
        self.add(*transforms)


class RandomApply(Sequential):
    """Apply `transforms` (a Block or any callable) with probability `p`."""

    def __init__(self, transforms: Callable, p: float = 0.5):
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, x, *args):
        if self.p < _pyrandom.random():
            return _with_rest(x, *args)
        return _with_rest(self.transforms(x), *args)


class HybridRandomApply(HybridSequential):
    """`RandomApply` for a HybridBlock: both branches are computed and one is selected, so the
    choice stays random in a hybridized graph (the output must keep the input's shape)."""

    def __init__(self, transforms: HybridBlock, p: float = 0.5):
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, x, *args):
        return _with_rest(np.where(np.random.uniform() < self.p, self.transforms(x), x), *args)


class Cast(HybridBlock):
    """Cast to `dtype`."""

    def __init__(self, dtype: Any = "float32"):
        super().__init__()
        self._dtype = dtype

    def forward(self, x, *args):
        return _with_rest(x.astype(self._dtype), *args)


# -- tensor conversion ------------------------------------------------------------------------
class ToTensor(HybridBlock):
    """(H, W, C) [0, 255] → float32 (C, H, W) [0, 1]; batches (N, H, W, C) too."""

    def forward(self, x, *args):
        return _with_rest(npx.image.to_tensor(x), *args)


class Normalize(HybridBlock):
    """(x - mean) / std per channel of a (C, H, W) or (N, C, H, W) tensor."""

    def __init__(self, mean: float | Sequence[float] = 0.0, std: float | Sequence[float] = 1.0):
        super().__init__()
        self._mean, self._std = mean, std

    def forward(self, x, *args):
        return _with_rest(npx.image.normalize(x, self._mean, self._std), *args)


# -- geometry ---------------------------------------------------------------------------------
class Rotate(Block):
    """Rotate float32 (C, H, W) / (N, C, H, W) images by `rotation_degrees` (counter-clockwise)."""

    def __init__(self, rotation_degrees: float, zoom_in: bool = False, zoom_out: bool = False):
        super().__init__()
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x, *args):
        return _with_rest(_image.imrotate(x, *self._args), *args)


class RandomRotation(Block):
    """Rotate by an angle drawn from `angle_limits`, with probability `rotate_with_proba`."""

    def __init__(self, angle_limits: Sequence[float], zoom_in: bool = False,
                 zoom_out: bool = False, rotate_with_proba: float = 1.0):
        super().__init__()
        lo, hi = angle_limits
        if lo > hi:
            raise ValueError("`angle_limits` must be an ordered tuple")
        if not 0 <= rotate_with_proba <= 1:
            raise ValueError("Probability of rotating the image should be between 0 and 1")
        self._args = ((lo, hi), zoom_in, zoom_out)
        self._p = rotate_with_proba

    def forward(self, x, *args):
        if self._p < _onp.random.random():
            return _with_rest(x, *args)
        return _with_rest(_image.random_rotate(x, *self._args), *args)


class RandomResizedCrop(HybridBlock):
    """Crop a random box (`scale` of the area, aspect in `ratio`) resized to `size`."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        super().__init__()
        w, h = _pair(size)
        self._kwargs = {"width": w, "height": h, "area": scale, "ratio": ratio,
                        "interp": interpolation}

    def forward(self, x, *args):
        return _with_rest(npx.image.random_resized_crop(x, **self._kwargs), *args)


class CropResize(HybridBlock):
    """Crop the `width`×`height` box at (x, y), then resize it to `size` if given."""

    def __init__(self, x: int, y: int, width: int, height: int, size=None, interpolation=None):
        super().__init__()
        self._box = (x, y, width, height)
        self._size = size
        self._interp = 1 if interpolation is None else interpolation

    def forward(self, x, *args):
        out = npx.image.crop(x, *self._box)
        if self._size is not None:
            out = npx.image.resize(out, self._size, False, self._interp)
        return _with_rest(out, *args)


class RandomCrop(HybridBlock):
    """Pad by `pad` (int, or (top, bottom, left, right)) with `pad_value`, then crop a random
    box of `size` (upsampling an image smaller than `size`)."""

    def __init__(self, size, pad=None, pad_value=0, interpolation=1):
        super().__init__()
        w, h = _pair(size)
        self._args = ((0.0, 1.0), (0.0, 1.0), w, h, interpolation)
        self._pad_value = pad_value
        if isinstance(pad, Number):
            self._pad = ((pad, pad), (pad, pad), (0, 0))
        else:
            self._pad = None if pad is None else ((pad[0], pad[1]), (pad[2], pad[3]), (0, 0))

    def forward(self, x, *args):
        if self._pad:
            x = np.pad(x, self._pad, mode="constant", constant_values=self._pad_value)
        return _with_rest(npx.image.random_crop(x, *self._args), *args)


class CenterCrop(HybridBlock):
    """The central box of `size`'s aspect, resized to `size` (upsampling a smaller image)."""

    def __init__(self, size, interpolation=1):
        super().__init__()
        w, h = _pair(size)
        self._args = ((0.5, 0.5), (0.5, 0.5), w, h, interpolation)

    def forward(self, x, *args):
        return _with_rest(npx.image.random_crop(x, *self._args), *args)


class Resize(HybridBlock):
    """Resize to `size` = (width, height), or a square; with `keep_ratio` and one size the
    shorter side becomes `size`."""

    def __init__(self, size, keep_ratio: bool = False, interpolation: int = 1):
        super().__init__()
        self._args = (size, keep_ratio, interpolation)

    def forward(self, x, *args):
        return _with_rest(npx.image.resize(x, *self._args), *args)


def _variant(base: type, name: str, op: str, doc: str) -> type:
    """A public transform that is `base` applied with the `npx.image` operator `op`."""
    return type(name, (base,), {"_op": op, "__doc__": doc, "__module__": __name__})


class _RandomFlip(HybridBlock):
    _op = ""

    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, x, *args):
        if self.p <= 0:
            return _with_rest(x, *args)
        if self.p >= 1:
            return _with_rest(getattr(npx.image, self._op)(x), *args)
        return _with_rest(getattr(npx.image, "random_" + self._op)(x, p=self.p), *args)


RandomFlipLeftRight = _variant(_RandomFlip, "RandomFlipLeftRight", "flip_left_right",
                               "Mirror horizontally with probability `p`.")
RandomFlipTopBottom = _variant(_RandomFlip, "RandomFlipTopBottom", "flip_top_bottom",
                               "Flip vertically with probability `p`.")


# -- colour -----------------------------------------------------------------------------------
class _RandomEnhance(HybridBlock):
    _op = ""

    def __init__(self, amount: float):
        super().__init__()
        self._args = (max(0.0, 1.0 - amount), 1.0 + amount)

    def forward(self, x, *args):
        return _with_rest(getattr(npx.image, self._op)(x, *self._args), *args)


RandomBrightness = _variant(_RandomEnhance, "RandomBrightness", "random_brightness",
                            "Scale brightness by a factor in [1 - brightness, 1 + brightness].")
RandomContrast = _variant(_RandomEnhance, "RandomContrast", "random_contrast",
                          "Scale contrast by a factor in [1 - contrast, 1 + contrast].")
RandomSaturation = _variant(_RandomEnhance, "RandomSaturation", "random_saturation",
                            "Scale saturation by a factor in [1 - saturation, 1 + saturation].")
RandomHue = _variant(_RandomEnhance, "RandomHue", "random_hue",
                     "Shift the hue by a random number of turns (drawn from [1 - hue, 1 + hue], "
                     "as MXNet).")


class RandomColorJitter(HybridBlock):
    """Brightness, contrast, saturation and hue jitter in a random order."""

    def __init__(self, brightness=0.0, contrast=0.0, saturation=0.0, hue=0.0):
        super().__init__()
        self._args = (brightness, contrast, saturation, hue)

    def forward(self, x, *args):
        return _with_rest(npx.image.random_color_jitter(x, *self._args), *args)


class RandomLighting(HybridBlock):
    """AlexNet-style PCA lighting noise of strength `alpha`."""

    def __init__(self, alpha: float):
        super().__init__()
        self._alpha = alpha

    def forward(self, x, *args):
        return _with_rest(npx.image.random_lighting(x, self._alpha), *args)


class RandomGray(HybridBlock):
    """With probability `p`, MXNet 2's gray mix; the output is float32. MXNet's matrix gives
    output channel j the weight w_j times the sum of all input channels (w = 0.2989, 0.5870,
    0.114), not the luma in every channel; it is reproduced as MXNet computes it."""

    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = p

    def forward(self, x, *args):
        x = x.astype("float32")
        # made by np ops, so that a hybridized graph holds it as a constant
        mix = np.concatenate([np.full((3, 1), w) for w in (0.2989, 0.5870, 0.114)], axis=1)
        gray = np.dot(x, mix)
        return _with_rest(np.where(self.p < np.random.uniform(), x, gray), *args)
