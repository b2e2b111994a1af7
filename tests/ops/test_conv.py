"""Convolution and Deconvolution against direct-loop references on tiny inputs."""
import itertools
import time

import numpy as np
import pytest

from nn_testutil import ATOL, RTOL, check_fixture, rand, run_op


def conv_ref(x, w, b, stride, pad, dil, g):
    N, C = x.shape[:2]
    F, Cg = w.shape[:2]
    k = w.shape[2:]
    nd = len(k)
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(p, p) for p in pad])
    osp = [(x.shape[2 + i] + 2 * pad[i] - dil[i] * (k[i] - 1) - 1) // stride[i] + 1
           for i in range(nd)]
    out = np.zeros((N, F, *osp))
    Fg = F // g
    for n, f in itertools.product(range(N), range(F)):
        gi = f // Fg
        for o in itertools.product(*[range(v) for v in osp]):
            s = 0.0
            for c in range(Cg):
                for kk in itertools.product(*[range(v) for v in k]):
                    idx = tuple(o[i] * stride[i] + kk[i] * dil[i] for i in range(nd))
                    s += xp[(n, gi * Cg + c) + idx] * float(w[(f, c) + kk])
            out[(n, f) + o] = s + (float(b[f]) if b is not None else 0.0)
    return out


def deconv_ref(x, w, b, k, s, p, d, adj, g):
    N, C = x.shape[:2]
    Fg = w.shape[1]
    nd = len(k)
    F, Cg = Fg * g, C // g
    ins = x.shape[2:]
    full = [s[i] * (ins[i] - 1) + d[i] * (k[i] - 1) + 1 + adj[i] for i in range(nd)]
    o = np.zeros((N, F, *full))
    for n, c in itertools.product(range(N), range(C)):
        gi = c // Cg
        for f in range(Fg):
            for ii in itertools.product(*[range(v) for v in ins]):
                for kk in itertools.product(*[range(v) for v in k]):
                    idx = tuple(ii[i] * s[i] + kk[i] * d[i] for i in range(nd))
                    o[(n, gi * Fg + f) + idx] += float(x[(n, c) + ii]) * float(w[(c, f) + kk])
    osp = [full[i] - 2 * p[i] for i in range(nd)]
    o = o[(slice(None), slice(None)) + tuple(slice(p[i], p[i] + osp[i]) for i in range(nd))]
    if b is not None:
        o += b.reshape((1, F) + (1,) * nd)
    return o


CONV_CASES = [
    # data shape, num_filter, kernel, stride, pad, dilate, groups, no_bias
    ((2, 4, 7, 6), 6, (3, 3), (1, 1), (1, 1), (1, 1), 1, False),
    ((2, 4, 7, 6), 8, (3, 2), (2, 1), (1, 0), (1, 2), 2, True),
    ((1, 4, 6, 6), 4, (3, 3), (2, 2), (1, 1), (1, 1), 4, True),      # depthwise
    ((1, 4, 6, 6), 8, (3, 3), (1, 1), (1, 1), (2, 2), 4, False),     # channel multiplier 2
    ((2, 3, 9), 4, (3,), (2,), (1,), (2,), 1, False),                # 1-D
    ((2, 4, 9), 4, (3,), (1,), (2,), (2,), 2, True),
    ((1, 2, 4, 5, 5), 4, (2, 3, 3), (1, 2, 1), (0, 1, 1), (1, 1, 1), 2, False),   # 3-D
    ((2, 6, 5, 5), 4, (1, 1), (2, 2), (0, 0), (1, 1), 1, False),     # 1x1 strided
    ((2, 6, 5, 5), 4, (1, 1), (1, 1), (0, 0), (1, 1), 1, True),      # 1x1
    ((2, 6, 5, 5), 4, (1, 1), (1, 1), (1, 1), (1, 1), 2, False),     # 1x1 padded grouped
    ((1, 2, 8, 8), 3, (2, 2), (2, 2), (0, 0), (1, 1), 1, False),     # even kernel
]


