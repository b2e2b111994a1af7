"""Winograd F(2x2, 3x3) and F(4x4, 3x3) convolution (ops/_kernels/winograd.py) against im2col + GEMM:
odd sizes (cropped tiles), batches, chunked work, intra-op threads, and the per-call choice
that `_hs_conv2d` makes for its GEMM-layout weights."""
import gc

import numpy as np
import pytest

from framework.ops._kernels import nhwc_util, winograd
from framework.ops import parallel
from framework.ops.compiled import nhwc

RNG = np.random.default_rng(11)


@pytest.fixture(params=[1, 2], ids=["serial", "intra2"])
def threads(request, monkeypatch):
    monkeypatch.setattr(nhwc_util, "_MIN_PAR", 1)
    prev = parallel.set_intra_op_threads(request.param)
    yield request.param
    parallel.set_intra_op_threads(prev)


def _direct(x, w, b, act="none", res=None):
    """im2col + GEMM (Winograd switched off) as the reference."""
    F = w.shape[0]
    wg = nhwc.prepare_weight(w, 1)
    out = np.empty(x.shape[:3] + (F,), x.dtype)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(nhwc, "_wino_tile", lambda *a: 0)
        return nhwc.conv2d_nhwc(x, wg, b, res, (3, 3), (1, 1), (1, 1), (1, 1), 1, F, act,
                                out=out)


@pytest.mark.parametrize("m", [2, 4])
@pytest.mark.parametrize("N,H,W,C,F", [(1, 8, 8, 8, 8), (2, 9, 7, 16, 24), (3, 13, 6, 5, 9),
                                       (1, 1, 1, 4, 4), (2, 4, 10, 12, 7)])
def test_matches_im2col(m, N, H, W, C, F, threads):
    x = RNG.standard_normal((N, H, W, C)).astype(np.float32)
    w = RNG.standard_normal((F, C, 3, 3)).astype(np.float32)
    b = RNG.standard_normal(F).astype(np.float32)
    out = np.full((N, H, W, F), np.nan, np.float32)
    winograd.conv3x3(x, winograd.transform_weight(w, m), m, b, out)
    ref = _direct(x, w, b)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


@pytest.mark.parametrize("m", [2, 4])
def test_chunked_work_matches(m, monkeypatch, threads):
    """A tiny chunk budget splits the work into single tile rows of single samples."""
    monkeypatch.setattr(winograd, "_CHUNK_BYTES", 1)
    winograd._chunks.cache_clear()
    x = RNG.standard_normal((2, 11, 9, 6)).astype(np.float32)
    w = RNG.standard_normal((5, 6, 3, 3)).astype(np.float32)
    out = np.empty((2, 11, 9, 5), np.float32)
    try:
        winograd.conv3x3(x, winograd.transform_weight(w, m), m, None, out)
    finally:
        winograd._chunks.cache_clear()
    ref = _direct(x, w, None)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


def test_hs_conv2d_chooses_winograd_and_fuses_epilogue(monkeypatch):
    """Wide layers go through Winograd (the cached transformed weight), with bias, residual and
    ReLU applied as for im2col."""
    x = RNG.standard_normal((1, 16, 16, 64)).astype(np.float32)
    w = (RNG.standard_normal((64, 64, 3, 3)) * 0.05).astype(np.float32)
    b = RNG.standard_normal(64).astype(np.float32)
    res = RNG.standard_normal((1, 16, 16, 64)).astype(np.float32)
    assert winograd.choose_tile(1, 16, 16, 64, 64) == 2
    wg = nhwc.prepare_weight(w, 1)
    used = []
    real = winograd.conv3x3
    monkeypatch.setattr(winograd, "conv3x3", lambda *a: used.append(a[2]) or real(*a))
    got = nhwc.conv2d_nhwc(x, wg, b, res, (3, 3), (1, 1), (1, 1), (1, 1), 1, 64, "relu")
    assert used == [2]
    ref = _direct(x, w, b, "relu", res)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5 * np.abs(ref).max())


def test_choice_follows_layer_shape():
    assert winograd.choose_tile(1, 56, 56, 64, 64) == 4           # ResNet stage 1
    assert winograd.choose_tile(1, 14, 14, 256, 256) == 2
    assert winograd.choose_tile(1, 7, 7, 512, 512) == 0           # too few tiles at batch 1
    assert winograd.choose_tile(8, 7, 7, 512, 512) == 2           # enough tiles in a batch
    assert winograd.choose_tile(8, 56, 56, 32, 32) == 0           # narrow: im2col wins


def test_transformed_weight_cache_follows_the_weight():
    wg = RNG.standard_normal((9 * 8, 4)).astype(np.float32)
    u = winograd.from_gemm_weight(wg, 4)
    assert winograd.from_gemm_weight(wg, 4) is u                  # cached
    assert winograd.from_gemm_weight(wg, 2).shape == (16, 8, 4)
    key = id(wg)
    del wg
    gc.collect()
    assert key not in winograd._FROM_GEMM                          # dropped with the weight


@pytest.mark.parametrize("m", [2, 4])
def test_sizes_sharing_a_tile_grid_do_not_share_borders(m):
    """H = 8 and H = 7 have the same tiles; after the larger image, the smaller one's bottom/right
    padding must still be zero (per-thread buffers are reused between calls)."""
    w = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    u = winograd.transform_weight(w, m)
    for H, W in [(8, 8), (7, 7), (8, 7), (7, 8)]:
        x = RNG.standard_normal((1, H, W, 3)).astype(np.float32) + 5
        out = np.empty((1, H, W, 4), np.float32)
        winograd.conv3x3(x, u, m, None, out)
        ref = _direct(x, w, None)
        np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())
