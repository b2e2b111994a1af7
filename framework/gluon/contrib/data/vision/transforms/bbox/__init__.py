"""`gluon.contrib.data.vision.transforms.bbox`: image + bounding-box transforms and helpers."""
from .bbox import (ImageBboxCrop, ImageBboxRandomExpand,  # noqa: F401
                   ImageBboxRandomFlipLeftRight, ImageBboxResize)
from .utils import bbox_crop, bbox_flip, bbox_resize, bbox_translate  # noqa: F401
