"""Pooling (max/avg/sum/lp, 1-3 D, conventions, count_include_pad) and AdaptiveAvgPooling2D."""
import itertools
import math

import numpy as np
import pytest

from nn_testutil import ATOL, RTOL, check_fixture, rand, run_op


def pool_ref(x, k, s, p, t, conv="valid", cip=True, pv=None):
    """MXNet's CPU pooling loops (pool.h), written out directly."""
    nd = len(k)
    sp = x.shape[2:]

    def osz(n, k, s, p):
        if conv == "valid":
            return 1 + (n + 2 * p - k) // s
        return 1 + int(math.ceil((n + 2 * p - k) / s))
    osp = [osz(sp[i], k[i], s[i], p[i]) for i in range(nd)]
    out = np.zeros(x.shape[:2] + tuple(osp))
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for o in itertools.product(*[range(v) for v in osp]):
            st = [o[i] * s[i] - p[i] for i in range(nd)]
            size = np.prod([min(st[i] + k[i], sp[i] + p[i]) - st[i] for i in range(nd)])
            lo = [max(v, 0) for v in st]
            hi = [min(st[i] + k[i], sp[i]) for i in range(nd)]
            if t == "avg" and not cip:
                size = np.prod([hi[i] - lo[i] for i in range(nd)])
            win = x[(n, c) + tuple(slice(lo[i], hi[i]) for i in range(nd))].astype(np.float64)
            if t == "max":
                v = win.max() if win.size else np.finfo(np.float32).min
            elif t == "avg":
                v = win.sum() / size if size > 0 else 0.0   # window all padding: MXNet gives 0
            elif t == "sum":
                v = win.sum()
            else:
                v = (win ** pv).sum() ** (1 / pv)
            out[(n, c) + o] = v
    return out


