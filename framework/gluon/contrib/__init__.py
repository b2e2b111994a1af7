"""`gluon.contrib`: MXNet 2's contributed Gluon pieces hybridserve provides (data transforms)."""
from . import data  # noqa: F401
