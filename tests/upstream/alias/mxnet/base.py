"""`mxnet.base`: the framework's error types plus the tiny helpers tests import from here."""
import numpy as np

from framework.base import *  # noqa: F401,F403
from framework.base import MXNetError, NotImplementedForSymbol  # noqa: F401


def py_str(x):
    return x.decode("utf-8") if isinstance(x, bytes) else str(x)


# MXNet's Python type groups (mxnet.base)
integer_types = (int, np.integer)
numeric_types = (float, int, np.generic)
string_types = (str,)
