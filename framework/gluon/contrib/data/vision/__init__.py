"""`gluon.contrib.data.vision`."""
from . import transforms  # noqa: F401
