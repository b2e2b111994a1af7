"""`mxnet.base`: the framework's error types plus the tiny helpers tests import from here."""
from framework.base import *  # noqa: F401,F403
from framework.base import MXNetError, NotImplementedForSymbol  # noqa: F401


def py_str(x):
    return x.decode("utf-8") if isinstance(x, bytes) else str(x)
