"""nn.DeformableConvolution / nn.ModulatedDeformableConvolution: with zero offsets (a fresh layer)
they are ordinary convolutions; masks scale the samples; they hybridize and export."""
import numpy as onp
import pytest

import framework as mx
from framework.gluon import nn


@pytest.mark.parametrize("cls", [nn.DeformableConvolution, nn.ModulatedDeformableConvolution])
def test_fresh_layer_is_a_convolution(cls):
    x = mx.np.random.uniform(size=(2, 4, 9, 8))
    dcn = cls(6, kernel_size=(3, 3), padding=(1, 1), strides=(2, 2), groups=2,
              num_deformable_group=2, activation="relu")
    conv = nn.Conv2D(6, kernel_size=3, padding=1, strides=2, groups=2, activation="relu")
    dcn.initialize()
    conv.initialize()
    dcn(x)
    conv(x)
    conv.weight.set_data(dcn.deformable_conv_weight.data())
    conv.bias.set_data(dcn.deformable_conv_bias.data())
    want = conv(x).asnumpy()
    onp.testing.assert_allclose(dcn(x).asnumpy(), want, rtol=1e-5, atol=1e-6)
    dcn.hybridize()
    onp.testing.assert_allclose(dcn(x).asnumpy(), want, rtol=1e-5, atol=1e-6)
    # 2 deformable groups × 9 taps × (dy, dx), and for v2 one mask per tap and group
    n_offset = 54 if cls is nn.ModulatedDeformableConvolution else 36
    assert dcn.offset_weight.shape == (n_offset, 2, 3, 3)


def test_parameter_shapes_and_masks():
    layer = nn.ModulatedDeformableConvolution(6, kernel_size=(3, 2), num_deformable_group=2,
                                              use_bias=False, offset_bias_initializer=mx.init.Constant(-50))
    layer.initialize()
    out = layer(mx.np.ones((1, 4, 6, 6)))
    assert layer.deformable_conv_weight.shape == (6, 4, 3, 2)
    assert layer.offset_weight.shape == (2 * 3 * 3 * 2, 4, 3, 2)   # 2 offsets + 1 mask per tap
    # a bias of -50 makes every offset -50 (off the image) and every mask 2·sigmoid(-50) ≈ 0
    assert out.shape == (1, 6, 4, 5) and onp.abs(out.asnumpy()).max() < 1e-6
    with pytest.raises(ValueError, match="NCHW"):
        nn.DeformableConvolution(4, kernel_size=3, layout="NHWC")
    # MXNet's shape rule: v2's filters split over the deformable groups
    bad = nn.ModulatedDeformableConvolution(5, kernel_size=(3, 2), num_deformable_group=2)
    bad.initialize()
    with pytest.raises(mx.base.ShapeError, match="5 filters must divide"):
        bad(mx.np.ones((1, 4, 6, 6)))
