"""The web console: `/ui` (one page, hash-routed), its static assets, and one overview call.

Assets are committed plain HTML/CSS/ES modules in `service/api/static/` (no build step, nothing
fetched from outside at run time). The page itself needs no token; every API call it makes
sends the bearer token the user typed (kept in the tab's sessionStorage).

`GET /ui/api/overview` gathers what the models page needs and the protocol endpoints don't
carry: per version its state and error, load time, load timestamp, parameter count, FLOPs,
signature, batching config and the memory it holds, plus the memory budget and whether the
server wants a token.
"""
from __future__ import annotations

import mimetypes
from pathlib import Path

from fastapi import APIRouter, Depends, Request
from fastapi.responses import FileResponse, RedirectResponse

from ...errors import NotFound
from ...runtime.memory import rss_bytes
from ._common import core_of, json_response, require_reader
from .graph import graph_doc

STATIC = Path(__file__).resolve().parent.parent / "static"
_TYPES = {".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8",
          ".css": "text/css; charset=utf-8", ".html": "text/html; charset=utf-8",
          ".svg": "image/svg+xml", ".json": "application/json", ".png": "image/png",
          ".ico": "image/x-icon", ".woff2": "font/woff2"}
# the console talks only to its own origin and loads nothing from elsewhere
_CSP = ("default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
        "form-action 'self'")
_HEADERS = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer"}

router = APIRouter(tags=["console"])


@router.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
async def root_redirect():
    # a browser pointed at the server gets the console; the API root stays /v2
    return RedirectResponse("ui/", status_code=307)


@router.api_route("/ui", methods=["GET", "HEAD"], include_in_schema=False)
async def ui_redirect():
    # the page lives at /ui/ so that its relative asset and API URLs work behind a path prefix
    return RedirectResponse("ui/", status_code=307)


@router.api_route("/ui/", methods=["GET", "HEAD"], include_in_schema=False)
async def ui_index():
    if not (STATIC / "index.html").is_file():
        raise NotFound("the web console's assets (service/api/static/) are not part of this install")
    return FileResponse(STATIC / "index.html", media_type=_TYPES[".html"],
                        headers={**_HEADERS, "Content-Security-Policy": _CSP})


@router.api_route("/ui/static/{path:path}", methods=["GET", "HEAD"], include_in_schema=False)
async def ui_static(path: str):
    root = STATIC.resolve()
    target = (root / path).resolve()
    if root not in target.parents or not target.is_file() or any(
            part.startswith(".") for part in Path(path).parts):
        raise NotFound(f"no console asset '{path}'")
    media = _TYPES.get(target.suffix.lower()) or mimetypes.guess_type(target.name)[0] \
        or "application/octet-stream"
    return FileResponse(target, media_type=media, headers=_HEADERS)


async def _version_doc(mv) -> dict:
    doc = {"version": mv.version, "state": mv.state.value, "reason": mv.reason,
           "loaded_at": mv.loaded_at}
    r = mv.runner
    if r is None:
        return doc
    cfg = r.config
    db = cfg.dynamic_batching
    doc.update({
        "load_seconds": r.load_seconds, "warm": r.warm, "platform": cfg.platform,
        "memory_bytes": mv.memory,
        "engine": r.engine.parameters(),
        "inputs": [s.public() for s in r.inputs], "outputs": [s.public() for s in r.outputs],
        "max_batch_size": r.max_batch_size,
        "dynamic_batching": None if db is None else {
            "max_queue_delay_microseconds": db.max_queue_delay_microseconds,
            "preferred_batch_size": list(db.preferred_batch_size)},
        "description": cfg.description,
        "quantization": r.quantization or None})
    doc.update({"total_params": None, "op_count": None, "flops": None})
    # the graph reads parameter sizes off the loaded arrays, so it has them even where the
    # summary's shape inference at 1x1 free dims gives up (both from the model's graph facts)
    g = await graph_doc(r)
    doc.update({"total_params": g["total_params"], "op_count": g["op_count"]})
    s = r.summary(1)
    if s["flops_complete"] and s["flops"]:
        doc["flops"] = s["flops"]
    return doc


@router.get("/ui/api/overview", dependencies=[Depends(require_reader)],
            summary="Console overview: every model version with state, load time, params")
async def overview(request: Request):
    core = core_of(request)
    reg = core.registry
    models: dict[str, dict] = {}
    for row in reg.index():
        m = models.setdefault(row["name"], {"name": row["name"], "versions": []})
        mv = reg.models.get(row["name"], {}).get(row["version"])
        if mv is None:
            m["versions"].append({"version": row["version"], "state": row["state"],
                                  "reason": row["reason"]})
        else:
            m["versions"].append(await _version_doc(mv))
    s = core.settings
    return json_response({
        "server": s.server_name,
        "auth": {"admin": s.auth_token is not None,
                 "inference": s.auth_token is not None and s.auth_inference},
        "memory": {"budget_bytes": reg.budget, "held_bytes": reg.memory_held(),
                   "resident_bytes": rss_bytes()},
        "models": list(models.values())})
