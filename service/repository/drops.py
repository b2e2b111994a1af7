"""Archives dropped into a model store (`<store>/<file>.mar`) and the record of which were
imported (`.mar-imported.json`: file name → identity and outcome).

A store lists its dropped archives with an identity that changes when the file is replaced
(a directory: size and mtime; a bucket: ETag and size) and updates the record atomically
(a directory: under its lock; a bucket: a conditional write, as the manifest). Claiming an
archive in the record before importing it is what makes one replica of many import it.
"""
from __future__ import annotations

from typing import Callable

import orjson

RECORD = ".mar-imported.json"
Record = dict[str, dict]


def parse_record(data: bytes | None) -> Record:
    """The record from its bytes; anything unreadable is an empty record (archives are then
    imported again, which is safe: an unchanged archive becomes an identical new version)."""
    try:
        doc = orjson.loads(data) if data else {}
    except orjson.JSONDecodeError:
        doc = {}
    return doc if isinstance(doc, dict) else {}


def record_bytes(record: Record) -> bytes:
    return orjson.dumps(record, option=orjson.OPT_INDENT_2)


def claim_change(found: dict[str, list]) -> tuple[Callable[[Record], Record | None], list[str]]:
    """A record change claiming each archive of `found` (name → identity) not yet imported in
    its current form, and the list it fills with the names claimed."""
    mine: list[str] = []

    def change(record: Record) -> Record | None:
        mine.clear()
        for name, ident in sorted(found.items()):
            if (record.get(name) or {}).get("ident") != ident:
                record[name] = {"ident": ident, "state": "importing"}
                mine.append(name)
        return record if mine else None
    return change, mine


def note_change(name: str, outcome: dict) -> Callable[[Record], Record]:
    def change(record: Record) -> Record:
        record[name] = (record.get(name) or {}) | outcome
        return record
    return change
