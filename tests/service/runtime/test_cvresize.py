"""runtime/cvresize.py equals OpenCV's INTER_CUBIC as MXNet 1.9.1 ran it (`imresize(interp=2)`,
recorded by tests/interop/make_mar_fixtures.py) when shrinking, growing and at odd ratios."""
from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from fixture_util import FIXTURES
from service.runtime.cvresize import resize_cubic

REF = np.load(FIXTURES / "mar" / "reference.npz")


@pytest.mark.parametrize("w, h", [(5, 7), (31, 23), (17, 6)])
def test_resize_cubic_matches_opencv(w, h):
    src = Image.fromarray(REF["cubic_src"])
    got = np.asarray(resize_cubic(src, (w, h))).astype(int)
    want = REF[f"cubic_{w}x{h}"].astype(int)
    assert got.shape == want.shape == (h, w, 3)
    np.testing.assert_array_equal(got, want)          # bit for bit: OpenCV's fixed point


def test_resize_cubic_grey_is_the_one_channel():
    grey = Image.fromarray(REF["cubic_src"][..., 0])
    np.testing.assert_array_equal(np.asarray(resize_cubic(grey, (31, 23))),
                                  REF["cubic_31x23"][..., 0])
