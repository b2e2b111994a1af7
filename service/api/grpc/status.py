"""Exceptions → gRPC status, and the bearer-token rule read from call metadata.

Both from the one error table (service/errors.py): `to_service_error` turns any exception into
the ServiceError HTTP would answer (same message; an unexpected one logged there), whose
`grpc_code` names the status.
"""
from __future__ import annotations

import grpc

from ...errors import to_service_error
from ...settings import Settings
from ..rules import authorize


def status_of(e: Exception, where: str) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    """(code, message, headers) of a failed call."""
    err = to_service_error(e, where=where)
    return grpc.StatusCode[err.grpc_code], err.message, err.headers


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