CASES = [
    ((2, 3, 11, 11), (3, 3), (2, 2), (1, 1), "max", "valid", None, None),
    ((2, 3, 11, 11), (3, 3), (2, 2), (1, 1), "max", "full", None, None),
    ((2, 3, 11, 11), (3, 3), (2, 2), (0, 0), "max", "full", None, None),
    ((2, 3, 11, 11), (3, 3), (2, 2), (1, 1), "avg", "valid", True, None),
    ((2, 3, 11, 11), (3, 3), (2, 2), (1, 1), "avg", "valid", False, None),
    ((2, 3, 11, 11), (2, 2), (2, 2), (0, 0), "avg", "full", True, None),
    ((2, 3, 11, 11), (3, 3), (2, 2), (1, 1), "avg", "full", False, None),
    ((2, 3, 11, 11), (3, 3), (2, 2), (1, 1), "avg", "full", True, None),
    ((2, 3, 11, 11), (2, 2), (2, 2), (1, 1), "avg", "full", False, None),   # empty windows
    ((2, 3, 11, 11), (3, 3), (3, 3), (1, 1), "avg", "full", False, None),
    ((2, 3, 6, 6), (1, 1), (1, 2), (0, 0), "max", "full", None, None),     # empty windows
    ((2, 3, 6, 6), (1, 1), (1, 2), (0, 0), "avg", "full", True, None),
    ((2, 3, 11, 11), (3, 3), (1, 1), (0, 0), "sum", "valid", None, None),
    ((2, 3, 11, 11), (2, 2), (2, 2), (0, 0), "lp", "valid", None, 2),
    ((2, 3, 11, 11), (3, 3), (2, 2), (1, 1), "lp", "valid", None, 1),
    ((2, 3, 11, 11), (3, 2), (2, 3), (1, 0), "lp", "full", None, 3),
    ((2, 4, 20), (3,), (2,), (1,), "avg", "valid", False, None),
    ((2, 4, 20), (2,), (2,), (0,), "max", "valid", None, None),
    ((2, 3, 6, 8, 8), (1, 2, 2), (1, 1, 1), (0, 1, 1), "avg", "valid", False, None),
    ((2, 3, 6, 8, 8), (2, 2, 2), (2, 2, 2), (0, 0, 0), "max", "full", None, None),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{len(c[1])}d-{c[4]}-{c[5]}-{c[6]}")
def test_pooling(case):
    xs, k, s, p, t, conv, cip, pv = case
    rng = np.random.default_rng(abs(hash(case)) % 2**32)
    x = rand(rng, *xs, lo=0.5, hi=2.0) if t == "lp" else rand(rng, *xs)
    outs = run_op("Pooling", {"kernel": k, "stride": s, "pad": p, "pool_type": t,
                              "pooling_convention": conv, "count_include_pad": cip,
                              "p_value": pv}, x)
    assert len(outs) == (2 if t == "max" else 1)     # max: hidden workspace output (oneDNN)
    np.testing.assert_allclose(outs[0], pool_ref(x, k, s, p, t, conv, cip if cip is not None
                                                 else True, pv), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("t", ["max", "avg", "sum", "lp"])
@pytest.mark.parametrize("shape", [(2, 3, 7), (2, 3, 5, 6), (1, 2, 3, 4, 5)])
def test_global_pooling(t, shape):
    rng = np.random.default_rng(12)
    x = rand(rng, *shape, lo=0.5, hi=2.0)
    nd = len(shape) - 2
    (y, *_) = run_op("Pooling", {"kernel": (1,) * nd, "global_pool": True, "pool_type": t,
                                 "p_value": 2}, x)
    axes = tuple(range(2, x.ndim))
    ref = {"max": x.max(axis=axes, keepdims=True), "avg": x.mean(axis=axes, keepdims=True),
           "sum": x.sum(axis=axes, keepdims=True),
           "lp": np.sqrt((x.astype(np.float64) ** 2).sum(axis=axes, keepdims=True))}[t]
    np.testing.assert_allclose(y, ref, rtol=RTOL, atol=ATOL)


def test_pooling_attr_spellings_and_layout():
    rng = np.random.default_rng(13)
    x = rand(rng, 2, 3, 8, 8)
    (a, _) = run_op("Pooling", {"kernel": "(2, 2)", "stride": "(2, 2)", "global_pool": "False",
                                "pooling_convention": "valid", "pool_type": "max"}, x)
    (b, _) = run_op("Pooling", {"kernel": "[2,2]", "stride": "[2,2]", "pad": "[0,0]",
                                "global_pool": "0", "cudnn_off": "0", "p_value": "None",
                                "count_include_pad": "None", "layout": "None",
                                "output_size": "None"}, x)
    np.testing.assert_array_equal(a, b)
    (c,) = run_op("Pooling", {"kernel": (2, 2), "stride": (2, 2), "layout": "NHWC"},
                  x.transpose(0, 2, 3, 1).copy())
    np.testing.assert_array_equal(c.transpose(0, 3, 1, 2), a)


def test_pooling_flops_and_names():
    from framework.ops.registry import get_op
    op = get_op("Pooling")
    a = op.parse_attrs({"kernel": (3, 3), "pool_type": "max"})
    assert op.n_visible(a) == 1 and op.output_name(a, 1) == "workspace"
    assert op.flops(a, [(1, 2, 9, 9)], [(1, 2, 7, 7)]) == 2 * 49 * 9


def adaptive_ref(x, oh, ow):
    N, C, H, W = x.shape
    out = np.zeros((N, C, oh, ow))
    for i, j in itertools.product(range(oh), range(ow)):
        h0, h1 = (i * H) // oh, -(-((i + 1) * H) // oh)
        w0, w1 = (j * W) // ow, -(-((j + 1) * W) // ow)
        out[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    return out


@pytest.mark.parametrize("size,o", [("(4, 3)", (4, 3)), ("1", (1, 1)), ("5", (5, 5)),
                                    ("(7, 2)", (7, 2))])
def test_adaptive_avg_pooling(size, o):
    x = rand(np.random.default_rng(14), 2, 3, 6, 5)
    (y,) = run_op("_contrib_AdaptiveAvgPooling2D", {"output_size": size}, x)
    np.testing.assert_allclose(y, adaptive_ref(x, *o), rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("version,name", [("mxnet-1.9.1", "pool2d_variants"),
                                          ("mxnet-1.9.1", "conv1d_pool1d"),
                                          ("mxnet-1.9.1", "conv3d_pool3d")])
def test_fixture(version, name):
    check_fixture(version, name)
