"""gluon.data.vision.transforms, npx.image and mx.image: shapes, formulas and errors checked
against direct NumPy computations (numerics against real MXNet: tests/ops/test_image_refs.py)."""
import numpy as onp
import pytest

import framework as mx
from framework import image
from framework.base import MXNetError
from framework.gluon.data import ArrayDataset, DataLoader
from framework.gluon.data.vision import transforms as T
from framework.ops.image.color import saturation


def _img(h=12, w=9, dtype="uint8", seed=0):
    return onp.random.RandomState(seed).uniform(0, 255, (h, w, 3)).astype(dtype)


def test_to_tensor_then_normalize_hybridized():
    x = _img()
    net = T.HybridCompose([T.ToTensor(), T.Normalize((0.5, 0.4, 0.3), (2.0, 1.0, 0.5))])
    net.hybridize()
    out = net(mx.np.array(x, dtype=x.dtype)).asnumpy()
    ref = (x.transpose(2, 0, 1) / 255.0 - onp.array([0.5, 0.4, 0.3])[:, None, None]) \
        / onp.array([2.0, 1.0, 0.5])[:, None, None]
    assert out.dtype == onp.float32
    onp.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("bad", [
    lambda: T.ToTensor()(mx.np.zeros((1, 2, 4, 4, 3), dtype="uint8")),
    lambda: T.Normalize(0.5, 2.0)(mx.np.zeros((2, 4, 5, 5))),
    lambda: T.Resize(-3)(mx.np.zeros((4, 4, 3))),
    lambda: T.Resize((2, 2, 2))(mx.np.zeros((4, 4, 3))),
    lambda: T.CropResize(3, 3, 4, 4)(mx.np.zeros((5, 5, 3))),
])
def test_bad_inputs_raise_mxnet_error(bad):
    with pytest.raises(MXNetError):
        bad()


def test_resize_sizes():
    x = mx.np.array(_img(12, 9))
    assert T.Resize(6)(x).shape == (6, 6, 3)
    assert T.Resize((5, 7))(x).shape == (7, 5, 3)              # (width, height)
    assert T.Resize(6, keep_ratio=True)(x).shape == (8, 6, 3)  # shorter side → 6
    assert T.Resize(4)(mx.np.zeros((2, 8, 8, 3))).shape == (2, 4, 4, 3)


def test_resize_nearest_halving_picks_even_pixels():
    x = _img(8, 6)
    out = T.Resize((3, 4), interpolation=0)(mx.np.array(x, dtype=x.dtype)).asnumpy()
    assert (out == x[::2, ::2]).all()


def test_crops():
    x = _img(12, 9)
    assert (T.CropResize(2, 3, 4, 5)(mx.np.array(x, dtype=x.dtype)).asnumpy() == x[3:8, 2:6]).all()
    assert (T.CenterCrop((5, 6))(mx.np.array(x, dtype=x.dtype)).asnumpy() == x[3:9, 2:7]).all()
    padded = T.RandomCrop(9, pad=2, pad_value=7)(mx.np.array(x, dtype=x.dtype))
    assert padded.shape == (9, 9, 3)
    out = T.RandomResizedCrop(5)(mx.np.array(x, dtype=x.dtype))
    assert out.shape == (5, 5, 3) and out.dtype == onp.uint8


def test_flips():
    x = _img()
    assert (T.RandomFlipLeftRight(1.0)(mx.np.array(x, dtype=x.dtype)).asnumpy() == x[:, ::-1]).all()
    assert (T.RandomFlipTopBottom(1.0)(mx.np.array(x, dtype=x.dtype)).asnumpy() == x[::-1]).all()
    assert (T.RandomFlipLeftRight(0.0)(mx.np.array(x, dtype=x.dtype)).asnumpy() == x).all()
    mx.random.seed(5)
    flip = T.RandomFlipLeftRight(0.3)
    hits = sum(bool((flip(mx.np.array(x, dtype=x.dtype)).asnumpy() != x).any()) for _ in range(400))
    assert 80 < hits < 160


def test_colour_jitter_factors():
    x = _img(dtype="float32")
    assert (T.RandomBrightness(0.0)(mx.np.array(x, dtype=x.dtype)).asnumpy() == x).all()
    onp.testing.assert_allclose(T.RandomColorJitter()(mx.np.array(x, dtype=x.dtype)).asnumpy(), x)
    gray = x @ onp.array([0.299, 0.587, 0.114])
    onp.testing.assert_allclose(saturation(x, 0.0), onp.repeat(gray[..., None], 3, -1), rtol=1e-5)
    out = T.RandomLighting(0.1)(mx.np.array(_img(), dtype="uint8"))
    assert out.shape == (12, 9, 3) and out.dtype == onp.uint8