@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: f"{c[0]}-k{c[2]}-g{c[6]}")
def test_convolution(case):
    xs, F, k, s, p, d, g, nb = case
    rng = np.random.default_rng(abs(hash(case)) % 2**32)
    x = rand(rng, *xs)
    w = rand(rng, F, xs[1] // g, *k)
    b = None if nb else rand(rng, F)
    attrs = {"kernel": k, "stride": s, "pad": p, "dilate": d, "num_filter": F,
             "num_group": g, "no_bias": nb}
    (y,) = run_op("Convolution", attrs, x, w, *([] if nb else [b]))
    np.testing.assert_allclose(y, conv_ref(x, w, b, s, p, d, g), rtol=RTOL, atol=ATOL)


def test_convolution_string_attrs_and_defaults():
    rng = np.random.default_rng(7)
    x, w, b = rand(rng, 1, 2, 5, 5), rand(rng, 3, 2, 3, 3), rand(rng, 3)
    (y1,) = run_op("Convolution", {"kernel": "(3, 3)", "num_filter": "3"}, x, w, b)
    (y2,) = run_op("Convolution", {"kernel": "[3,3]", "num_filter": "3", "stride": "[1,1]",
                                   "pad": "[0,0]", "dilate": "[1,1]", "no_bias": "0",
                                   "layout": "NCHW", "cudnn_tune": "None", "cudnn_off": "0",
                                   "workspace": "1024", "num_group": "1"}, x, w, b)
    np.testing.assert_array_equal(y1, y2)
    np.testing.assert_allclose(y1, conv_ref(x, w, b, (1, 1), (0, 0), (1, 1), 1), rtol=RTOL,
                               atol=ATOL)


def test_convolution_nhwc_and_out_buffer():
    from framework.ops.registry import get_op
    rng = np.random.default_rng(8)
    x, w, b = rand(rng, 2, 3, 6, 6), rand(rng, 4, 3, 3, 3), rand(rng, 4)
    ref = conv_ref(x, w, b, (1, 1), (1, 1), (1, 1), 1)
    (y,) = run_op("Convolution", {"kernel": (3, 3), "pad": (1, 1), "num_filter": 4,
                                  "layout": "NHWC"},
                  x.transpose(0, 2, 3, 1).copy(), w.transpose(0, 2, 3, 1).copy(), b)
    np.testing.assert_allclose(y.transpose(0, 3, 1, 2), ref, rtol=RTOL, atol=ATOL)
    op = get_op("Convolution")
    a = op.parse_attrs({"kernel": (3, 3), "pad": (1, 1), "num_filter": 4})
    out = np.empty((2, 4, 6, 6), np.float32)
    r = op.kernel(a, x, w, b, out=out)
    assert r is out
    np.testing.assert_allclose(out, ref, rtol=RTOL, atol=ATOL)


def test_convolution_shape_errors():
    from framework.base import ShapeError
    rng = np.random.default_rng(9)
    with pytest.raises(ShapeError):
        run_op("Convolution", {"kernel": (3, 3), "num_filter": 2}, rand(rng, 1, 3, 5, 5),
               rand(rng, 2, 2, 3, 3), rand(rng, 2))
    with pytest.raises(ShapeError):
        run_op("Convolution", {"kernel": (7, 7), "num_filter": 2}, rand(rng, 1, 2, 5, 5),
               rand(rng, 2, 2, 7, 7), rand(rng, 2))


def test_convolution_flops():
    from framework.ops.registry import get_op
    op = get_op("Convolution")
    a = op.parse_attrs({"kernel": (3, 3), "pad": (1, 1), "num_filter": 8, "num_group": 2})
    assert op.flops(a, [(2, 4, 6, 6)], [(2, 8, 6, 6)]) == 2 * 2 * 8 * 36 * 2 * 9


DECONV_CASES = [
    # data, num_filter, kernel, stride, pad, dilate, adj, groups, no_bias
    ((2, 4, 5, 5), 6, (4, 4), (2, 2), (1, 1), (1, 1), (0, 0), 1, False),
    ((2, 4, 5, 5), 4, (3, 3), (2, 2), (1, 1), (1, 1), (1, 1), 2, True),
    ((2, 4, 5, 5), 3, (3, 2), (1, 2), (0, 0), (2, 1), (0, 0), 1, False),
    ((2, 3, 7), 4, (3,), (2,), (0,), (1,), (1,), 1, False),
    ((1, 2, 3, 3, 3), 2, (2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 1, 1), (0, 0, 0), 1, True),
    ((1, 2, 4, 4), 2, (3, 3), (3, 3), (2, 2), (1, 1), (2, 2), 2, False),   # adj > pad
]


@pytest.mark.parametrize("case", DECONV_CASES, ids=lambda c: f"{c[0]}-k{c[2]}-s{c[3]}")
def test_deconvolution(case):
    xs, F, k, s, p, d, adj, g, nb = case
    rng = np.random.default_rng(abs(hash(case)) % 2**32)
    x = rand(rng, *xs)
    w = rand(rng, xs[1], F // g, *k)
    b = None if nb else rand(rng, F)
    attrs = {"kernel": k, "stride": s, "pad": p, "dilate": d, "adj": adj, "num_filter": F,
             "num_group": g, "no_bias": nb}
    (y,) = run_op("Deconvolution", attrs, x, w, *([] if nb else [b]))
    np.testing.assert_allclose(y, deconv_ref(x, w, b, k, s, p, d, adj, g), rtol=RTOL, atol=ATOL)


def test_deconvolution_target_shape():
    rng = np.random.default_rng(10)
    x, w = rand(rng, 1, 2, 5, 5), rand(rng, 2, 3, 3, 3)
    (y,) = run_op("Deconvolution", {"kernel": (3, 3), "stride": (2, 2), "num_filter": 3,
                                    "target_shape": (10, 10)}, x, w)
    assert y.shape == (1, 3, 10, 10)
    # MXNet's InferPad: total = 2*4 + 3 - 10 = 1 → pad 1, adj 1
    ref = deconv_ref(x, w, None, (3, 3), (2, 2), (1, 1), (1, 1), (1, 1), 1)
    np.testing.assert_allclose(y, ref, rtol=RTOL, atol=ATOL)


def test_conv_speed_resnet_like_layer():
    """A 3x3, 64-channel, 56x56 layer stays well under a second (im2col + one matmul)."""
    rng = np.random.default_rng(11)
    x, w = rand(rng, 1, 64, 56, 56), rand(rng, 64, 64, 3, 3)
    attrs = {"kernel": (3, 3), "pad": (1, 1), "num_filter": 64, "no_bias": True}
    run_op("Convolution", attrs, x, w, check=False)
    t = time.perf_counter()
    run_op("Convolution", attrs, x, w, check=False)
    assert time.perf_counter() - t < 1.0
    xd, wd = rand(rng, 1, 128, 56, 56), rand(rng, 128, 1, 3, 3)
    t = time.perf_counter()
    run_op("Convolution", {"kernel": (3, 3), "pad": (1, 1), "num_filter": 128,
                           "num_group": 128, "no_bias": True}, xd, wd, check=False)
    assert time.perf_counter() - t < 1.0


@pytest.mark.parametrize("version,name", [
    ("mxnet-1.9.1", "conv1d_pool1d"), ("mxnet-1.9.1", "conv2d_variants"),
    ("mxnet-1.9.1", "conv3d_pool3d"), ("mxnet-1.9.1", "deconv1d_3d"),
    ("mxnet-1.9.1", "deconv2d"), ("mxnet-1.9.1", "fc_flatten"), ("mxnet-1.9.1", "fc_noflatten"),
    ("mxnet-1.9.1", "mini_densenet"), ("mxnet-1.9.1", "mini_inception"),
    ("mxnet-1.9.1", "mini_mobilenet_v1"), ("mxnet-1.9.1", "mini_mobilenet_v2"),
    ("mxnet-1.9.1", "mini_resnet_v1"), ("mxnet-1.9.1", "mini_resnet_v1_bottleneck"),
    ("mxnet-1.9.1", "mini_resnet_v2_bottleneck"), ("mxnet-1.9.1", "mini_squeezenet"),
    ("mxnet-1.9.1", "mini_vgg_alexnet"),
    ("mxnet-2.0.0b1", "conv1d_3d_pool"), ("mxnet-2.0.0b1", "lenet"),
    ("mxnet-2.0.0b1", "mlp3_sequential"), ("mxnet-2.0.0b1", "mlp_hybrid"),
])
def test_fixture(version, name):
    check_fixture(version, name)


@pytest.mark.parametrize("version,name", [
    ("mxnet-1.9.1", "mini_resnet_v1"), ("mxnet-1.9.1", "mini_mobilenet_v2"),
    ("mxnet-1.9.1", "deconv2d"), ("mxnet-1.9.1", "activations"),
    ("mxnet-1.9.1", "batchnorm_variants"), ("mxnet-2.0.0b1", "nn_layers_2"),
])
def test_fixture_with_out_buffers(version, name):
    """Plan.specialize hands preallocated `out=` buffers to the kernels that accept them."""
    from fixture_util import load_fixture
    from framework.compiler import Plan
    sym, params, inputs, expected = load_fixture(version, name)
    names = sym.list_inputs()
    feed = {**params, **inputs}
    args = [np.asarray(feed[n]) for n in names]
    fn = Plan(sym, names).specialize(args)
    fn(*args)
    for o, e in zip(fn(*args), expected):
        np.testing.assert_allclose(o, e, rtol=RTOL, atol=ATOL)
