"""Service errors: each carries its HTTP status so the web layer maps them without guessing."""
from __future__ import annotations


class ServiceError(Exception):
    status: int = 500

    def __init__(self, message: str, *, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.message = message
        self.headers = headers or {}


class BadRequest(ServiceError):
    status = 400


class Unauthorized(ServiceError):
    status = 401


class Forbidden(ServiceError):
    """Refused whoever asks (e.g. writes to a read-only model store)."""
    status = 403


class NotFound(ServiceError):
    status = 404


class MethodNotAllowed(ServiceError):
    """A path that exists, asked with a method it does not take (e.g. DELETE /v2/models/stats,
    which the model route would otherwise read as a model name)."""
    status = 405


class Conflict(ServiceError):
    status = 409


class PayloadTooLarge(ServiceError):
    status = 413


class Unavailable(ServiceError):
    """Overload or not-ready: clients should retry later (503 + Retry-After)."""
    status = 503

    def __init__(self, message: str, retry_after: float = 1.0):
        super().__init__(message, headers={"Retry-After": str(max(1, int(round(retry_after))))})


class Timeout(ServiceError):
    status = 504


class VersionUnavailable(ServiceError):
    """A version the store holds but does not serve (outside the model's version policy):
    Triton's UNAVAILABLE, which it answers with 503 and no Retry-After (it will not become
    ready by waiting)."""
    status = 503


class InsufficientStorage(ServiceError):
    """No room for what was asked (RFC 4918's 507): a load that would take the loaded models
    over the memory budget (refused before it can make the server swap or die), or a write to
    the model store that found its disk or quota full (ENOSPC/EDQUOT: nothing is left
    half-written, the same request succeeds once space is freed)."""
    status = 507
