"""nn.PixelShuffle1D/2D/3D against the NumPy reshape/transpose definition, imperative and
hybridized (the traced graph keeps batch and spatial sizes free)."""
from __future__ import annotations

import numpy as onp
import pytest

from framework import np
from framework.gluon import nn


def _reference(x, factors):
    n = len(factors)
    N, C = x.shape[0], x.shape[1] // int(onp.prod(factors))
    spatial = x.shape[2:]
    y = x.reshape((N, C) + tuple(factors) + spatial)
    perm = (0, 1) + tuple(a for k in range(n) for a in (2 + n + k, 2 + k))
    return y.transpose(perm).reshape((N, C) + tuple(s * f for s, f in zip(spatial, factors)))


@pytest.mark.parametrize("layer,factors,shape", [
    (nn.PixelShuffle1D, (2,), (2, 8, 3)),
    (nn.PixelShuffle2D, (2, 3), (2, 12, 3, 4)),
    (nn.PixelShuffle3D, (2, 1, 3), (1, 12, 2, 3, 2)),
])
@pytest.mark.parametrize("hybridize", [False, True])
def test_pixel_shuffle_matches_reference(layer, factors, shape, hybridize):
    x = onp.random.rand(*shape).astype(onp.float32)
    blk = layer(factors if len(factors) > 1 else factors[0])
    if hybridize:
        blk.hybridize()
    onp.testing.assert_array_equal(blk(np.array(x)).asnumpy(), _reference(x, factors))
    if hybridize:      # a second batch size reuses the graph
        x2 = onp.random.rand(3, *shape[1:]).astype(onp.float32)
        onp.testing.assert_array_equal(blk(np.array(x2)).asnumpy(), _reference(x2, factors))


def test_pixel_shuffle_rejects_wrong_factor_count():
    with pytest.raises(ValueError, match="expected 2 factors"):
        nn.PixelShuffle2D((2, 2, 2))
