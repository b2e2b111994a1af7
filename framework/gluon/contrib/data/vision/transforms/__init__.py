"""`gluon.contrib.data.vision.transforms`: bounding-box augmentations."""
from . import bbox  # noqa: F401
