"""Dropout, Embedding, UpSampling, BilinearResize2D, Pad, depth_to_space, space_to_depth."""
import itertools

import numpy as np
import pytest

from nn_testutil import ATOL, RTOL, check_fixture, rand, run_op


@pytest.fixture
def rng():
    return np.random.default_rng(41)


def test_dropout_is_identity_at_inference(rng):
    x = rand(rng, 2, 3, 4)
    y, mask = run_op("Dropout", {"p": "0.3", "axes": "(2,)", "cudnn_off": "False"}, x)
    np.testing.assert_array_equal(y, x)
    assert mask.shape == x.shape
    from framework.ops.registry import get_op
    op = get_op("Dropout")
    a = op.parse_attrs({})
    assert op.n_outputs(a) == 2 and op.n_visible(a) == 1
    assert op.format_attrs(a) == {"axes": "[]", "cudnn_off": "0", "mode": "training", "p": "0.5"}


def test_dropout_always(rng):
    import framework as mx
    mx.random.seed(3)
    x = np.ones((200, 50), np.float32)
    y, mask = run_op("Dropout", {"p": 0.5, "mode": "always", "axes": (1,)}, x)
    kept = y[:, 0] != 0
    assert 50 < kept.sum() < 150
    np.testing.assert_allclose(y[kept], 2.0)
    assert np.all((y == 0) | (y == 2.0)) and np.all(y == y[:, :1])   # mask shared along axis 1


def test_embedding(rng):
    w = rand(rng, 6, 3)
    idx = np.array([[0, 2.7, 5], [-1.5, 7, 1]], np.float32)     # truncate, then clip
    (y,) = run_op("Embedding", {"input_dim": 6, "output_dim": 3}, idx, w)
    want = w[np.array([[0, 2, 5], [0, 5, 1]])]
    np.testing.assert_array_equal(y, want)
    (y,) = run_op("Embedding", {"input_dim": 6, "output_dim": 3, "dtype": "float32",
                                "sparse_grad": "False"}, np.array([1, 3], np.int64), w)
    np.testing.assert_array_equal(y, w[[1, 3]])


