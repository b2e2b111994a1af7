"""The OpenAPI document, completed with what FastAPI cannot see from the routes:

- every error the server can answer, each `{"error": "..."}`: 400 (client mistakes, including
  what FastAPI would call 422), 401 (bearer token, when configured), 404, 413 (body limits),
  503 (queue full / model loading, with Retry-After; a version outside the version policy,
  without), plus 504 on inference and inspection, 403/409 on store writes and 507 (memory
  budget, full disk) on loads and uploads; 405 for DELETE /v2/models/stats;
- the other media types some operations answer with: binary inference responses
  (application/octet-stream), `?format=text` summaries and Prometheus metrics (text/plain);
- the bearer-token security scheme.
"""
from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

_ERROR = {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}}
_REASONS = {400: "Client mistake (bad JSON, shape, dtype, size, model files, ...)",
            401: "Missing or invalid bearer token (when one is configured)",
            403: "The model store is read-only",
            404: "Unknown model, version or route",
            405: "The path takes other methods (`Allow` says which)",
            409: "The version already exists",
            413: "Body, upload or decompressed body over its limit",
            503: "Queue full or model still loading: retry after `Retry-After` seconds",
            504: "Inference did not finish within the time limit",
            507: "No room: loading would take the loaded models over the memory budget, or the "
                 "model store's disk is full"}
_TEXT = {"schema": {"type": "string"}}


def _codes(path: str, method: str) -> list[int]:
    codes = [400, 401, 404, 413, 503]
    if path.endswith(("/infer", "/inspect")):
        codes.append(504)
    if path.startswith("/v2/repository") or method == "delete":
        codes += [403, 409]
    if path.endswith(("/load", "/upload")):
        codes.append(507)
    if path == "/v2/models/{name}" and method == "delete":
        codes.append(405)                   # DELETE /v2/models/stats: a GET-only route
    return codes


def complete(doc: dict[str, Any]) -> dict[str, Any]:
    comps = doc.setdefault("components", {})
    comps.setdefault("schemas", {})["Error"] = _ERROR
    comps.setdefault("securitySchemes", {})["bearer"] = {
        "type": "http", "scheme": "bearer",
        "description": "HYBRIDSERVE_AUTH_TOKEN: needed for management, upload, delete and "
                       "inspection when set; for everything else too with AUTH_INFERENCE"}
    for path, item in doc.get("paths", {}).items():
        for method, op in item.items():
            if not isinstance(op, dict) or "responses" not in op:
                continue
            resp = op["responses"]
            resp.pop("422", None)
            for c in _codes(path, method):
                resp.setdefault(str(c), {"description": _REASONS[c], "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
            ok = resp.get("200") or resp.get("201")
            if ok is None:
                continue
            content = ok.setdefault("content", {})
            if path.endswith("/infer"):
                content["application/octet-stream"] = {
                    "schema": {"type": "string", "format": "binary"}}
            elif path.endswith("/summary"):
                content["text/plain"] = _TEXT
            elif path == "/metrics":
                ok["content"] = {"text/plain": _TEXT}
    return doc


def install(app: FastAPI) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = complete(get_openapi(
                title=app.title, version=app.version, description=app.description,
                routes=app.routes))
        return app.openapi_schema
    app.openapi = openapi  # type: ignore[method-assign]
