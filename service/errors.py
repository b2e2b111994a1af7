"""Service errors, and the one table that turns them into a transport's status.

Each class carries its HTTP status (`status`) and its gRPC status code (`grpc_code`, the name
of a `grpc.StatusCode` member, so this module needs no grpc). Routers, the data plane, the
runner and the loaders raise these; only a transport turns one into a status, and any other
exception becomes one through `to_service_error` (the same call in every transport).

| class               | HTTP | gRPC                |
|---------------------|------|---------------------|
| BadRequest          | 400  | INVALID_ARGUMENT    |
| Unauthorized        | 401  | UNAUTHENTICATED     |
| Forbidden           | 403  | PERMISSION_DENIED   |
| NotFound            | 404  | NOT_FOUND           |
| Conflict            | 409  | ALREADY_EXISTS      |
| PayloadTooLarge     | 413  | RESOURCE_EXHAUSTED  |
| Internal            | 500  | INTERNAL            |
| Unavailable         | 503  | UNAVAILABLE         |
| VersionUnavailable  | 503  | UNAVAILABLE         |
| Timeout             | 504  | DEADLINE_EXCEEDED   |
| InsufficientStorage | 507  | RESOURCE_EXHAUSTED  |
"""
from __future__ import annotations

import logging

from framework.base import MXNetError

log = logging.getLogger("hybridserve.errors")


class ServiceError(Exception):
    status: int = 500
    grpc_code: str = "INTERNAL"

    def __init__(self, message: str, *, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.message = message
        self.headers = headers or {}


class BadRequest(ServiceError):
    status, grpc_code = 400, "INVALID_ARGUMENT"


class Unauthorized(ServiceError):
    status, grpc_code = 401, "UNAUTHENTICATED"


class Forbidden(ServiceError):
    """Refused whoever asks (e.g. writes to a read-only model store)."""
    status, grpc_code = 403, "PERMISSION_DENIED"


class NotFound(ServiceError):
    status, grpc_code = 404, "NOT_FOUND"


class MethodNotAllowed(ServiceError):
    """A path that exists, asked with a method it does not take (e.g. DELETE /v2/models/stats,
    which the model route would otherwise read as a model name)."""
    status, grpc_code = 405, "UNIMPLEMENTED"


class Conflict(ServiceError):
    """The thing to create exists already (e.g. an upload to a version the store holds)."""
    status, grpc_code = 409, "ALREADY_EXISTS"


class PayloadTooLarge(ServiceError):
    status, grpc_code = 413, "RESOURCE_EXHAUSTED"


class Internal(ServiceError):
    """A failure of the server itself (a bug): logged with its traceback where it is made."""
    status, grpc_code = 500, "INTERNAL"


class Unavailable(ServiceError):
    """Overload or not-ready: clients should retry later (503 + Retry-After)."""
    status, grpc_code = 503, "UNAVAILABLE"

    def __init__(self, message: str, retry_after: float = 1.0):
        super().__init__(message, headers={"Retry-After": str(max(1, int(round(retry_after))))})


class Timeout(ServiceError):
    status, grpc_code = 504, "DEADLINE_EXCEEDED"


class VersionUnavailable(ServiceError):
    """A version the store holds but does not serve (outside the model's version policy):
    Triton's UNAVAILABLE, which it answers with 503 and no Retry-After (it will not become
    ready by waiting)."""
    status, grpc_code = 503, "UNAVAILABLE"


class InsufficientStorage(ServiceError):
    """No room for what was asked (RFC 4918's 507): a load that would take the loaded models
    over the memory budget (refused before it can make the server swap or die), or a write to
    the model store that found its disk or quota full (ENOSPC/EDQUOT: nothing is left
    half-written, the same request succeeds once space is freed)."""
    status, grpc_code = 507, "RESOURCE_EXHAUSTED"


def to_service_error(e: BaseException, what: str = "", where: str = "") -> ServiceError:
    """Any exception as the ServiceError a client is answered with: a ServiceError is itself;
    a framework error raised while running a request is caused by the request's data or model
    (400); running out of memory is overload (503, retry later); anything else is our bug
    (500, logged here with its traceback). `what` ("inference failed") prefixes the message
    of a mapped error; `where` ("POST /v2/...") names the place in the log."""
    if isinstance(e, ServiceError):
        return e
    if isinstance(e, MXNetError):
        err: ServiceError = BadRequest(f"{what}: {e}"[:2000] if what else str(e)[:2000])
    elif isinstance(e, MemoryError):
        err = Unavailable(f"{what or 'request failed'}: not enough memory for this request now")
    else:
        log.error("unhandled error%s", f" on {where}" if where else "", exc_info=e)
        err = Internal(f"internal server error: {type(e).__name__}: {e}"[:2000])
    err.__cause__ = e
    return err


def status_table() -> list[tuple[str, int, str]]:
    """(class name, HTTP status, gRPC code) of every service error, for docs and tests."""
    seen, todo = [], [ServiceError]
    while todo:
        cls = todo.pop(0)
        if cls.__module__ == __name__:          # not the subclasses other modules derive
            seen.append((cls.__name__, cls.status, cls.grpc_code))
        todo.extend(cls.__subclasses__())
    return seen