@pytest.mark.parametrize("scale", [1, 2, 3])
def test_upsampling_nearest(rng, scale):
    x = rand(rng, 2, 3, 4, 5)
    (y,) = run_op("UpSampling", {"scale": scale, "sample_type": "nearest", "num_args": 1}, x)
    ref = np.zeros((2, 3, 4 * scale, 5 * scale), np.float32)
    for i, j in itertools.product(range(4 * scale), range(5 * scale)):
        ref[:, :, i, j] = x[:, :, i // scale, j // scale]
    np.testing.assert_array_equal(y, ref)


def test_upsampling_multi_input(rng):
    a, b = rand(rng, 1, 2, 4, 4), rand(rng, 1, 3, 2, 2)
    (y,) = run_op("UpSampling", {"scale": 2, "sample_type": "nearest", "num_args": 2}, a, b)
    assert y.shape == (1, 5, 8, 8)
    np.testing.assert_array_equal(y[:, 2:, ::4, ::4], b)
    c = rand(rng, 1, 2, 2, 2)
    (y,) = run_op("UpSampling", {"scale": 2, "sample_type": "nearest", "num_args": 2,
                                 "multi_input_mode": "sum"}, a, c)
    np.testing.assert_allclose(y, a.repeat(2, 2).repeat(2, 3) + c.repeat(4, 2).repeat(4, 3))


def test_upsampling_bilinear_is_depthwise_deconv(rng):
    x = rand(rng, 1, 2, 3, 3)
    w = rand(rng, 2, 1, 4, 4)
    (y,) = run_op("UpSampling", {"scale": 2, "sample_type": "bilinear", "num_args": 2,
                                 "num_filter": 2}, x, w)
    (ref,) = run_op("Deconvolution", {"kernel": (4, 4), "stride": (2, 2), "pad": (1, 1),
                                      "num_filter": 2, "num_group": 2, "no_bias": True}, x, w)
    np.testing.assert_allclose(y, ref, rtol=RTOL, atol=ATOL)


def bilinear_ref(x, oh, ow, align):
    """MXNet's CPU loop (bilinear_resize.cc), per output pixel."""
    N, C, H, W = x.shape
    out = np.zeros((N, C, oh, ow), np.float64)

    def scale(i, o):
        if o <= 1:
            return 0.0
        return (i - 1) / (o - 1) if align else i / o

    rh, rw = scale(H, oh), scale(W, ow)
    for h2, w2 in itertools.product(range(oh), range(ow)):
        h1r = rh * h2 if align else max(rh * (h2 + 0.5) - 0.5, 0)
        w1r = rw * w2 if align else max(rw * (w2 + 0.5) - 0.5, 0)
        h1, w1 = int(h1r), int(w1r)
        h1p, w1p = int(h1 < H - 1), int(w1 < W - 1)
        hl1, wl1 = h1r - h1, w1r - w1
        hl0, wl0 = 1 - hl1, 1 - wl1
        out[:, :, h2, w2] = hl0 * (wl0 * x[:, :, h1, w1] + wl1 * x[:, :, h1, w1 + w1p]) + \
            hl1 * (wl0 * x[:, :, h1 + h1p, w1] + wl1 * x[:, :, h1 + h1p, w1 + w1p])
    return out


@pytest.mark.parametrize("attrs,size", [
    ({"height": 4, "width": 8, "align_corners": False}, (4, 8)),
    ({"height": 9, "width": 5}, (9, 5)),
    ({"mode": "size", "scale_height": 1.5, "scale_width": 2.0}, (9, 12)),
    ({"mode": "to_even_up"}, (6, 6)),
    ({"mode": "odd_scale", "scale_height": 2.0, "scale_width": 0.5}, (12, 3)),
    ({"height": 1, "width": 1}, (1, 1)),
])
def test_bilinear_resize(rng, attrs, size):
    x = rand(rng, 2, 3, 6, 6)
    (y,) = run_op("_contrib_BilinearResize2D", attrs, x)
    assert y.shape == (2, 3) + size
    ref = bilinear_ref(x, *size, attrs.get("align_corners", True))
    np.testing.assert_allclose(y, ref, rtol=RTOL, atol=ATOL)


def test_bilinear_resize_like(rng):
    x, like = rand(rng, 1, 2, 4, 4), rand(rng, 1, 1, 7, 3)
    (y,) = run_op("_contrib_BilinearResize2D", {"mode": "like"}, x, like)
    np.testing.assert_allclose(y, bilinear_ref(x, 7, 3, True), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_pad(rng, mode):
    x = rand(rng, 2, 3, 4, 5)
    pw = (0, 0, 0, 0, 1, 2, 2, 1)
    attrs = {"mode": mode, "pad_width": str(pw)}
    if mode == "constant":
        attrs["constant_value"] = "0.5"
    (y,) = run_op("Pad", attrs, x)
    pairs = [(0, 0), (0, 0), (1, 2), (2, 1)]
    ref = np.pad(x, pairs, mode="constant", constant_values=0.5) if mode == "constant" \
        else np.pad(x, pairs, mode=mode)
    np.testing.assert_array_equal(y, ref)
    if mode == "reflect":          # reflection excludes the edge: row -1 mirrors row 1
        np.testing.assert_array_equal(y[:, :, 0, 2:-1], x[:, :, 1, :])


def test_depth_space_roundtrip(rng):
    x = np.arange(24, dtype=np.float32).reshape(1, 4, 2, 3)
    (d,) = run_op("depth_to_space", {"block_size": 2}, x)
    assert d.shape == (1, 1, 4, 6)
    # MXNet's doc example: channels interleave into 2x2 blocks (DCR)
    np.testing.assert_array_equal(d[0, 0, :2, :2], [[0, 6], [12, 18]])
    (s,) = run_op("space_to_depth", {"block_size": 2}, d)
    np.testing.assert_array_equal(s, x)


@pytest.mark.parametrize("version,name", [("mxnet-1.9.1", "adaptive_upsample_pad"),
                                          ("mxnet-1.9.1", "dropout_flatten"),
                                          ("mxnet-1.9.1", "embedding")])
def test_fixture(version, name):
    check_fixture(version, name)
