"""Error raised for every malformed, hostile or unrepresentable parameter file."""
from __future__ import annotations

try:  # the framework-wide base error, when present; io must also work standalone
    from ..base import MXNetError as _Base
except ImportError:  # pragma: no cover - only when framework/base.py is absent
    _Base = None

if _Base is not None:
    class ParamsFormatError(_Base, ValueError):
        """A parameter file (legacy NDArray list, npz or npy) is malformed or unsupported.

        Messages name the file (or ``<bytes>``) and what is wrong: record index,
        key, byte offset or zip member.
        """
else:  # pragma: no cover
    class ParamsFormatError(ValueError):  # type: ignore[no-redef]
        """A parameter file (legacy NDArray list, npz or npy) is malformed or unsupported."""


__all__ = ["ParamsFormatError"]
