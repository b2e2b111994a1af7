"""Image preprocessing (runtime/images.py): each declared step, batches, and bad images refused
by their header before anything is decoded."""
from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from service.errors import BadRequest
from service.repository.config import ImagePreprocess, parse_config
from service.runtime.images import ImagePipeline
from service.runtime.signature import IOSpec

LIMIT = 10_000_000


def encode(arr: np.ndarray, fmt: str = "PNG") -> bytes:
    b = io.BytesIO()
    Image.fromarray(arr).save(b, fmt)
    return b.getvalue()


def batch(*blobs: bytes) -> np.ndarray:
    out = np.empty(len(blobs), dtype=object)
    out[:] = list(blobs)
    return out


def pipeline(shape, datatype="FP32", **pre) -> ImagePipeline:
    return ImagePipeline(IOSpec("data", datatype, tuple(shape)),
                         ImagePreprocess(type="image", **pre), "m")


def gradient(h: int, w: int) -> np.ndarray:
    """An RGB image whose every pixel is distinct per channel (so crops and channel orders
    are visible in the result)."""
    y, x = np.mgrid[0:h, 0:w]
    return np.stack([(x * 3) % 256, (y * 5) % 256, (x + y) % 256], axis=-1).astype(np.uint8)


def test_shorter_side_then_centre_crop_scale_mean_std_nchw():
    img = gradient(64, 80)                 # shorter side already 64: no resampling, only a crop
    p = pipeline([-1, 3, 64, 64], shorter_side=64, size=[64, 64], scale=1 / 255,
                 mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    got = p(batch(encode(img)), LIMIT)
    crop = img[:, 8:72].astype(np.float32) / 255
    want = ((crop - [0.485, 0.456, 0.406]) / [0.229, 0.224, 0.225]).transpose(2, 0, 1)[None]
    assert got.shape == (1, 3, 64, 64) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_bgr_nhwc_exact_and_a_batch_is_a_batch():
    a, b = gradient(32, 32), gradient(32, 32)[::-1].copy()
    p = pipeline([-1, 32, 32, 3], color="BGR", resize="exact", layout="NHWC", scale=1.0)
    got = p(batch(encode(a), encode(b)), LIMIT)
    assert got.shape == (2, 32, 32, 3)
    np.testing.assert_array_equal(got[0], a[..., ::-1])
    np.testing.assert_array_equal(got[1], b[..., ::-1])


def test_exact_resize_matches_pillow_and_grey_uint8():
    img = gradient(50, 70)
    p = pipeline([-1, 1, 20, 30], datatype="UINT8", color="GREY", resize="exact", scale=1.0)
    got = p(batch(encode(img)).reshape(1, 1), LIMIT)
    want = np.asarray(Image.fromarray(img).convert("L").resize((30, 20), Image.BILINEAR))
    assert got.dtype == np.uint8 and got.shape == (1, 1, 20, 30)
    np.testing.assert_array_equal(got[0, 0], want)


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP", "BMP"])
def test_every_format_decodes(fmt):
    img = np.full((40, 48, 3), (200, 30, 30), np.uint8)
    got = pipeline([-1, 3, 32, 32], scale=1.0)(batch(encode(img, fmt)), LIMIT)
    assert np.abs(got[0].mean(axis=(1, 2)) - [200, 30, 30]).max() < 4    # JPEG/WebP are lossy


def _png_header_only(w: int, h: int) -> bytes:
    """A PNG whose header claims w×h pixels, with a tiny (wrong) image stream."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 7))
            + chunk(b"IEND", b""))


def noise(h: int, w: int) -> np.ndarray:
    return np.random.default_rng(0).integers(0, 256, (h, w, 3), dtype=np.uint8)


def _half(blob: bytes) -> bytes:
    return blob[:len(blob) // 2]


@pytest.mark.parametrize("blob, needle", [
    (b"hello, not an image", "not an image in a supported format"),
    (_png_header_only(100_000, 100_000), "over the limit of 10000000 pixels"),
    (_png_header_only(5000, 2001), "over the limit of 10000000 pixels"),
    (encode(gradient(64, 64), "JPEG")[:300], "unreadable image header: Truncated"),
    (_half(encode(noise(96, 128), "JPEG")), "cannot decode JPEG image (128x96)"),
    (_png_header_only(16, 16), "cannot decode PNG image (16x16)"),
    (b"GIF89a" + b"\0" * 40, "not an image in a supported format"),
])
def test_bad_images_are_400_naming_the_problem(blob, needle):
    p = pipeline([-1, 3, 8, 8])
    with pytest.raises(BadRequest) as e:
        p(batch(encode(gradient(8, 8)), blob), LIMIT)
    assert e.value.status == 400
    assert needle in e.value.message and "input 'data' image 1" in e.value.message


def test_bomb_is_refused_before_decoding(monkeypatch):
    decoded = []
    monkeypatch.setattr(Image.Image, "load", lambda self: decoded.append(self.size))
    with pytest.raises(BadRequest, match="over the limit"):
        pipeline([-1, 3, 8, 8])(batch(_png_header_only(20_000, 20_000)), LIMIT)
    assert decoded == []


def test_wrong_tensor_shape_of_images():
    with pytest.raises(BadRequest, match=r"shape \[N\] or \[N, 1\]"):
        pipeline([-1, 3, 8, 8])(batch(b"a", b"b").reshape(1, 2), LIMIT)


@pytest.mark.parametrize("shape, pre, needle", [
    ([-1, 3, 8], {}, "4-d input shape"),
    ([-1, 1, 8, 8], {"color": "RGB"}, "gives 3 channels"),
    ([-1, 3, -1, -1], {}, "declare size"),
    ([-1, 3, 8, 8], {"size": [9, 9]}, "does not fit the input shape"),
    ([-1, 3, 8, 8], {"shorter_side": 4}, "smaller than the crop"),
    ([-1, 3, 8, 8], {"mean": [0.1, 0.2]}, "mean has 2 values for 3 channels"),
])
def test_declarations_are_checked_against_the_input(shape, pre, needle):
    with pytest.raises(BadRequest, match=needle):
        pipeline(shape, **pre)


def test_config_keeps_preprocess_and_labels_in_triton_form():
    cfg = parse_config({"input": [{"name": "data", "data_type": "TYPE_FP32", "dims": [3, 8, 8],
                                   "preprocess": {"type": "image", "std": [0.5]}}],
                        "output": [{"name": "prob", "data_type": "TYPE_FP32", "dims": [4],
                                    "label_filename": "labels.txt"}],
                        "max_batch_size": 4})
    assert cfg.inputs[0].preprocess.std == [0.5]
    assert cfg.to_triton()["output"][0]["label_filename"] == "labels.txt"
    with pytest.raises(BadRequest, match="label_filename belongs to outputs"):
        parse_config({"inputs": [{"name": "x", "label_filename": "l.txt"}]})
    with pytest.raises(BadRequest, match="std values must be non-zero"):
        parse_config({"inputs": [{"name": "x", "preprocess": {"type": "image", "std": [0]}}]})
