"""Encoded images → a model input tensor, exactly as its config's `preprocess` declares.

Every image is opened lazily (Pillow reads only the header), its dimensions are checked against
the pixel limit, and only then decoded: a decompression bomb or an absurd header costs a few
bytes of parsing, never the allocation. Any problem is a `BadRequest` naming the input, the
image's position in the batch and what is wrong with it.
"""
from __future__ import annotations

import io
import warnings

import numpy as np
from PIL import Image, UnidentifiedImageError

from ..errors import BadRequest
from ..repository.config import ImagePreprocess
from .cvresize import resize_cubic
from .signature import IOSpec

FORMATS = ("JPEG", "PNG", "WEBP", "BMP")
_RESAMPLE = {"nearest": Image.Resampling.NEAREST, "bilinear": Image.Resampling.BILINEAR,
             "bicubic": Image.Resampling.BICUBIC}
# our own limit is checked first; Pillow's (a warning, an error at twice the value) must
# never be the one that speaks
Image.MAX_IMAGE_PIXELS = None


class ImagePipeline:
    """One input's preprocessing, checked against the input's declared shape at load."""

    def __init__(self, spec: IOSpec, pre: ImagePreprocess, model: str):
        self.name, self.pre = spec.name, pre
        self.dtype = spec.dtype
        where = f"model '{model}' input '{spec.name}': preprocess"
        shape = spec.shape
        if shape is None or len(shape) != 4:
            raise BadRequest(f"{where} needs a 4-d input shape (batch, channels, height, width "
                             f"in the declared layout), got {shape}")
        c, h, w = (shape[1], shape[2], shape[3]) if pre.layout == "NCHW" else \
            (shape[3], shape[1], shape[2])
        channels = 1 if pre.color == "GREY" else 3
        if c not in (-1, channels):
            raise BadRequest(f"{where}: color {pre.color} gives {channels} channels, the input "
                             f"shape {list(shape)} ({pre.layout}) has {c}")
        size = pre.size or [h, w]
        if any(d < 1 for d in size) or (pre.size and -1 not in (h, w) and [h, w] != pre.size):
            raise BadRequest(f"{where}: size {pre.size} does not fit the input shape "
                             f"{list(shape)} ({pre.layout}); declare size [height, width]")
        self.size = (int(size[0]), int(size[1]))
        self.shorter = pre.shorter_side or max(self.size)
        if pre.resize == "shorter" and self.shorter < max(self.size):
            raise BadRequest(f"{where}: shorter_side {self.shorter} is smaller than the crop "
                             f"{list(self.size)}")
        for what, vals in (("mean", pre.mean), ("std", pre.std)):
            if vals and len(vals) not in (1, channels):
                raise BadRequest(f"{where}: {what} has {len(vals)} values for {channels} channels")
        self.mean = np.asarray(pre.mean or [0.0], np.float32)
        self.std = np.asarray(pre.std or [1.0], np.float32)

    def __call__(self, images: np.ndarray, max_pixels: int) -> np.ndarray:
        """A BYTES array of encoded images (shape [N] or [N, 1]) → the (N, …) input tensor."""
        flat = images.reshape(-1)
        if images.ndim not in (1, 2) or flat.size != images.shape[0] or flat.size == 0:
            raise BadRequest(f"input '{self.name}': send encoded images as a BYTES tensor of "
                             f"shape [N] or [N, 1] (N ≥ 1), got {list(images.shape)}")
        out = np.stack([self.one(bytes(b), max_pixels, k) for k, b in enumerate(flat)])
        return out if out.dtype == self.dtype else out.astype(self.dtype)

    def one(self, data: bytes, max_pixels: int, k: int = 0) -> np.ndarray:
        where = f"input '{self.name}' image {k}"
        im = open_checked(data, max_pixels, where)
        im = self._resized(decode(im, "L" if self.pre.color == "GREY" else "RGB", where,
                                  self._draft_size(im.size)))
        arr = np.asarray(im, dtype=np.float32)
        arr = arr[..., None] if arr.ndim == 2 else arr
        if self.pre.color == "BGR":
            arr = arr[..., ::-1]
        arr = (arr * np.float32(self.pre.scale) - self.mean) / self.std
        return np.ascontiguousarray(arr.transpose(2, 0, 1) if self.pre.layout == "NCHW" else arr)

    def _draft_size(self, size: tuple[int, int]) -> tuple[int, int] | None:
        """The smallest (w, h) the resize needs: a JPEG may decode at 1/2, 1/4, 1/8 of its
        size (DCT scaling) when that still covers it — the bulk of the decode cost saved."""
        h, w = self.size
        if self.pre.resample == "opencv_cubic":
            return None                 # OpenCV resized the full decode: so must we
        if self.pre.resize == "exact":
            return (w, h)
        f = self.shorter / min(size)
        return (max(1, round(size[0] * f)), max(1, round(size[1] * f)))

    def _resize(self, im: Image.Image, size: tuple[int, int]) -> Image.Image:
        if self.pre.resample == "opencv_cubic":
            return resize_cubic(im, size)
        return im.resize(size, _RESAMPLE[self.pre.resample])

    def _resized(self, im: Image.Image) -> Image.Image:
        h, w = self.size
        if self.pre.resize == "exact":
            return self._resize(im, (w, h)) if im.size != (w, h) else im
        iw, ih = im.size
        f = self.shorter / min(iw, ih)
        nw, nh = max(w, round(iw * f)), max(h, round(ih * f))
        if (nw, nh) != (iw, ih):
            im = self._resize(im, (nw, nh))
        left, top = (nw - w) // 2, (nh - h) // 2
        return im.crop((left, top, left + w, top + h))


def open_checked(data: bytes, max_pixels: int, where: str) -> Image.Image:
    """The image's header only: its format and dimensions checked, nothing decoded yet."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            im = Image.open(io.BytesIO(data), formats=FORMATS)
    except UnidentifiedImageError:
        raise BadRequest(f"{where}: not an image in a supported format ({', '.join(FORMATS)}): "
                         f"{len(data)} bytes starting {data[:8]!r}") from None
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as e:
        raise BadRequest(f"{where}: unreadable image header: {e}"[:400]) from None
    w, h = im.size
    if w < 1 or h < 1 or w * h > max_pixels:
        raise BadRequest(f"{where}: {im.format} image of {w}x{h} pixels is over the limit of "
                         f"{max_pixels} pixels (MAX_IMAGE_PIXELS)" if w * h > max_pixels else
                         f"{where}: {im.format} image has no pixels ({w}x{h})")
    return im


def decode(im: Image.Image, mode: str, where: str, draft: tuple[int, int] | None = None
           ) -> Image.Image:
    """Decode (JPEG at a reduced scale when `draft` allows) and convert to `mode`."""
    fmt, size = im.format, im.size
    try:
        if draft is not None and fmt == "JPEG":
            im.draft(mode, draft)
        im.load()
        return im if im.mode == mode else im.convert(mode)
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as e:
        raise BadRequest(f"{where}: cannot decode {fmt} image ({size[0]}x{size[1]}): {e}"[:400]
                         ) from None
