"""`gluon.contrib.data`."""
from . import vision  # noqa: F401
