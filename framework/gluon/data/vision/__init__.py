"""`gluon.data.vision`: image transforms (datasets that download, such as MNIST, are not part of
hybridserve: it never fetches data)."""
from . import transforms  # noqa: F401
