"""Errors and small shared helpers used across the framework."""
from __future__ import annotations


class MXNetError(RuntimeError):
    """Base error of the framework (MXNet's name, so user code catching it keeps working)."""


class DeferredInitializationError(MXNetError):
    """Raised when a parameter's data is read before its deferred initialisation ran."""


class OperatorError(MXNetError, ValueError):
    """An operator was given inputs or attributes it cannot work with."""


class GraphFormatError(MXNetError, ValueError):
    """A symbol graph (JSON or in memory) is malformed: unknown op, bad reference, cycle, limits."""


class LegacyExportError(GraphFormatError):
    """The graph uses something MXNet 1.9.1 cannot express (`export(..., format='1.x')`)."""


class ShapeError(OperatorError):
    """Input shapes do not fit an operator or a compiled signature."""


def brief_list(names, limit: int = 7) -> str:
    """MXNet's `_brief_print_list`: quoted names, elided in the middle past `limit`."""
    names = list(names)
    if len(names) > limit:
        return ", ".join(f"'{n}'" for n in names[: limit // 2]) + ", ..., " + \
            ", ".join(f"'{n}'" for n in names[-limit // 2:])
    return ", ".join(f"'{n}'" for n in names)


class NotImplementedForSymbol(MXNetError):
    """An array-only operation (truth value, `asnumpy`…) was asked of a Symbol."""
