"""One exception → status table: each service error's HTTP status and gRPC code, and the one
mapping of any other exception that every transport uses."""
from __future__ import annotations

import logging

import pytest

from framework.base import MXNetError
from service import errors
from service.api.rules import failure

# the gRPC codes by name (grpc.StatusCode members), so service/errors.py needs no grpc
GRPC_CODES = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
              "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
              "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
              "UNAUTHENTICATED"}


def test_the_table():
    assert {name: (http, code) for name, http, code in errors.status_table()} == {
        "ServiceError": (500, "INTERNAL"),
        "BadRequest": (400, "INVALID_ARGUMENT"),
        "Unauthorized": (401, "UNAUTHENTICATED"),
        "Forbidden": (403, "PERMISSION_DENIED"),
        "NotFound": (404, "NOT_FOUND"),
        "MethodNotAllowed": (405, "UNIMPLEMENTED"),
        "Conflict": (409, "ALREADY_EXISTS"),
        "PayloadTooLarge": (413, "RESOURCE_EXHAUSTED"),
        "Internal": (500, "INTERNAL"),
        "Unavailable": (503, "UNAVAILABLE"),
        "Timeout": (504, "DEADLINE_EXCEEDED"),
        "VersionUnavailable": (503, "UNAVAILABLE"),
        "InsufficientStorage": (507, "RESOURCE_EXHAUSTED"),
    }
    assert {code for _, _, code in errors.status_table()} <= GRPC_CODES


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)


def test_mapping_of_other_exceptions():
    e = errors.NotFound("no such model")
    assert errors.to_service_error(e) is e
    bad = errors.to_service_error(MXNetError("node 'fc1' (FullyConnected): bad shape"),
                                  "inference failed")
    assert type(bad) is errors.BadRequest
    assert bad.message == "inference failed: node 'fc1' (FullyConnected): bad shape"
    busy = errors.to_service_error(MemoryError())
    assert type(busy) is errors.Unavailable and busy.headers == {"Retry-After": "1"}
    # (a handler of its own: the server's log setup stops propagation to pytest's)
    log, seen = logging.getLogger("hybridserve.errors"), _Records()
    log.addHandler(seen)
    try:
        bug = errors.to_service_error(KeyError("x"), where="POST /v2/models/m/infer")
    finally:
        log.removeHandler(seen)
    assert type(bug) is errors.Internal and bug.status == 500
    assert "KeyError" in bug.message and isinstance(bug.__cause__, KeyError)
    (rec,) = seen.records                                   # logged once, with its traceback
    assert rec.getMessage() == "unhandled error on POST /v2/models/m/infer" and rec.exc_info


@pytest.mark.parametrize("exc, status", [(errors.Timeout("slow"), 504),
                                         (MXNetError("bad data"), 400),
                                         (MemoryError(), 503),
                                         (RuntimeError("bug"), 500)])
def test_rest_answers_by_the_same_table(exc, status):
    got, message, _ = failure(exc, "POST /x")
    assert got == status == errors.to_service_error(exc).status and message
