"""Exceptions → gRPC status, and the bearer-token rule read from call metadata.

The message is HTTP's (rules.failure: a ServiceError's own, a framework error's text, or a
logged internal error); the code is the error class's gRPC code where it declares one
(`grpc_code`, a StatusCode, its name or its number), else the category of its HTTP status.
"""
from __future__ import annotations

import grpc

from ...settings import Settings
from ..rules import authorize, failure

# HTTP status → gRPC code, for error classes that declare no gRPC code of their own
_BY_HTTP = {
    400: grpc.StatusCode.INVALID_ARGUMENT,
    401: grpc.StatusCode.UNAUTHENTICATED,
    403: grpc.StatusCode.PERMISSION_DENIED,
    404: grpc.StatusCode.NOT_FOUND,
    409: grpc.StatusCode.ALREADY_EXISTS,
    413: grpc.StatusCode.RESOURCE_EXHAUSTED,
    503: grpc.StatusCode.UNAVAILABLE,
    504: grpc.StatusCode.DEADLINE_EXCEEDED,
    507: grpc.StatusCode.RESOURCE_EXHAUSTED,
}
_BY_NUMBER = {c.value[0]: c for c in grpc.StatusCode}


def _declared(e: Exception) -> grpc.StatusCode | None:
    code = getattr(e, "grpc_code", None)
    if isinstance(code, grpc.StatusCode):
        return code
    if isinstance(code, str):
        return grpc.StatusCode.__members__.get(code.upper())
    if isinstance(code, int):
        return _BY_NUMBER.get(code)
    return None


def status_of(e: Exception, where: str) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    """(code, message, headers) for a failed call; internal errors are logged once here."""
    http, message, headers = failure(e, where)
    code = _declared(e) or _BY_HTTP.get(http, grpc.StatusCode.INTERNAL)
    return code, message, headers


def check_token(settings: Settings, context: grpc.aio.ServicerContext, *,
                inference: bool) -> None:
    """HTTP's rule (rules.authorize) on the `authorization` metadata of the call."""
    if settings.auth_token is None:
        return
    got = None
    for k, v in context.invocation_metadata() or ():
        if k == "authorization":
            got = v.encode("latin-1") if isinstance(v, str) else v
            break
    authorize(settings, got, inference=inference)
