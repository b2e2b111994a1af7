"""Structured logs: one JSON object per line (or plain text with log_json=False)."""
from __future__ import annotations

import logging
import sys
import time

import orjson


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        doc = {"ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
               + f".{int(record.msecs):03d}Z",
               "level": record.levelname.lower(), "logger": record.name,
               "msg": record.getMessage()}
        if record.exc_info:
            doc["exc"] = self.formatException(record.exc_info)
        for k in ("model", "version", "status", "path"):
            if hasattr(record, k):
                doc[k] = getattr(record, k)
        return orjson.dumps(doc, default=str).decode()


def configure(level: str = "info", json_lines: bool = True) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if json_lines else
                         logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    for name in ("hybridserve", "uvicorn", "uvicorn.error", "uvicorn.access"):
        lg = logging.getLogger(name)
        lg.handlers[:] = [handler]
        lg.propagate = False
        lg.setLevel(level.upper())


def uvicorn_log_config(level: str, json_lines: bool) -> dict:
    """uvicorn's dictConfig in the same format, so its lines are JSON too."""
    fmt = {"()": "service.logs.JsonFormatter"} if json_lines else {
        "format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}
    return {"version": 1, "disable_existing_loggers": False,
            "formatters": {"default": fmt},
            "handlers": {"default": {"class": "logging.StreamHandler", "formatter": "default",
                                     "stream": "ext://sys.stderr"}},
            "loggers": {n: {"handlers": ["default"], "level": level.upper(), "propagate": False}
                        for n in ("hybridserve", "uvicorn", "uvicorn.error", "uvicorn.access")}}