@pytest.mark.parametrize("hybridize", [False, True])
def test_random_gray(hybridize):
    x = _img()       # MXNet 2's mix: channel j = w_j * (r + g + b)
    total = x.astype(onp.float32).sum(-1, keepdims=True)
    want = total * onp.array([0.2989, 0.5870, 0.114], onp.float32)
    always, half = T.RandomGray(1.0), T.RandomGray(0.5)
    if hybridize:
        always.hybridize()
        half.hybridize()
    out = always(mx.np.array(x, dtype=x.dtype)).asnumpy()
    onp.testing.assert_allclose(out, want, rtol=1e-5)
    mx.random.seed(4)
    grays = sum(bool((half(mx.np.array(x, dtype=x.dtype)).asnumpy() != x).any()) for _ in range(200))
    assert 70 < grays < 130


def test_rotate_quarter_turn_is_rot90():
    x = onp.random.RandomState(1).rand(2, 7, 7).astype("float32")
    out = T.Rotate(90.0)(mx.np.array(x, dtype=x.dtype)).asnumpy()
    onp.testing.assert_allclose(out, onp.rot90(x, 1, axes=(1, 2)), atol=1e-5)
    with pytest.raises(TypeError):
        T.Rotate(10.0)(mx.np.ones((3, 5, 5), dtype="uint8"))
    with pytest.raises(ValueError):
        T.RandomRotation((10, -10))
    with pytest.raises(ValueError):
        T.RandomRotation((-10, 10), rotate_with_proba=1.5)
    same = T.RandomRotation((-90, 90), rotate_with_proba=0.0)(mx.np.array(x, dtype=x.dtype))
    assert (same.asnumpy() == x).all()


def test_imrotate_zoom_out_keeps_the_whole_image():
    x = onp.ones((1, 9, 9), "float32")
    inner = image.imrotate(mx.np.array(x, dtype=x.dtype), 45.0, zoom_in=True).asnumpy()
    outer = image.imrotate(mx.np.array(x, dtype=x.dtype), 45.0, zoom_out=True).asnumpy()
    assert inner.min() > 0.99                  # no padding shows
    assert outer[0, 0, 0] == 0 and outer[0, 4, 4] == pytest.approx(1.0)


def test_random_apply_frequency():
    calls = []
    t = T.RandomApply(lambda v: calls.append(1) or v, 0.25)
    onp.random.seed(0)
    import random
    random.seed(0)
    for _ in range(2000):
        t(mx.np.ones((2, 2, 3)))
    assert 400 < len(calls) < 600


def test_hybrid_random_apply_draws_per_call():
    t = T.HybridRandomApply(T.RandomFlipLeftRight(1.0), 0.5)
    t.hybridize()
    x = _img()
    mx.random.seed(2)
    flips = sum(bool((t(mx.np.array(x, dtype=x.dtype)).asnumpy() != x).any()) for _ in range(200))
    assert 60 < flips < 140


def test_transforms_in_a_data_pipeline():
    imgs = onp.stack([_img(6, 6, seed=s) for s in range(5)])
    ds = ArrayDataset(mx.np.array(imgs), onp.arange(5)).transform_first(
        T.Compose([T.Resize(4), T.ToTensor()]))
    x, y = next(iter(DataLoader(ds, batch_size=5)))
    assert x.shape == (5, 3, 4, 4) and x.dtype == onp.float32 and y.asnumpy().tolist() == list(range(5))


def test_bilinear_sampler_identity_and_outside():
    data = onp.random.RandomState(0).rand(1, 2, 4, 5).astype("float32")
    ys, xs = onp.meshgrid(onp.linspace(-1, 1, 4), onp.linspace(-1, 1, 5), indexing="ij")
    grid = onp.stack([xs, ys])[None].astype("float32")
    out = mx.npx.bilinear_sampler(mx.np.array(data), mx.np.array(grid)).asnumpy()
    onp.testing.assert_allclose(out, data, atol=1e-6)
    far = mx.npx.bilinear_sampler(mx.np.array(data), mx.np.array(grid + 5)).asnumpy()
    assert (far == 0).all()
