"""Channels-last kernels of compiled graphs (`_hs_conv2d`, `_hs_affine`, `_hs_chmax`, `_hs_concat`,
NHWC Pooling) against the NCHW reference kernels, serially and split over the intra-op threads."""
import itertools

import numpy as np
import pytest

from framework.ops._kernels import nhwc_util
from framework.ops import parallel
from framework.ops.nn import conv
from framework.ops.compiled import nhwc
from framework.ops.registry import get_op

RNG = np.random.default_rng(7)


@pytest.fixture(params=[1, 2], ids=["serial", "intra2"])
def threads(request, monkeypatch):
    monkeypatch.setattr(nhwc_util, "_MIN_PAR", 1)          # split even the tiny test tensors
    prev = parallel.set_intra_op_threads(request.param)
    yield request.param
    parallel.set_intra_op_threads(prev)


def _nhwc(x):
    return np.ascontiguousarray(x.transpose(0, 2, 3, 1))


CASES = [
    # N, C, H, W, F, kernel, stride, pad, dilate, groups
    (2, 4, 7, 6, 6, (3, 3), (1, 1), (1, 1), (1, 1), 1),
    (1, 5, 9, 8, 7, (3, 3), (2, 2), (1, 1), (1, 1), 1),
    (2, 4, 7, 6, 8, (3, 2), (2, 1), (1, 0), (1, 2), 2),
    (1, 6, 8, 8, 6, (3, 3), (1, 1), (1, 1), (1, 1), 6),       # depthwise
    (2, 6, 9, 7, 6, (3, 3), (2, 2), (1, 1), (1, 1), 6),       # depthwise, stride 2
    (1, 4, 8, 9, 4, (5, 3), (1, 2), (2, 0), (1, 1), 4),       # depthwise, odd geometry
    (1, 4, 6, 6, 8, (3, 3), (1, 1), (1, 1), (2, 2), 4),       # channel multiplier 2
    (2, 8, 6, 5, 3, (1, 1), (1, 1), (0, 0), (1, 1), 1),       # 1x1
    (1, 8, 7, 7, 5, (1, 1), (2, 2), (0, 0), (1, 1), 1),       # 1x1 stride 2
    (1, 3, 17, 15, 4, (7, 7), (2, 2), (3, 3), (1, 1), 1),     # stem conv
    (2, 16, 6, 7, 4, (3, 3), (1, 1), (1, 1), (1, 1), 1),      # F < C/2: shift algorithm
    (1, 12, 6, 6, 3, (3, 3), (1, 1), (0, 2), (2, 1), 1),      # shift, asymmetric pad + dilation
    (1, 8, 5, 4, 160, (3, 3), (1, 1), (1, 1), (1, 1), 1),     # few pixels, many filters:
    (2, 8, 4, 4, 130, (1, 1), (2, 2), (0, 0), (1, 1), 1),     # GEMM split over filters
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("act", ["none", "relu", "clip"])
def test_hs_conv2d_matches_convolution(case, act, threads):
    N, C, H, W, F, k, s, p, d, g = case
    x = RNG.standard_normal((N, C, H, W)).astype(np.float32)
    w = RNG.standard_normal((F, C // g) + k).astype(np.float32)
    b = RNG.standard_normal(F).astype(np.float32)
    res = RNG.standard_normal((N, F) + tuple(
        conv.out_size((H, W)[i], k[i], s[i], p[i], d[i]) for i in range(2))).astype(np.float32)
    ref = conv.conv_nc(x, w, b, s, p, d, g) + res
    ref = {"none": ref, "relu": np.maximum(ref, 0), "clip": np.clip(ref, 0, 1.5)}[act]
    layouts = ["NHWC"] + (["NCHW"] if g == 1 else [])
    for layout in layouts:
        algo = nhwc.choose_algo(w.shape, k, s, p, d, g, layout)
        wp = nhwc.prepare_weight(w, g, layout, algo)
        a = get_op("_hs_conv2d").parse_attrs({
            "kernel": str(k), "stride": str(s), "pad": str(p), "dilate": str(d),
            "num_filter": str(F), "num_group": str(g), "with_sum": "1", "act_type": act,
            "a_min": "0", "a_max": "1.5", "data_layout": layout, "algo": algo})
        xin = x if layout == "NCHW" else _nhwc(x)
        out = get_op("_hs_conv2d").kernel(a, xin, wp, b, _nhwc(res))
        np.testing.assert_allclose(out.transpose(0, 3, 1, 2), ref, rtol=1e-4, atol=1e-5)
        assert tuple(out.shape) == get_op("_hs_conv2d").shapes(a, [xin.shape])[0]
        buf = np.empty_like(out)
        out2 = get_op("_hs_conv2d").kernel(a, xin, wp, b, _nhwc(res), out=buf)
        assert out2 is buf
        np.testing.assert_array_equal(out2, out)


@pytest.mark.parametrize("N,C,H,W,F,s", [
    (2, 8, 6, 5, 6, 1),        # C <= pixels: the scale goes into a scratch copy of the weight
    (1, 40, 3, 3, 6, 1),       # C > pixels: the scale is applied to the output in the epilogue
    (1, 48, 5, 5, 130, 2),     # strided, output split over filters with intra-op threads
])
def test_gemm1x1_reads_the_mxnet_weight_with_a_channel_scale(N, C, H, W, F, s, threads):
    """algo "gemm1x1": MXNet's (F, C, 1, 1) weight as is, plus a folded BatchNorm's scale."""
    x = RNG.standard_normal((N, C, H, W)).astype(np.float32)
    w = RNG.standard_normal((F, C, 1, 1)).astype(np.float32)
    scale = RNG.uniform(0.5, 2.0, F).astype(np.float32)
    b = RNG.standard_normal(F).astype(np.float32)
    ref = np.maximum(conv.conv_nc(x, w, None, (s, s), (0, 0), (1, 1), 1)
                     * scale[:, None, None] + b[:, None, None], 0)
    w_before = w.copy()
    op = get_op("_hs_conv2d")
    a = op.parse_attrs({"kernel": "(1, 1)", "stride": str((s, s)), "num_filter": str(F),
                        "with_scale": "1", "act_type": "relu", "algo": "gemm1x1"})
    for _ in range(2):                                   # the scratch weight is reused
        out = op.kernel(a, _nhwc(x), w, scale, b)
        np.testing.assert_allclose(out.transpose(0, 3, 1, 2), ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(w, w_before)           # the shared weight is never written


def test_hs_conv2d_strided_input_view(threads):
    """The graph input reaches the first conv as a transposed (non-contiguous) view."""
    x = RNG.standard_normal((2, 5, 9, 8)).astype(np.float32)
    w = RNG.standard_normal((6, 5, 3, 3)).astype(np.float32)
    ref = conv.conv_nc(x, w, None, (1, 1), (1, 1), (1, 1), 1)
    out = nhwc.conv2d_nhwc(x.transpose(0, 2, 3, 1), nhwc.prepare_weight(w, 1), None, None,
                           (3, 3), (1, 1), (1, 1), (1, 1), 1, 6)
    np.testing.assert_allclose(out.transpose(0, 3, 1, 2), ref, rtol=1e-4, atol=1e-5)


def test_winograd_matches_direct():
    x = RNG.standard_normal((2, 9, 7, 16)).astype(np.float32)      # odd sizes: cropped tiles
    w = RNG.standard_normal((24, 16, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(24).astype(np.float32)
    direct = nhwc.conv2d_nhwc(x, nhwc.prepare_weight(w, 1), b, None, (3, 3), (1, 1), (1, 1),
                              (1, 1), 1, 24, "relu")
    wino = nhwc.conv2d_nhwc(x, nhwc.prepare_weight(w, 1, algo="winograd"), b, None, (3, 3),
                            (1, 1), (1, 1), (1, 1), 1, 24, "relu", algo="winograd")
    np.testing.assert_allclose(wino, direct, rtol=1e-4, atol=1e-4)


POOLS = [
    # kernel, stride, pad, type, convention, count_include_pad
    ((3, 3), (2, 2), (1, 1), "max", "valid", None),
    ((3, 3), (2, 2), (1, 1), "avg", "valid", True),
    ((3, 3), (2, 2), (1, 1), "avg", "valid", False),
    ((2, 2), (2, 2), (0, 0), "max", "full", None),
    ((3, 2), (2, 1), (1, 0), "avg", "full", False),
    ((3, 3), (1, 1), (1, 1), "sum", "valid", None),
    ((3, 3), (2, 2), (0, 0), "max", "same", None),
]


@pytest.mark.parametrize("kernel,stride,pad,ptype,conv_,inc", POOLS)
def test_pool_nhwc_matches_nchw(kernel, stride, pad, ptype, conv_, inc, threads):
    x = RNG.standard_normal((2, 5, 9, 8)).astype(np.float32)
    op = get_op("Pooling")
    raw = {"kernel": str(kernel), "stride": str(stride), "pad": str(pad), "pool_type": ptype,
           "pooling_convention": conv_}
    if inc is not None:
        raw["count_include_pad"] = str(inc)
    ref = op.kernel(op.parse_attrs(raw), x)
    ref = ref[0] if isinstance(ref, tuple) else ref
    a = op.parse_attrs({**raw, "layout": "NHWC"})
    out = op.kernel(a, _nhwc(x))
    np.testing.assert_allclose(out.transpose(0, 3, 1, 2), ref, rtol=1e-5, atol=1e-6)
    assert tuple(out.shape) == op.shapes(a, [(2, 9, 8, 5)])[0]


@pytest.mark.parametrize("ptype", ["max", "avg", "sum"])
def test_global_pool_nhwc(ptype, threads):
    x = RNG.standard_normal((2, 5, 6, 7)).astype(np.float32)
    op = get_op("Pooling")
    raw = {"kernel": "(1, 1)", "global_pool": "True", "pool_type": ptype}
    ref = op.kernel(op.parse_attrs(raw), x)
    ref = ref[0] if isinstance(ref, tuple) else ref
    out = op.kernel(op.parse_attrs({**raw, "layout": "NHWC"}), _nhwc(x))
    # the two layouts sum the 30 values in different orders: float32 rounding of that size
    atol = 6 * 5 * np.finfo(np.float32).eps * float(np.abs(x).max())
    np.testing.assert_allclose(out.transpose(0, 3, 1, 2), ref, rtol=1e-5, atol=atol)


@pytest.mark.parametrize("axis,act", [(3, "relu"), (1, "none"), (-1, "clip")])
def test_affine_and_chmax(axis, act, threads):
    x = RNG.standard_normal((2, 6, 5, 4)).astype(np.float32)
    n = x.shape[axis]
    s, t = RNG.uniform(0.5, 2, n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    bs = [1] * 4
    bs[axis] = n
    ref = x * s.reshape(bs) + t.reshape(bs)
    ref = {"none": ref, "relu": np.maximum(ref, 0), "clip": np.clip(ref, 0, 6)}[act]
    op = get_op("_hs_affine")
    out = op.kernel(op.parse_attrs({"axis": str(axis), "act_type": act}), x, s, t)
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)
    cm = get_op("_hs_chmax")
    out = cm.kernel(cm.parse_attrs({"axis": str(axis)}), x, t)
    np.testing.assert_array_equal(out, np.maximum(x, t.reshape(bs)))


@pytest.mark.parametrize("dim", [3, 1, 0])
def test_hs_concat(dim, threads):
    xs = [RNG.standard_normal((2, 5, 4, c)).astype(np.float32) for c in (3, 1, 4)]
    if dim != 3:
        xs = [np.ascontiguousarray(np.moveaxis(x, 3, dim)) for x in xs]
    op = get_op("_hs_concat")
    a = op.parse_attrs({"num_args": "3", "dim": str(dim)})
    out = op.kernel(a, *xs)
    np.testing.assert_array_equal(out, np.concatenate(xs, axis=dim))
    buf = np.empty_like(out)
    assert op.kernel(a, *xs, out=buf) is buf


def test_scratch_is_per_thread_and_bounded(monkeypatch):
    import threading
    monkeypatch.setattr(nhwc_util, "_SCRATCH_BYTES", 1 << 12)
    nhwc.clear_scratch()
    a = nhwc.scratch(("t",), (8,), np.float32, zero=True)
    assert nhwc.scratch(("t",), (8,), np.float32, zero=True) is a
    seen = []
    th = threading.Thread(target=lambda: seen.append(nhwc.scratch(("t",), (8,), np.float32, True)))
    th.start()
    th.join()
    assert seen[0] is not a
    for i in range(10):                      # beyond the byte budget: the oldest are dropped
        nhwc.scratch(("big", i), (256,), np.float32)
    assert nhwc_util._tls.nbytes <= 1 << 12
    nhwc.clear_scratch()


def test_parallel_run_propagates_errors_and_falls_back():
    prev = parallel.set_intra_op_threads(2)
    try:
        hits = []

        def fn(i):
            hits.append(i)
            if i == 1:
                raise ValueError("boom")
        with pytest.raises(ValueError, match="boom"):
            parallel.run(fn, 2)
        assert sorted(hits) == [0, 1]
        # helper busy (held by another op): the caller runs every part itself
        with parallel._busy:
            hits.clear()
            parallel.run(hits.append, 3)
        assert hits == [0, 1, 2]
    finally:
        parallel.set_intra_op_threads(prev)


def test_tap_ranges_cover_valid_windows():
    for n, k, s, p, d in itertools.product((5, 8), (1, 3), (1, 2), (0, 1, 2), (1, 2)):
        o = nhwc.out_size(n, k, s, p, d)
        if o <= 0:
            continue
        for j in range(k):
            lo, hi, first = nhwc.tap_range(n, o, j * d, s, p)
            valid = [q for q in range(o) if 0 <= q * s + j * d - p < n]
            assert list(range(lo, hi)) == valid
            if valid:
                assert first == valid[0] * s + j * d - p


def _child_runs_parallel_op(q):
    hits = []
    parallel.run(hits.append, 2)
    q.put(sorted(hits))


def test_parallel_survives_fork():
    import multiprocessing as mp
    prev = parallel.set_intra_op_threads(2)
    try:
        ctx = mp.get_context("fork")
        q = ctx.Queue()
        p = ctx.Process(target=_child_runs_parallel_op, args=(q,))
        p.start()
        p.join(30)
        assert p.exitcode == 0
        assert q.get(timeout=5) == [0, 1]
    finally:
        parallel.set_intra_op_threads(prev)
