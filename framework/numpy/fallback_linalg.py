"""`np.fallback_linalg`: the `np.linalg` functions MXNet 2 serves with NumPy's own."""
import numpy as _onp

__all__ = ["cond", "matrix_power", "multi_dot"]

cond = _onp.linalg.cond
matrix_power = _onp.linalg.matrix_power
multi_dot = _onp.linalg.multi_dot
