"""`framework.np`: MXNet's `mxnet.numpy` front-end on NumPy.

Every computing function goes through the operator registry (`framework.dispatch.invoke`), so
the same call runs imperatively and is recorded, with MXNet 2.x's op names and attributes, while
a HybridBlock is traced. Creating arrays from Python data (`np.array([...])`) is not an op.
"""
from __future__ import annotations

import sys as _sys

import numpy as _onp

from .. import frontend as _frontend
from ..base import BFLOAT16 as _BFLOAT16
from ..ndarray import ndarray
from . import fallback, fallback_linalg, linalg, random  # noqa: F401
from ._base import as_nd
from ._array_api import *  # noqa: F401,F403
from ._array_api import __all__ as _a_all
from ._creation import *  # noqa: F401,F403
from ._creation import __all__ as _c_all
from ._editing import *  # noqa: F401,F403
from ._editing import __all__ as _e_all
from ._index import _getitem, _inplace, _setitem  # noqa: F401
from ._math import *  # noqa: F401,F403
from ._math import __all__ as _m_all
from ._methods import bind as _bind_methods
from ._products import *  # noqa: F401,F403
from ._products import __all__ as _p_all
from ._reduce import *  # noqa: F401,F403
from ._reduce import __all__ as _r_all
from ._shape import *  # noqa: F401,F403
from ._shape import __all__ as _s_all

# dtypes (NumPy's scalar types, so `x.dtype == np.float32` works)
float16 = _onp.float16
float32 = _onp.float32
float64 = _onp.float64
bfloat16 = _BFLOAT16  # MXNet's structured dtype (files, flag 12); held as float32
int8 = _onp.int8
int16 = _onp.int16
int32 = _onp.int32
int64 = _onp.int64
uint8 = _onp.uint8
uint16 = _onp.uint16
uint32 = _onp.uint32
uint64 = _onp.uint64
bool_ = _onp.bool_
bool = _onp.bool_  # noqa: A001
dtype = _onp.dtype
generic = _onp.generic
number = _onp.number
integer = _onp.integer
floating = _onp.floating
signedinteger = _onp.signedinteger
unsignedinteger = _onp.unsignedinteger
finfo = _onp.finfo
iinfo = _onp.iinfo
issubdtype = _onp.issubdtype
result_type = _onp.result_type
can_cast = _onp.can_cast

# MXNet 2's dtype groups (mxnet.numpy.utils)
integer_dtypes = [int8, int16, int32, int64, uint8, uint16, uint32, uint64]
floating_dtypes = [float16, float32, float64]
numeric_dtypes = [*integer_dtypes, *floating_dtypes]
boolean_dtypes = [bool_]

pi = _onp.pi
e = _onp.e
inf = _onp.inf
nan = _onp.nan
PZERO = 0.0
NZERO = -0.0
euler_gamma = _onp.euler_gamma
newaxis = None
NINF = -_onp.inf
PINF = _onp.inf

set_printoptions = _onp.set_printoptions
get_printoptions = _onp.get_printoptions

__all__ = (["ndarray", "linalg", "random", "pi", "e", "inf", "nan", "newaxis", "dtype",
            "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
            "bool_", "bool", "finfo", "iinfo", "issubdtype", "result_type"]
           + list(_a_all) + list(_c_all) + list(_e_all) + list(_m_all) + list(_p_all) + list(_r_all) + list(_s_all))
# the functions that only call their op (np.tril, np.diagonal, …) come from the registry
__all__ += _frontend.install("np", globals(), as_nd)


def shares_memory(a, b, max_work=None):
    return _onp.shares_memory(a._data, b._data)


may_share_memory = shares_memory


def isscalar(x):
    return _onp.isscalar(x)


def array_equal(a1, a2, equal_nan=False):
    return _onp.array_equal(as_nd(a1)._data, as_nd(a2)._data, equal_nan=equal_nan)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _onp.allclose(as_nd(a)._data, as_nd(b)._data, rtol=rtol, atol=atol,
                         equal_nan=equal_nan)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return ndarray(_onp.isclose(as_nd(a)._data, as_nd(b)._data, rtol=rtol, atol=atol,
                                equal_nan=equal_nan))


# MXNet's fallback set: names this front end does not define itself are NumPy's own
for _n in fallback.__all__:
    if not _n.startswith("_") and _n not in globals():
        globals()[_n] = getattr(fallback, _n)
for _n in fallback_linalg.__all__:
    if not hasattr(linalg, _n):
        setattr(linalg, _n, getattr(fallback_linalg, _n))

_bind_methods(globals())     # ndarray's operators call the functions defined above
ndarray._namespace = _sys.modules[__name__]     # ndarray.__array_namespace__
